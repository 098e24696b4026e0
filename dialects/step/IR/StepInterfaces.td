//===- StepInterfaces.td - op interfaces of `step` ---------*- tablegen -*-===//
#ifndef STEP_INTERFACES_TD
#define STEP_INTERFACES_TD

include "mlir/IR/OpBase.td"

// Ops that declare a named, user-visible tensor of the model: parameters and inputs. The model
// verifier uses it for name uniqueness; `--batch` uses it to find the shapes to rewrite.
def Step_DeclOpInterface : OpInterface<"DeclOpInterface"> {
  let cppNamespace = "::stepc::step";
  let description = [{
    A declaration of a named model tensor whose shape is written in the model file.
  }];
  let methods = [
    InterfaceMethod<"The full name, unique among declarations of its kind in a model.",
      "std::string", "getDeclName">,
    InterfaceMethod<"The shape and dtype written in the model file.",
      "::mlir::RankedTensorType", "getDeclaredType">,
  ];
}

// Ops whose vector-Jacobian product can be written in step ops. Implementations are external
// models attached by compiler/Autodiff (registerVjpModels), so the dialect stays free of
// autodiff code.
def Step_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::stepc::step";
  let description = [{
    Builds the vector-Jacobian product of an op: given the adjoints of its results, emits step
    ops computing the adjoints of its operands.
  }];
  let methods = [
    InterfaceMethod<[{
        Emits, at the builder's insertion point, the adjoints of the operands. `resultGrads`
        holds one value per result, null where the result has no adjoint (it is zero).
        `operandGrads` receives one value per operand, null where the operand gets no
        gradient (integer operands). Fails, with an error at the op, where the op has no
        gradient for these attributes.
      }],
      "::llvm::LogicalResult", "buildVjp",
      (ins "::mlir::OpBuilder &":$builder, "::llvm::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

// Ops that draw per-step random numbers (dropout's masks, the router's jitter): a Philox
// function of (seed, step counter, element index). The train step gives each one its step
// counter (distinct per micro-batch and per layer); evaluation and sampling are inference and
// replace each by its input. One interface, so every such place handles every such op.
def Step_StochasticOpInterface : OpInterface<"StochasticOpInterface"> {
  let cppNamespace = "::stepc::step";
  let description = [{
    A training-time random elementwise op whose randomness is keyed by a step counter operand.
  }];
  let methods = [
    InterfaceMethod<"The tensor the op perturbs (what inference uses in its place).",
      "::mlir::Value", "getInput">,
    InterfaceMethod<"The step counter operand (tensor<i64>), null where none is given.",
      "::mlir::Value", "getStep">,
    InterfaceMethod<"Sets the step counter operand.", "void", "setStep",
      (ins "::mlir::Value":$step), [{}], [{ $_op.getStepMutable().assign(step); }]>,
  ];
}

#endif // STEP_INTERFACES_TD
