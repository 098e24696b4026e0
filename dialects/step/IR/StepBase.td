//===- StepBase.td - the `step` dialect --------------------*- tablegen -*-===//
//
// The graph IR users write models in. A model is a `step.model` holding parameter and input
// declarations (the only places shapes are written), a graph of tensor ops whose result types are
// inferred, one `step.loss`, and an optional `step.config` with the training configuration.
//
//===----------------------------------------------------------------------===//
#ifndef STEP_BASE_TD
#define STEP_BASE_TD

include "mlir/IR/OpBase.td"

def Step_Dialect : Dialect {
  let name = "step";
  let cppNamespace = "::stepc::step";
  let summary = "Static-shaped tensor graph IR for whole training steps";
  let description = [{
    The `step` dialect is the graph IR of stepc. Ops work on ranked, static-shaped builtin
    tensors of f32, bf16, f16, f64, i32, i64 (and i1 for masks). Result types are inferred from
    operands and attributes, so a model file writes shapes only on `step.param` and
    `step.input`; inside a `step.model` the printer omits types and the parser recovers them.
    Outside a model (for example in the `train` stage) every op prints its types.
  }];
  // Inherent attributes stay in the attribute dictionary: model files spell them as `{...}` and
  // shape inference reads them before an operation exists.
  let usePropertiesForAttributes = 0;
  let extraClassDeclaration = [{
    /// Dialect attribute on the module naming the stage the IR is at (`model`, `train`, ...).
    static constexpr ::llvm::StringLiteral kStageAttrName = "step.stage";
  }];
}

class Step_Op<string mnemonic, list<Trait> traits = []> :
    Op<Step_Dialect, mnemonic, traits>;

#endif // STEP_BASE_TD
