//===- StepOps.td - operations of the `step` dialect -------*- tablegen -*-===//
//
// Structure ops (model, param, input, loss, config, repeat, yield) and tensor ops. Every tensor op
// infers its result types (InferTypeOpAdaptor; the rules are in ShapeRules.cpp) and shares one
// assembly form, `%r = step.op %a, %b {attrs} [: operand-types [-> result-types]]`, implemented in
// StepAsm.cpp. Inside a `step.model` the types are omitted and recovered while parsing.
//
//===----------------------------------------------------------------------===//
#ifndef STEP_OPS_TD
#define STEP_OPS_TD

include "StepBase.td"
include "StepTypes.td"
include "StepAttrs.td"
include "StepInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

def Step_ModelOp : Step_Op<"model", [IsolatedFromAbove, Symbol, SymbolTable, SingleBlock,
                                     NoTerminator, HasParent<"::mlir::ModuleOp">]> {
  let summary = "a model: declarations, the forward graph, the loss and the training config";
  let description = [{
    Holds one model. Its body declares parameters (`step.param`) and inputs (`step.input`), the
    only places where shapes are written, computes a scalar loss marked by `step.loss`, and may
    carry a `step.config`. Named dimensions declared with `dims(...)` can be used in those
    shapes and as repeat counts, so a width, the batch or the sequence length is one edit.

    ```mlir
    step.model @mlp dims(B = 32, D = 64, H = 128, C = 10) {
      %x, %y = step.input "data" [B, D] f32 = classification(classes = 10)
      %w = step.param "w" [D, C] f32 = normal(std = 0.02)
      %logits = step.matmul %x, %w
      %loss = step.cross_entropy %logits, %y
      step.loss %loss
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, OptionalAttr<DictionaryAttr>:$dims);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The op marking the loss, or null when the model has none.
    LossOp getLossOp();
    /// The training configuration, or null when the model has none.
    ConfigOp getConfigOp();
  }];
}

def Step_ParamOp : Step_Op<"param", [Pure, DeclareOpInterfaceMethods<Step_DeclOpInterface>,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "declares a trainable parameter with its shape, dtype and initialiser";
  let description = [{
    Declares a parameter. The shape is a list of sizes or named dims (products and sums of them
    are allowed); the initialiser is one of `zeros`, `ones`, `constant(value = v)`,
    `normal(std = s[, mean = m])`, `uniform(a = lo, b = hi)`, `orthogonal`, each taking an
    optional `gain`. Inside a `step.repeat` the parameter is per layer: its storage is stacked
    on a leading axis of the repeat count and its full name is `<repeat>.<name>`.

    ```mlir
    %w0 = step.param "w0" [F, 3 * I] f32 = orthogonal(gain = 1.6967)
    ```
  }];
  let arguments = (ins StrAttr:$name, TypeAttrOf<Step_Tensor>:$type, Step_SpecAttr:$init);
  let results = (outs Step_Tensor:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The storage type: the declared type with one leading axis per enclosing repeat.
    ::mlir::RankedTensorType getStoredType();
  }];
}

def Step_InputOp : Step_Op<"input", [Pure, DeclareOpInterfaceMethods<Step_DeclOpInterface>,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "declares a batch input and where its data comes from";
  let description = [{
    Declares one input stream. The declared shape is the shape of the first result; the source
    decides the results:
    - `token_stream(vocab = V)`: windows of a token stream; results are the tokens and the
      next-token targets, both of the declared integer type `[B, S]`.
    - `classification(classes = C)`: a built-in generated classification set; results are the
      features (the declared float type `[B, ...]`) and the labels `[B]` of i32.

    ```mlir
    %tokens, %targets = step.input "bytes" [B, S] i32 = token_stream(vocab = 256)
    ```
  }];
  let arguments = (ins StrAttr:$name, TypeAttrOf<Step_Tensor>:$type, Step_SpecAttr:$source);
  let results = (outs Variadic<Step_Tensor>:$results);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Step_LossOp : Step_Op<"loss", [HasParent<"ModelOp">]> {
  let summary = "marks the scalar training loss of a model";
  let description = [{
    Marks the value the training step minimises. Exactly one per model; the operand is a
    rank-0 float tensor.

    ```mlir
    step.loss %loss
    ```
  }];
  let arguments = (ins AnyRankedTensor:$loss);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Step_ConfigOp : Step_Op<"config", [HasParent<"ModelOp">]> {
  let summary = "the training configuration of a model";
  let description = [{
    Optimizer, LR schedule, gradient clipping, SAM, micro-batches and precision. Every entry is
    optional; `stepc` flags override them.

    ```mlir
    step.config {
      optimizer = adamw(lr = 1.0e-3, beta1 = 0.9, beta2 = 0.95, eps = 1.0e-8, weight_decay = 0.01),
      schedule = one_cycle(warmup = 100, total = 1000, start_lr = 3.0e-4, final_lr = 3.0e-5),
      clip = agc(lambda = 0.01),
      sam = sam(rho = 0.05, adaptive = true),
      micro_batches = 1,
      precision = f32
    }
    ```
  }];
  let arguments = (ins OptionalAttr<Step_SpecAttr>:$optimizer,
                       OptionalAttr<Step_SpecAttr>:$schedule,
                       OptionalAttr<Step_SpecAttr>:$clip,
                       OptionalAttr<Step_SpecAttr>:$sam,
                       OptionalAttr<ConfinedAttr<Step_I64Attr, [IntPositive]>>:$micro_batches,
                       OptionalAttr<TypeAttr>:$precision);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Step_RepeatOp : Step_Op<"repeat", [SingleBlockImplicitTerminator<"YieldOp">,
                                       RecursiveMemoryEffects, AttrSizedOperandSegments]> {
  let summary = "a stack of identical layers, written once (a scan)";
  let description = [{
    Runs its body `count` times, threading the loop-carried values. Parameters declared in the
    body are per layer: stored stacked on a leading axis of size `count` and named
    `<name>.<param>`. Depth is one number in the file, and compile time does not grow with it.

    ```mlir
    %out = step.repeat "cell" depth (%h = %x) {
      %w = step.param "w" [F, F] f32 = orthogonal
      %y = step.matmul %h, %w
      %r = step.add %h, %y
      step.yield %r
    }
    ```

    It is a scan, as `lax.scan` is: `over (%w = %ws)` gives iteration i the slice `%ws[i]` of a
    tensor stacked on a leading axis of size `count`, and values yielded after the carried ones
    come out stacked on a leading axis (results after the carried results). `reverse` runs the
    iterations from `count - 1` down to 0 (the backward of a repeat). Compiler stages use this
    form: parameters become stacked `over` operands, saved activations stacked results.

    ```mlir
    %h_out, %saved = step.repeat "cell" 8 (%h = %x) over (%w = %ws) reverse {
      %y = step.matmul %h, %w
      step.yield %y, %h        // carried %y; %h is stacked into %saved: [8, ...]
    }
    ```

    `reversible` makes the backward rebuild each layer's carried inputs from its outputs
    instead of storing them, so activation memory does not grow with depth (one more forward
    per layer in the backward). Rebuilding compounds rounding (about 1.5x per byte_lm_residual layer),
    so the layers run in segments of `segment` (an attribute; default the largest divisor of
    the count up to 8): the backward keeps each segment's input and rebuilds only within it,
    recomputing the segment's forward once more. `attributes {segment = 0}` rebuilds through
    the whole depth: memory flat, error growing with depth.

    `attributes {streams = f64}` (or `momentum(beta = B, streams = f64)`) holds the carried
    streams and the coupling's adds and scalings in f64 while the cell still computes in the
    streams' own type (it reads them rounded, its g is widened): the rebuild then recovers the
    cell's inputs to about 1e-16 instead of 1e-7, so they round back to the forward's bits and
    the error stays negligible over segments of 16 layers (the default segment then). The
    coupling's terms g are computed from the narrow outputs, the same in the forward and the
    rebuild, so the wide coupling stays exactly a coupling. It needs the coupling form below,
    reversible or not (a stored twin computes the same function).

    `attributes {streams = "exact"}` (or `momentum(beta = B, streams = exact)`) makes the
    rebuild exact at any depth, so no segments are needed: the streams are held in f64 on the
    fixed-point grid 2^-32 (`step.quantize`), every g is rounded onto the grid before it is
    added (an exact sum), and each scaling x * c runs as `step.exact_scale` by the nearest ratio
    num/den (den <= 1024) with an integer information buffer per scaled stream, carried beside
    it. The rebuilt inputs are then the forward's bit for bit; the gradient is the float
    coupling's (quantize and exact_scale differentiate as identity and x * num/den). The
    buffer grows log2(den/num) bits per layer (0.152 for beta = 0.9), so the verifier refuses a
    depth that would pass 2^53 (about 290 layers at beta = 0.9); the streams must stay below
    2^21 in magnitude.

    The layer must be an additive coupling: each carried output
    `x + g` or `x * c + g` (c a nonzero scalar constant) with `g` free of that `x`, solvable
    one slot after another (ReversibleCoupling.h); the verifier says where it is not. A
    MomentumNet layer (revlib's momentum_net, velocity `a`, stream `x`, momentum beta):

    `momentum(beta = B)` writes exactly this coupling around a body that yields f(x).

    ```mlir
    %a_out, %x_out = step.repeat "cell" depth (%a = %a0, %x = %x0) reversible {
      %f = ...                                 // the cell, reading %x
      %a1 = step.add %a, %f
      %keep = step.mul %x, %beta               // beta: a scalar step.constant
      %mix = step.mul %a1, %one_minus_beta
      %x1 = step.add %keep, %mix
      step.yield %a1, %x1
    }
    ```
  }];
  let arguments = (ins StrAttr:$name, ConfinedAttr<Step_I64Attr, [IntPositive]>:$count,
                       Variadic<Step_Tensor>:$inits, Variadic<Step_Tensor>:$xs,
                       UnitAttr:$reverse, UnitAttr:$reversible);
  let results = (outs Variadic<Step_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// Results carried out of the last iteration (one per init).
    ::mlir::ResultRange getCarriedResults() { return getResults().take_front(getInits().size()); }
    /// Results stacked over iterations (one per yielded value after the carried ones).
    ::mlir::ResultRange getStackedResults() { return getResults().drop_front(getInits().size()); }
    /// The checks of `streams = "exact"` (part of the region verifier).
    ::mlir::LogicalResult verifyExactStreams();
  }];
}

def Step_CustomGradOp : Step_Op<"custom_grad", [IsolatedFromAbove, RecursiveMemoryEffects]> {
  let summary = "a computation whose gradient is given explicitly";
  let description = [{
    The custom-gradient hook. The first region computes the results from the inputs; autodiff
    does not look inside it but applies the second region, which receives the inputs and the
    adjoints of the results and yields the adjoints of the inputs. Reversible layers use it to
    recompute their inputs instead of storing them; straight-through estimators and gradient
    scaling are one-liners.

    ```mlir
    // Gradient clipping at the value: forward identity, backward clipped to [-1, 1].
    %y = step.custom_grad (%a = %x) {
      step.yield %a
    } backward (%a2, %dy) {
      %lo = step.constant {value = dense<-1.0> : tensor<f32>}
      %hi = step.constant {value = dense<1.0> : tensor<f32>}
      %c = step.max %dy, %lo
      %d = step.min %c, %hi
      step.yield %d
    }
    ```
  }];
  let arguments = (ins Variadic<Step_Tensor>:$inputs);
  let results = (outs Variadic<Step_Tensor>:$results);
  let regions = (region SizedRegion<1>:$forward, SizedRegion<1>:$backward);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
}

def Step_YieldOp : Step_Op<"yield", [Pure, Terminator,
                                     ParentOneOf<["RepeatOp", "CustomGradOp"]>]> {
  let summary = "yields the loop-carried (and stacked) values of a repeat body";
  let description = [{
    Ends a `step.repeat` body; its first operands become the next iteration's carried values,
    the rest are stacked into the repeat's stacked results.

    ```mlir
    step.yield %h2
    ```
  }];
  let arguments = (ins Variadic<Step_Tensor>:$values);
  let hasCustomAssemblyFormat = 1;
  // The implicit terminator of an empty repeat body yields nothing.
  let builders = [OpBuilder<(ins), [{ (void)$_state; }]>];
}

def Step_FuncOp : Step_Op<"func", [IsolatedFromAbove, Symbol, SingleBlock,
                                   HasParent<"ModelOp">]> {
  let summary = "a reusable block of a model, called with step.call";
  let description = [{
    A function of a model: its signature is written with shapes (named dims allowed), its body
    with inferred types like the rest of the model, ending in `step.return`. Parameters are
    passed in as arguments, so one function can serve several layers.

    ```mlir
    step.func @mlp_block(%x: [B, D] f32, %w: [D, D] f32) -> [B, D] f32 {
      %h = step.matmul %x, %w
      %y = step.gelu %h
      step.return %y
    }
    %out = step.call @mlp_block(%x, %w1)
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<FunctionType>:$function_type);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
}

def Step_ReturnOp : Step_Op<"return", [Pure, Terminator, HasParent<"FuncOp">]> {
  let summary = "returns the results of a step.func";
  let description = [{
    Ends a `step.func`; operand types match the function's result types.

    ```mlir
    step.return %y
    ```
  }];
  let arguments = (ins Variadic<Step_Tensor>:$values);
  let hasCustomAssemblyFormat = 1;
}

def Step_CallOp : Step_Op<"call", [Pure]> {
  let summary = "calls a step.func of the same model";
  let description = [{
    Calls a function declared earlier in the model; result types come from its signature.

    ```mlir
    %y = step.call @mlp_block(%x, %w1)
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, Variadic<Step_Tensor>:$args);
  let results = (outs Variadic<Step_Tensor>:$results);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tensor ops: shared classes
//===----------------------------------------------------------------------===//

class Step_TensorOp<string mnemonic, list<Trait> traits = []> :
    Step_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor])> {
  let hasCustomAssemblyFormat = 1;
}

class Step_UnaryOp<string mnemonic, TypeConstraint ty, string what, list<Trait> traits = []> :
    Step_TensorOp<mnemonic, traits> {
  let summary = "elementwise " # what;
  let description = "Applies " # what # " to every element; the result has the operand's type."
      # "\n\n```mlir\n%y = step." # mnemonic # " %x\n```";
  let arguments = (ins ty:$input);
  let results = (outs ty:$result);
}

class Step_BinaryOp<string mnemonic, string what, list<Trait> traits = []> :
    Step_TensorOp<mnemonic, traits> {
  let summary = "elementwise " # what # " with broadcasting";
  let description = "Computes " # what # " elementwise. Operands have the same element type; "
      # "shapes broadcast as in NumPy (trailing dimensions align; a size-1 dimension stretches)."
      # "\n\n```mlir\n%z = step." # mnemonic # " %x, %bias\n```";
  let arguments = (ins Step_NumericTensor:$lhs, Step_NumericTensor:$rhs);
  let results = (outs Step_NumericTensor:$result);
}

class Step_ReduceOp<string mnemonic, string what> : Step_TensorOp<mnemonic> {
  let summary = what # " over axes";
  let description = "Reduces `axes` (negative axes count from the end) by " # what # ". With "
      # "`keepdim` the reduced dimensions stay as size 1."
      # "\n\n```mlir\n%s = step." # mnemonic # " %x {axes = [-1], keepdim}\n```";
  let arguments = (ins Step_NumericTensor:$input, Step_AxesAttr:$axes, UnitAttr:$keepdim);
  let results = (outs Step_NumericTensor:$result);
}

//===----------------------------------------------------------------------===//
// Elementwise unary
//===----------------------------------------------------------------------===//

def Step_NegOp : Step_UnaryOp<"neg", Step_NumericTensor, "negation">;
def Step_AbsOp : Step_UnaryOp<"abs", Step_NumericTensor, "absolute value">;
def Step_ExpOp : Step_UnaryOp<"exp", Step_FloatTensor, "the exponential">;
def Step_LogOp : Step_UnaryOp<"log", Step_FloatTensor, "the natural logarithm">;
def Step_SqrtOp : Step_UnaryOp<"sqrt", Step_FloatTensor, "the square root">;
def Step_RsqrtOp : Step_UnaryOp<"rsqrt", Step_FloatTensor, "the reciprocal square root">;
def Step_TanhOp : Step_UnaryOp<"tanh", Step_FloatTensor, "the hyperbolic tangent">;
def Step_SigmoidOp : Step_UnaryOp<"sigmoid", Step_FloatTensor, "the logistic sigmoid">;
def Step_ReluOp : Step_UnaryOp<"relu", Step_FloatTensor, "max(x, 0)">;
def Step_SiluOp : Step_UnaryOp<"silu", Step_FloatTensor, "x * sigmoid(x)">;
def Step_ErfOp : Step_UnaryOp<"erf", Step_FloatTensor, "the error function">;
def Step_SinOp : Step_UnaryOp<"sin", Step_FloatTensor, "the sine">;
def Step_CosOp : Step_UnaryOp<"cos", Step_FloatTensor, "the cosine">;

def Step_GeluOp : Step_UnaryOp<"gelu", Step_FloatTensor, "GELU"> {
  let description = [{
    GELU. `approximate = "tanh"` (the default, GPT-2's form) uses
    0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))); `"erf"` uses the exact form.

    ```mlir
    %y = step.gelu %x {approximate = "tanh"}
    ```
  }];
  let arguments = (ins Step_FloatTensor:$input,
                       DefaultValuedAttr<Step_GeluApproxAttr, "\"tanh\"">:$approximate);
}

def Step_LeakyReluOp : Step_UnaryOp<"leaky_relu", Step_FloatTensor, "leaky ReLU"> {
  let description = [{
    x for x > 0, alpha·x otherwise.

    ```mlir
    %y = step.leaky_relu %x {alpha = 0.01}
    ```
  }];
  let arguments = (ins Step_FloatTensor:$input, DefaultValuedAttr<F64Attr, "0.01">:$alpha);
}

def Step_PowOp : Step_UnaryOp<"pow", Step_FloatTensor, "x raised to a constant exponent"> {
  let description = [{
    x^exponent for a constant exponent.

    ```mlir
    %cube = step.pow %x {exponent = 3.0}
    ```
  }];
  let arguments = (ins Step_FloatTensor:$input, F64Attr:$exponent);
}

//===----------------------------------------------------------------------===//
// Elementwise binary (broadcasting), compare, select
//===----------------------------------------------------------------------===//

def Step_AddOp : Step_BinaryOp<"add", "the sum", [Commutative]>;
def Step_SubOp : Step_BinaryOp<"sub", "the difference">;
def Step_MulOp : Step_BinaryOp<"mul", "the product", [Commutative]>;
def Step_DivOp : Step_BinaryOp<"div", "the quotient">;
def Step_MaxOp : Step_BinaryOp<"max", "the maximum", [Commutative]>;
def Step_MinOp : Step_BinaryOp<"min", "the minimum", [Commutative]>;

def Step_CompareOp : Step_TensorOp<"compare"> {
  let summary = "elementwise comparison with broadcasting, giving an i1 mask";
  let description = [{
    Compares elementwise with `predicate` one of lt, le, gt, ge, eq, ne; shapes broadcast.

    ```mlir
    %mask = step.compare %x, %zero {predicate = "gt"}
    ```
  }];
  let arguments = (ins Step_NumericTensor:$lhs, Step_NumericTensor:$rhs,
                       Step_ComparePredicateAttr:$predicate);
  let results = (outs Step_MaskTensor:$result);
}

def Step_SelectOp : Step_TensorOp<"select"> {
  let summary = "elementwise choice by an i1 mask, with broadcasting";
  let description = [{
    `cond ? on_true : on_false` elementwise; all three shapes broadcast together.

    ```mlir
    %y = step.select %mask, %x, %zero
    ```
  }];
  let arguments = (ins Step_MaskTensor:$cond, Step_NumericTensor:$on_true,
                       Step_NumericTensor:$on_false);
  let results = (outs Step_NumericTensor:$result);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def Step_SumOp : Step_ReduceOp<"sum", "the sum">;
def Step_MeanOp : Step_ReduceOp<"mean", "the mean">;
def Step_ReduceMaxOp : Step_ReduceOp<"reduce_max", "the maximum">;

//===----------------------------------------------------------------------===//
// Contractions and convolution
//===----------------------------------------------------------------------===//

def Step_MatmulOp : Step_TensorOp<"matmul"> {
  let summary = "matrix product, optionally transposed, with a shared right operand";
  let description = [{
    `lhs [..., M, K] × rhs [K, N] → [..., M, N]`: leading dims of `lhs` are batch-like and the
    2-D `rhs` is shared (a dense layer). `transpose_lhs` / `transpose_rhs` swap the last two
    dimensions of that operand first.

    ```mlir
    %h = step.matmul %x, %w                      // [B, S, F] × [F, H] → [B, S, H]
    %g = step.matmul %a, %b {transpose_lhs}      // [K, M]ᵀ × [K, N] → [M, N]
    ```
  }];
  let arguments = (ins Step_FloatTensor:$lhs, Step_FloatTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Step_FloatTensor:$result);
}

def Step_BatchMatmulOp : Step_TensorOp<"batch_matmul"> {
  let summary = "batched matrix product over equal leading dimensions";
  let description = [{
    `lhs [..., M, K] × rhs [..., K, N] → [..., M, N]` with equal batch dimensions (rank ≥ 3),
    optionally transposing either operand's last two dimensions.

    ```mlir
    %scores = step.batch_matmul %q, %k {transpose_rhs}   // [B, H, T, D] × [B, H, T, D]ᵀ
    ```
  }];
  let arguments = (ins Step_FloatTensor:$lhs, Step_FloatTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Step_FloatTensor:$result);
}

def Step_EmbeddingOp : Step_TensorOp<"embedding"> {
  let summary = "embedding lookup: gathers rows of a table by integer ids";
  let description = [{
    `table [V, D]`, `ids [...]` of i32/i64 → `[..., D]`. Ids out of range are an error at run
    time, never a silent read.

    ```mlir
    %e = step.embedding %table, %tokens   // [256, F], [B, S] → [B, S, F]
    ```
  }];
  let arguments = (ins Step_FloatTensor:$table, Step_IndexTensor:$ids);
  let results = (outs Step_FloatTensor:$result);
}

def Step_Conv1dOp : Step_TensorOp<"conv1d"> {
  let summary = "1-D convolution over the sequence, channels last, stride 1";
  let description = [{
    `input [B, S, Cin]`, `weight [K, Cin / groups, Cout]` → `[B, S', Cout]`. With
    `padding = "causal"` (the default) the input is padded by K−1 on the left so position t
    sees only t−K+1..t and S' = S; `"valid"` gives S' = S−K+1. Channels are split into
    `groups` independent groups.

    ```mlir
    %y = step.conv1d %x, %w {padding = "causal", groups = 1}
    ```
  }];
  let arguments = (ins Step_FloatTensor:$input, Step_FloatTensor:$weight,
                       DefaultValuedAttr<Step_PaddingAttr, "\"causal\"">:$padding,
                       DefaultValuedAttr<ConfinedAttr<Step_I64Attr, [IntPositive]>, "1">:$groups);
  let results = (outs Step_FloatTensor:$result);
}

//===----------------------------------------------------------------------===//
// Routing (mixture of experts): static shapes, so the memory plan stays static
//===----------------------------------------------------------------------===//

def Step_TopKOp : Step_TensorOp<"top_k"> {
  let summary = "the k largest entries along the last axis, with their indices";
  let description = [{
    `input [..., N]` → `values [..., k]`, `indices [..., k]` (i32), largest first. Equal
    values keep the lower index first, so the selection is deterministic; a NaN ranks above
    every number. The gradient flows through `values` to the chosen positions.

    ```mlir
    %gates, %experts = step.top_k %probs {k = 2}     // [T, E] → [T, 2], [T, 2]
    ```
  }];
  let arguments = (ins Step_FloatTensor:$input, ConfinedAttr<Step_I64Attr, [IntPositive]>:$k);
  let results = (outs Step_FloatTensor:$values, TensorOf<[I32]>:$indices);
}

def Step_RouteTokensOp : Step_TensorOp<"route_tokens"> {
  let summary = "token-choice routing with a capacity per expert (a counting pass, no sort)";
  let description = [{
    `experts [T, k]` (i32: each token's experts in order of preference, e.g. `top_k`'s
    indices) → `choices [E, C]`, `slots [T, k]` (i32), with E = `num_experts` and
    C = min(T, ⌈`capacity_factor` · T · k / E⌉) (GShard / Switch).

    Slots are given out in priority order: every token's first choice in token order, then
    every second choice, and so on; a choice whose expert is full is dropped (the token keeps
    only its residual there). `choices[e, c]` is the flat choice t · k + j in slot c of expert
    e (−1 for an empty slot) and `slots[t, j]` the flat slot e · C + c that choice j of token t
    took (−1 if dropped): two one-to-one maps, each the other's inverse, which is what
    `step.gather_rows` needs to dispatch and to combine, forward and backward. Not
    differentiable (integers); the gates' gradient flows through `top_k`'s values.

    ```mlir
    %choices, %slots = step.route_tokens %experts {num_experts = 8, capacity_factor = 1.25}
    ```
  }];
  let arguments = (ins TensorOf<[I32]>:$experts,
                       ConfinedAttr<Step_I64Attr, [IntPositive]>:$num_experts,
                       DefaultValuedAttr<F64Attr, "1.0">:$capacity_factor);
  let results = (outs TensorOf<[I32]>:$choices, TensorOf<[I32]>:$slots);
}

def Step_RouteExpertsOp : Step_TensorOp<"route_experts"> {
  let summary = "expert-choice routing: each expert in turn takes its best C tokens";
  let description = [{
    `scores [T, E]` (f32, the router's) → `choices [E, C]`, `slots [T, k]`, `experts [T, k]`
    (i32), with C = min(T, ⌈`capacity_factor` · T · k / E⌉). HomebrewNLP's greedy expert
    choice: expert 0, then 1, ..., each takes the C highest-scoring tokens among those given
    fewer than k experts so far (equal scores: the lower token first), so the load is balanced
    exactly and with capacity_factor = 1 every token gets k experts (short of a last expert
    left only tokens it already took). Within an expert, slots are in token order. `choices`
    and `slots` are as for `step.route_tokens`; `experts[t, j]` is the expert of choice j of
    token t (−1 if none). Each expert's threshold is found by bisection over the scores'
    order-preserving integer keys: passes over the tokens, no sort. Not differentiable
    (integers): the model reads the gates from the scores.

    ```mlir
    %choices, %slots, %experts = step.route_experts %probs {k = 1}
    ```
  }];
  let arguments = (ins TensorOf<[F32]>:$scores, ConfinedAttr<Step_I64Attr, [IntPositive]>:$k,
                       DefaultValuedAttr<F64Attr, "1.0">:$capacity_factor);
  let results = (outs TensorOf<[I32]>:$choices, TensorOf<[I32]>:$slots, TensorOf<[I32]>:$experts);
}

def Step_GatherRowsOp : Step_TensorOp<"gather_rows"> {
  let summary = "gathers rows by a one-to-one routing map whose inverse is given";
  let description = [{
    `source [N, D]`, `ids [...]`, `inverse` (N · g elements; i32) → `[..., D]` with
    g = `group`. The ids index N · g virtual rows, row q being `source[q div g]` (each source
    row serves g choices, e.g. a token's k), so row p of the result is
    `source[ids[p] div g]`, a zero row where `ids[p]` = −1. The map is one-to-one and
    `inverse[q]` is the position p with `ids[p]` = q (−1 if none). Routing produces both maps,
    so the gradient is a gather too (dsource[n] = Σ_j dresult[inverse[n · g + j]], in a fixed
    order): no scatter, no atomics, the same bits on every run. The interpreter checks that
    the maps are each other's inverse; compiled code trusts them.

    ```mlir
    %xe = step.gather_rows %x, %choices, %slots {group = 2}   // dispatch: [T, D] → [E, C, D]
    %yk = step.gather_rows %out, %slots, %choices             // combine: [E·C, D] → [T, 2, D]
    ```
  }];
  let arguments = (ins Step_FloatTensor:$source, TensorOf<[I32]>:$ids, TensorOf<[I32]>:$inverse,
                       DefaultValuedAttr<ConfinedAttr<Step_I64Attr, [IntPositive]>, "1">:$group);
  let results = (outs Step_FloatTensor:$result);
}

//===----------------------------------------------------------------------===//
// Collectives: emitted by the train step's assembly (--data-parallel)
//===----------------------------------------------------------------------===//

def Step_AllReduceOp : Step_TensorOp<"all_reduce"> {
  let summary = "the sum of a tensor over the data-parallel ranks, in a fixed tree";
  let description = [{
    Every rank passes its `input`; every rank gets the same `result`: the sum over the ranks,
    combined as a fixed binary tree over the rank index ((r0 + r1) + (r2 + r3) for four). The
    order does not depend on timing, so the bits do not either. With one rank it is the
    input. The train step's assembly (--data-parallel) inserts it on each rank's sums of the
    loss and the gradients over its block of micro-batches, which the tree then joins as one
    process's micro-batch tree would; it is not differentiable.

    ```mlir
    %g = step.all_reduce %grad : tensor<256x512xf32> -> tensor<256x512xf32>
    ```
  }];
  let arguments = (ins TensorOf<[F32]>:$input);
  let results = (outs TensorOf<[F32]>:$result);
}

def Step_RankShardOp : Step_TensorOp<"rank_shard"> {
  let summary = "this rank's block of a tensor's rows (--shard-optimizer)";
  let description = [{
    The first axis of `input` is cut into `parts` equal blocks, one per data-parallel rank;
    rank r gets block r, rows [r·n/parts, (r+1)·n/parts). The train step's assembly
    (--shard-optimizer, ZeRO stage 1) takes each rank's block of a parameter and of its
    reduced gradient, and updates only that block with its block of the optimizer state,
    which is all the state a rank keeps. `parts` must divide the first axis; a run must have
    exactly `parts` ranks (the runtime checks). Not differentiable.

    ```mlir
    %mine = step.rank_shard %grad {parts = 2} : tensor<8x256x32xf32> -> tensor<4x256x32xf32>
    ```
  }];
  let arguments = (ins TensorOf<[F32]>:$input, ConfinedAttr<Step_I64Attr, [IntPositive]>:$parts);
  let results = (outs TensorOf<[F32]>:$result);
}

def Step_AllGatherOp : Step_TensorOp<"all_gather"> {
  let summary = "the rows of every rank's block, in rank order (--shard-optimizer)";
  let description = [{
    The inverse of step.rank_shard: every rank passes its block `input` and every rank gets
    the `parts` blocks stacked along the first axis, rank 0's first. No arithmetic: the
    result holds the ranks' bits. The train step's assembly (--shard-optimizer) rebuilds each
    sharded parameter from its updated blocks with it. Not differentiable.

    ```mlir
    %w = step.all_gather %block {parts = 2} : tensor<4x256x32xf32> -> tensor<8x256x32xf32>
    ```
  }];
  let arguments = (ins TensorOf<[F32]>:$input, ConfinedAttr<Step_I64Attr, [IntPositive]>:$parts);
  let results = (outs TensorOf<[F32]>:$result);
}

def Step_AllReduceStartOp : Step_TensorOp<"all_reduce_start"> {
  let summary = "issues step.all_reduce of a tensor without waiting for it";
  let description = [{
    The first half of step.all_reduce, split so that the reduction overlaps the work between
    the two halves: it hands `input` to the ranks' reduction and returns at once. Its result
    is only for step.all_reduce_wait (stacked by a repeat like any per-layer value: the
    backward issues each layer's reduction as soon as it has the layer's gradient); the
    runtime reduces in its buffer while the step goes on, so until the wait its contents are
    not numbers to read. With one process start and wait together are the identity. Not
    differentiable.

    ```mlir
    %t = step.all_reduce_start %grad : tensor<256x512xf32> -> tensor<256x512xf32>
    %g = step.all_reduce_wait %t : tensor<256x512xf32> -> tensor<256x512xf32>
    ```
  }];
  let arguments = (ins TensorOf<[F32]>:$input);
  let results = (outs TensorOf<[F32]>:$result);
}

def Step_AllReduceWaitOp : Step_TensorOp<"all_reduce_wait"> {
  let summary = "the sums over the ranks of the reductions step.all_reduce_start issued";
  let description = [{
    Waits for the reductions started in `input` (one step.all_reduce_start's result, or
    several stacked along the first axis by a repeat) and returns their sums, in the same
    layout: the value step.all_reduce would have given for the tensors those starts were
    handed, bit for bit (the same fixed tree). Not differentiable.

    ```mlir
    %g = step.all_reduce_wait %started : tensor<8x256x32xf32> -> tensor<8x256x32xf32>
    ```
  }];
  let arguments = (ins TensorOf<[F32]>:$input);
  let results = (outs TensorOf<[F32]>:$result);
}

def Step_ReduceScatterStartOp : Step_TensorOp<"reduce_scatter_start"> {
  let summary = "issues the sum over the ranks of each row of a tensor, for the rank that owns it";
  let description = [{
    step.all_reduce_start for --shard-optimizer (ZeRO stage 1): the sum over the ranks of
    row i of `input` (its first axis) is needed only on rank `owners[i]`, which updates that
    row; the other ranks only send theirs. `owners` has the input's rank, 1 along every axis
    but the first, and along the first either the input's size (an owner per row, which must
    be rank r for the r-th of `parts` equal blocks of rows: a whole gradient) or 1 (one owner
    for all: one layer's gradient inside a repeat, a stacked table sliced per layer). The runtime sums each row in the same fixed tree as
    step.all_reduce (the bits of one process), by recursive halving: each rank sends about
    (N − 1)/N of the tensor instead of an all-reduce's tree up and down. The result is only
    for step.reduce_scatter_wait. With one process it is the identity. Not differentiable.

    ```mlir
    %t = step.reduce_scatter_start %grad, %owners {parts = 2} : tensor<8x32xf32>, tensor<8x1xi64> -> tensor<8x32xf32>
    ```
  }];
  let arguments = (ins TensorOf<[F32]>:$input, TensorOf<[I64]>:$owners,
                       ConfinedAttr<Step_I64Attr, [IntPositive]>:$parts);
  let results = (outs TensorOf<[F32]>:$result);
}

def Step_ReduceScatterWaitOp : Step_TensorOp<"reduce_scatter_wait"> {
  let summary = "this rank's block of the sums step.reduce_scatter_start issued";
  let description = [{
    Waits for the reductions started in `input` (one step.reduce_scatter_start's result, or
    several stacked along the first axis by a repeat) and returns this rank's block of their
    sums: rows [r·n/parts, (r+1)·n/parts) of the first axis, the rows the starts' owners give
    rank r. Bit for bit step.rank_shard of step.all_reduce of the same tensors. Not
    differentiable.

    ```mlir
    %mine = step.reduce_scatter_wait %started {parts = 2} : tensor<8x256x32xf32> -> tensor<4x256x32xf32>
    ```
  }];
  let arguments = (ins TensorOf<[F32]>:$input, ConfinedAttr<Step_I64Attr, [IntPositive]>:$parts);
  let results = (outs TensorOf<[F32]>:$result);
}

def Step_LastMicroBatchOp : Step_TensorOp<"last_micro_batch"> {
  let summary = "this rank's last micro-batch of a tensor split into micro-batches";
  let description = [{
    `input [K, ...]` holds K micro-batches along its first axis; the result is the one this
    process runs last: K − 1 for one process, and under `mpirun -np N` rank r's
    (r + 1)·K/N − 1 (each rank runs an aligned block of K/N, runtime/hal/cpu/Collectives.h).
    The train step's assembly (--data-parallel) runs that micro-batch after the loop over
    the others, so that its backward can issue each layer's reduction as soon as the layer's
    gradient is whole. Not differentiable.

    ```mlir
    %last = step.last_micro_batch %tokens : tensor<4x8x256xi32> -> tensor<8x256xi32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
}

//===----------------------------------------------------------------------===//
// Gradient ops: emitted by autodiff, lowered to library calls / dedicated kernels
//===----------------------------------------------------------------------===//

def Step_EmbeddingGradOp : Step_TensorOp<"embedding_grad"> {
  let summary = "gradient of an embedding table: scatter-add of rows by ids";
  let description = [{
    `grad [..., D]`, `ids [...]` → `[vocab, D]` where row v is the sum of the gradient rows
    whose id is v. Autodiff emits it for `step.embedding`.

    ```mlir
    %dtable = step.embedding_grad %g, %tokens {vocab = 256}
    ```
  }];
  let arguments = (ins Step_FloatTensor:$grad, Step_IndexTensor:$ids,
                       ConfinedAttr<Step_I64Attr, [IntPositive]>:$vocab);
  let results = (outs Step_FloatTensor:$result);
}

def Step_Conv1dGradInputOp : Step_TensorOp<"conv1d_grad_input"> {
  let summary = "gradient of step.conv1d with respect to its input";
  let description = [{
    `grad [B, S', Cout]`, `weight [K, Cin/groups, Cout]` → `[B, S, Cin]` for a `step.conv1d`
    with the same `padding` and `groups` (S = S' for causal, S' + K − 1 for valid).

    ```mlir
    %dx = step.conv1d_grad_input %g, %w {padding = "causal"}
    ```
  }];
  let arguments = (ins Step_FloatTensor:$grad, Step_FloatTensor:$weight,
                       DefaultValuedAttr<Step_PaddingAttr, "\"causal\"">:$padding,
                       DefaultValuedAttr<ConfinedAttr<Step_I64Attr, [IntPositive]>, "1">:$groups);
  let results = (outs Step_FloatTensor:$result);
}

def Step_Conv1dGradWeightOp : Step_TensorOp<"conv1d_grad_weight"> {
  let summary = "gradient of step.conv1d with respect to its weight";
  let description = [{
    `input [B, S, Cin]`, `grad [B, S', Cout]` → `[kernel, Cin/groups, Cout]` for a
    `step.conv1d` with the same `padding` and `groups`.

    ```mlir
    %dw = step.conv1d_grad_weight %x, %g {kernel = 7, padding = "causal"}
    ```
  }];
  let arguments = (ins Step_FloatTensor:$input, Step_FloatTensor:$grad,
                       ConfinedAttr<Step_I64Attr, [IntPositive]>:$kernel,
                       DefaultValuedAttr<Step_PaddingAttr, "\"causal\"">:$padding,
                       DefaultValuedAttr<ConfinedAttr<Step_I64Attr, [IntPositive]>, "1">:$groups);
  let results = (outs Step_FloatTensor:$result);
}

//===----------------------------------------------------------------------===//
// Scans, normalisation, losses
//===----------------------------------------------------------------------===//

def Step_CumsumOp : Step_TensorOp<"cumsum"> {
  let summary = "inclusive cumulative sum along an axis";
  let description = [{
    y[..., t, ...] = Σ_{s ≤ t} x[..., s, ...] along `axis` (or Σ_{s ≥ t} with `reverse`).

    ```mlir
    %c = step.cumsum %x {axis = 1}
    ```
  }];
  let arguments = (ins Step_NumericTensor:$input, Step_I64Attr:$axis, UnitAttr:$reverse);
  let results = (outs Step_NumericTensor:$result);
}

def Step_SoftmaxOp : Step_TensorOp<"softmax"> {
  let summary = "softmax along an axis";
  let description = [{
    exp(x − max) / Σ exp(x − max) along `axis` (default −1).

    ```mlir
    %p = step.softmax %scores {axis = -1}
    ```
  }];
  let arguments = (ins Step_FloatTensor:$input, DefaultValuedAttr<Step_I64Attr, "-1">:$axis);
  let results = (outs Step_FloatTensor:$result);
}

def Step_LogSoftmaxOp : Step_TensorOp<"log_softmax"> {
  let summary = "log-softmax along an axis";
  let description = [{
    x − max − log Σ exp(x − max) along `axis` (default −1).

    ```mlir
    %lp = step.log_softmax %logits {axis = -1}
    ```
  }];
  let arguments = (ins Step_FloatTensor:$input, DefaultValuedAttr<Step_I64Attr, "-1">:$axis);
  let results = (outs Step_FloatTensor:$result);
}

def Step_LayerNormOp : Step_TensorOp<"layer_norm"> {
  let summary = "layer normalisation over the last dimension, with scale and shift";
  let description = [{
    (x − mean) / √(var + eps) · gamma + beta over the last dimension C; `gamma` and `beta`
    are `[C]`.

    ```mlir
    %y = step.layer_norm %x, %gamma, %beta {eps = 1.0e-5}
    ```
  }];
  let arguments = (ins Step_FloatTensor:$input, Step_FloatTensor:$gamma, Step_FloatTensor:$beta,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs Step_FloatTensor:$result);
}

def Step_RmsNormOp : Step_TensorOp<"rms_norm"> {
  let summary = "RMS normalisation over the last dimension, with scale";
  let description = [{
    x / √(mean(x²) + eps) · gamma over the last dimension C; `gamma` is `[C]`.

    ```mlir
    %y = step.rms_norm %x, %gamma {eps = 1.0e-6}
    ```
  }];
  let arguments = (ins Step_FloatTensor:$input, Step_FloatTensor:$gamma,
                       DefaultValuedAttr<F64Attr, "1.0e-6">:$eps);
  let results = (outs Step_FloatTensor:$result);
}

def Step_CrossEntropyOp : Step_TensorOp<"cross_entropy"> {
  let summary = "softmax cross-entropy of logits against integer class targets";
  let description = [{
    `logits [..., V]`, `targets [...]` of i32/i64 → the mean (default), the sum, or per
    position (`reduction = "none"`, shape `[...]`) of −log softmax(logits)[target].

    ```mlir
    %loss = step.cross_entropy %logits, %targets {reduction = "mean"}
    ```
  }];
  let arguments = (ins Step_FloatTensor:$logits, Step_IndexTensor:$targets,
                       DefaultValuedAttr<Step_ReductionAttr, "\"mean\"">:$reduction);
  let results = (outs Step_FloatTensor:$result);
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

def Step_ReshapeOp : Step_TensorOp<"reshape"> {
  let summary = "reshape to a shape with the same number of elements";
  let description = [{
    Row-major reshape. One entry of `shape` may be −1 and is inferred; an entry 0 copies the
    operand's size in that position, so a model need not repeat the batch or sequence length.

    ```mlir
    %y = step.reshape %x {shape = [16, -1]}
    %heads = step.reshape %q {shape = [0, 0, 12, -1]}   // [B, T, C] → [B, T, 12, C/12]
    ```
  }];
  let arguments = (ins Step_Tensor:$input, Step_ShapeAttr:$shape);
  let results = (outs Step_Tensor:$result);
}

def Step_TransposeOp : Step_TensorOp<"transpose"> {
  let summary = "permute dimensions";
  let description = [{
    result dim i is input dim perm[i].

    ```mlir
    %y = step.transpose %x {perm = [0, 2, 1]}
    ```
  }];
  let arguments = (ins Step_Tensor:$input, Step_AxesAttr:$perm);
  let results = (outs Step_Tensor:$result);
}

def Step_BroadcastOp : Step_TensorOp<"broadcast"> {
  let summary = "broadcast to a shape (NumPy rules)";
  let description = [{
    Stretches size-1 dimensions and prepends new leading ones to reach `shape`.

    ```mlir
    %y = step.broadcast %bias {shape = [16, 256, 512]}
    ```
  }];
  let arguments = (ins Step_Tensor:$input, Step_ShapeAttr:$shape);
  let results = (outs Step_Tensor:$result);
}

def Step_SliceOp : Step_TensorOp<"slice"> {
  let summary = "a strided box of a tensor";
  let description = [{
    Takes `start[i] ≤ j < limit[i]` with step `strides[i]` (default 1) in every dimension.

    ```mlir
    %y = step.slice %x {start = [0, 0, 0], limit = [16, 256, 512]}
    ```
  }];
  let arguments = (ins Step_Tensor:$input, Step_ShapeAttr:$start, Step_ShapeAttr:$limit,
                       OptionalAttr<Step_ShapeAttr>:$strides);
  let results = (outs Step_Tensor:$result);
}

def Step_SplitOp : Step_TensorOp<"split"> {
  let summary = "split into equal parts along an axis";
  let description = [{
    Splits `axis` into `parts` equal parts, one result each.

    ```mlir
    %a, %b, %c = step.split %x {axis = -1, parts = 3}
    ```
  }];
  let arguments = (ins Step_Tensor:$input, Step_I64Attr:$axis,
                       ConfinedAttr<Step_I64Attr, [IntPositive]>:$parts);
  let results = (outs Variadic<Step_Tensor>:$results);
}

def Step_ConcatOp : Step_TensorOp<"concat"> {
  let summary = "concatenate along an axis";
  let description = [{
    All operands share the element type and every dimension but `axis`.

    ```mlir
    %y = step.concat %a, %b {axis = 0}
    ```
  }];
  let arguments = (ins Variadic<Step_Tensor>:$inputs, Step_I64Attr:$axis);
  let results = (outs Step_Tensor:$result);
}

def Step_PadOp : Step_TensorOp<"pad"> {
  let summary = "pad every dimension with a constant";
  let description = [{
    Adds `low[i]` elements before and `high[i]` after dimension i, filled with `value`.

    ```mlir
    %y = step.pad %x {low = [0, 6, 0], high = [0, 0, 0], value = 0.0}
    ```
  }];
  let arguments = (ins Step_NumericTensor:$input, Step_ShapeAttr:$low, Step_ShapeAttr:$high,
                       DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Step_NumericTensor:$result);
}

//===----------------------------------------------------------------------===//
// Casts, constants, iota, dropout, jitter
//===----------------------------------------------------------------------===//

def Step_CastOp : Step_TensorOp<"cast"> {
  let summary = "convert the element type";
  let description = [{
    Converts every element to `to` (floats round to nearest even; float → int truncates).

    ```mlir
    %h = step.cast %x {to = bf16}
    ```
  }];
  let arguments = (ins Step_Tensor:$input, TypeAttrOf<Step_Element>:$to);
  let results = (outs Step_Tensor:$result);
}

def Step_QuantizeOp : Step_TensorOp<"quantize"> {
  let summary = "round to the fixed-point grid 2^-bits";
  let description = [{
    floor(x · 2^bits + 1/2) · 2^-bits (ties round up), in the operand's float type. Sums of values on
    one grid are exact while they stay below 2^(mantissa - bits) in magnitude (2^21 for f64 at
    bits = 32), which is what the exact reversible streams (`streams = exact` on a repeat) rely
    on. Its gradient is the identity (a straight-through estimator): the grid is a representation,
    not part of the model.

    ```mlir
    %q = step.quantize %g {bits = 32}
    ```
  }];
  let arguments = (ins Step_FloatTensor:$input,
                       ConfinedAttr<Step_I64Attr, [IntMinValue<0>, IntMaxValue<52>]>:$bits);
  let results = (outs Step_FloatTensor:$result);
}

def Step_ExactScaleOp : Step_TensorOp<"exact_scale"> {
  let summary = "multiply fixed-point values by num/den invertibly, with an information buffer";
  let description = [{
    For x on the grid 2^-bits (an f64 tensor, X = x · 2^bits an integer) and a non-negative
    integer buffer b of the same shape, computes y ≈ x · num/den and a new buffer exactly
    invertibly (Maclaurin, Duvenaud and Adams 2015, §4; the MomentumNets paper's exact
    representation):

        r1 = X mod den;  b = b · den + r1;  X = X div den;
        X = X · num;     r2 = b mod num;   X = X + r2;  b = b div num

    With `inverse` it undoes exactly that, from (y, b'). The buffer grows by log2(den/num) bits
    per application; it must stay below 2^53, and |X| too (the stream's verifier bounds the
    depth). The gradient is that of y = x · num/den (the buffer carries none).

    ```mlir
    %y, %b1 = step.exact_scale %x, %b0 {num = 9, den = 10, bits = 32}
    %x, %b0 = step.exact_scale %y, %b1 {num = 9, den = 10, bits = 32, inverse}
    ```
  }];
  let arguments = (ins TensorOf<[F64]>:$input, TensorOf<[I64]>:$buffer,
                       ConfinedAttr<Step_I64Attr, [IntPositive]>:$num,
                       ConfinedAttr<Step_I64Attr, [IntPositive]>:$den,
                       ConfinedAttr<Step_I64Attr, [IntMinValue<0>, IntMaxValue<52>]>:$bits,
                       UnitAttr:$inverse);
  let results = (outs TensorOf<[F64]>:$result, TensorOf<[I64]>:$buffer_out);
}

def Step_ConstantOp : Step_TensorOp<"constant"> {
  let summary = "a constant tensor";
  let description = [{
    The result has the type of `value`.

    ```mlir
    %half = step.constant {value = dense<0.5> : tensor<f32>}
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Step_Tensor:$result);
}

def Step_IotaOp : Step_TensorOp<"iota"> {
  let summary = "indices along an axis, over a given shape or the shape of a tensor";
  let description = [{
    result[i0, ..., in] = i_axis + offset, of `dtype`. The shape is `shape`, or, when an
    operand is given, the operand's shape (so model files need not repeat a shape).

    ```mlir
    %pos = step.iota {shape = [256], axis = 0, dtype = f32, offset = 1}
    %t = step.iota %tokens {axis = 1, dtype = i32}     // [B, S]: the position of each token
    ```
  }];
  let arguments = (ins Optional<Step_Tensor>:$like, OptionalAttr<Step_ShapeAttr>:$shape,
                       DefaultValuedAttr<Step_I64Attr, "0">:$axis,
                       TypeAttrOf<Step_Element>:$dtype, DefaultValuedAttr<Step_I64Attr, "0">:$offset);
  let results = (outs Step_Tensor:$result);
}

def Step_DropoutOp : Step_TensorOp<"dropout",
    [Step_StochasticOpInterface]> {
  let summary = "inverted dropout with a counter-based mask";
  let description = [{
    Zeroes each element with probability `rate` and scales the rest by 1/(1−rate). The mask
    is a Philox function of (`seed`, the step counter, the element index), so CPU and GPU draw
    the same mask and every step draws a new one. A model writes only the input; the train step
    passes its step counter (an i64 scalar) as the second operand. Without it the counter is 0.

    ```mlir
    %y = step.dropout %x {rate = 0.1, seed = 7}
    %y = step.dropout %x, %step {rate = 0.1, seed = 7}    // in @train_step
    ```
  }];
  let arguments = (ins Step_FloatTensor:$input, Optional<0DTensorOf<[I64]>>:$step, F64Attr:$rate,
                       Step_I64Attr:$seed);
  let results = (outs Step_FloatTensor:$result);
  let hasVerifier = 1;
}

def Step_JitterOp : Step_TensorOp<"jitter",
    [Step_StochasticOpInterface]> {
  let summary = "multiplicative uniform noise (a router's input jitter)";
  let description = [{
    Multiplies each element by its own factor 1 − eps + 2·eps·u, u uniform in [0, 1) with 24
    random bits: u = (word 0 of Philox(`seed`, the jitter stream of the step counter, the
    row-major element index) >> 8) · 2^-24. The factors are exact in f32 and the same on CPU
    and GPU, and every step draws new ones. Switch Transformer's router jitter (eps = 0.01 on
    the router's input) is written with it. Training only: evaluation and sampling use the
    input unchanged. The gradient is the adjoint times the same factors.

    ```mlir
    %xr = step.jitter %x {eps = 0.01, seed = 5}
    %xr = step.jitter %x, %step {eps = 0.01, seed = 5}    // in @train_step
    ```
  }];
  let arguments = (ins Step_FloatTensor:$input, Optional<0DTensorOf<[I64]>>:$step, F64Attr:$eps,
                       Step_I64Attr:$seed);
  let results = (outs Step_FloatTensor:$result);
  let hasVerifier = 1;
}

#endif // STEP_OPS_TD
