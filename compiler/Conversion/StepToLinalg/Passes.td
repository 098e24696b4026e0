//===- Passes.td - lowering passes -------------------------*- tablegen -*-===//
#ifndef STEPC_LOWERING_PASSES_TD
#define STEPC_LOWERING_PASSES_TD

include "mlir/Pass/PassBase.td"

def LowerToLinalg : Pass<"step-lower-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lowers step tensor ops in func.func bodies to linalg on tensors, arith and math";
  let description = [{
    The first stage of the CPU backend. Every covered `step` op in a `func.func` body (the
    typed form), including the ops of a lowered `step.repeat`'s body, is rewritten into `linalg` on tensors (`linalg.generic`,
    `linalg.fill`, `linalg.matmul`, `linalg.batch_matmul`, `linalg.transpose`), `tensor`
    ops (`tensor.empty`, `tensor.expand_shape` / `tensor.collapse_shape`,
    `tensor.extract_slice`, `tensor.insert_slice`, `tensor.extract`), `scf.for` (scans,
    scatters and repeats) and scalar `arith` / `math` in the bodies.
    Ops that are not covered, and ops inside `step.model`, `step.custom_grad` or unlowered
    `step.repeat` regions, are left unchanged: the pass never fails on them, so its output may mix both
    dialects.

    Covered:
    - elementwise unary: neg abs exp log sqrt rsqrt tanh sigmoid relu silu erf sin cos
      gelu (tanh and erf) leaky_relu pow. bf16/f16 transcendental functions are computed in
      f32 and rounded back.
    - binary with NumPy broadcasting: add sub mul div max min (float max/min propagate NaN,
      integer division truncates), compare (ordered float predicates, `ne` unordered; signed
      integers), select, cast (float↔float, int↔float, int↔int, to/from i1), constant.
    - reductions: sum mean reduce_max over any axes, with or without keepdim (integer mean
      truncates; float reduce_max propagates NaN).
    - contractions: matmul (2-D `linalg.matmul`; an N-D lhs without transpose_lhs is
      collapsed to 2-D; transposes become a `linalg.generic` contraction), batch_matmul
      (rank 3 without transposes: `linalg.batch_matmul`; otherwise a `linalg.generic`).
      Accumulation is in the element type. embedding: a generic over the result reading
      `table[id, d]` with `tensor.extract` (ids must be in range; not checked).
    - shape: reshape (one collapse_shape or expand_shape when the dims group, else through
      1-D), transpose, broadcast, slice (strided), pad (fill + insert_slice), concat
      (insert_slice per operand), split (extract_slice per part), iota (`linalg.index`).
    - softmax, log_softmax along an axis, f32 and f64 (the maximum is subtracted before
      exponentiating, as in the interpreter: two reductions and three elementwise generics).
    - cross_entropy (f32, f64; mean, sum, none): log_softmax, the target's entry read with
      `tensor.extract` in a generic over the targets, then the reduction. Targets must be in
      range; the compiled code does not check them.
    - layer_norm, rms_norm over the last dimension (f32, f64; biased variance, as in the
      interpreter).
    - routing: top_k as a reduction over the entries into k slots per row with the rows
      innermost (the CPU's: they vectorize), or with `parallel-routing` as a parallel generic
      over [rows, k] (each element sorts its row's best k in registers); route_tokens as a loop over the choices in priority order and
      route_experts as loops (a bisection over the scores' integer keys per expert), or with
      `parallel-routing` (a GPU target's) as kernels without a chain of dependent steps
      (ParallelRoutingPatterns.cpp: cumsums, 256-way counts, binary searches); gather_rows
      as a gather.
    - scans and scatters as `scf.for` loops on tensors: cumsum (any axis, forward or reverse,
      float or integer; the loop carries the running sum, a slice with the axis of size 1, and
      the result, built with `tensor.extract_slice` / `tensor.insert_slice`), embedding_grad
      (gradient collapsed to [N, D], ids to [N]; one iteration per id adds its gradient row into
      row `ids[n]` of the zero-filled [vocab, D] result; ids must be in range, not checked).
    - repeat (static shapes): an `scf.for` over the count (down from count − 1 with `reverse`)
      whose iteration arguments are the carried values and the stacked results (from
      `tensor.empty`); `over` operands are sliced at the iteration with a rank-reducing
      `tensor.extract_slice`, the body is cloned into the loop and its step ops lowered in
      turn, stacked yields are inserted with `tensor.insert_slice`, and each new carried value
      is copied into its iteration argument (`linalg.copy`) so that one-shot bufferization
      sees yielded values equivalent to the iteration arguments.
    - conv1d, conv1d_grad_input, conv1d_grad_weight (causal and valid, groups; accumulating
      in the element type, run-tested in f32): the zero padding is explicit
      (`linalg.fill` + `tensor.insert_slice` on the sequence axis), then one `linalg.generic`
      over the definition y[b, t, o] = Σ_k Σ_c x[b, t + k − pad, g(o)·Cin/groups + c]·w[k, c, o]
      (grad_input computes [B, S, groups, Cin/groups] from the weight expanded to
      [K, Cin/groups, groups, Cout/groups] and collapses it). Groups must divide both channel
      counts (declined otherwise).
      A convolution marked `step.winograd_tile = m` (--step-choose-conv-algorithm) is
      instead computed by Winograd's F(m, K): an input, a weight and an output transform
      kernel around α = m + K − 1 GEMM contractions (WinogradPatterns.cpp).
    Not covered (left as step ops): bf16/f16 softmax, log_softmax, cross_entropy, layer_norm
    and rms_norm, dropout, jitter, call, custom_grad.

    Before:
    ```mlir
    func.func @f(%x: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
      %0 = step.add %x, %b : tensor<2x3xf32>, tensor<3xf32>
      return %0 : tensor<2x3xf32>
    }
    ```
    After:
    ```mlir
    func.func @f(%x: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
      %e = tensor.empty() : tensor<2x3xf32>
      %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                            affine_map<(d0, d1) -> (d1)>,
                                            affine_map<(d0, d1) -> (d0, d1)>],
                           iterator_types = ["parallel", "parallel"]}
          ins(%x, %b : tensor<2x3xf32>, tensor<3xf32>) outs(%e : tensor<2x3xf32>) {
      ^bb0(%a: f32, %c: f32, %out: f32):
        %s = arith.addf %a, %c : f32
        linalg.yield %s : f32
      } -> tensor<2x3xf32>
      return %0 : tensor<2x3xf32>
    }
    ```
    The result runs on the CPU through upstream passes (one-shot bufferization, linalg to
    loops, and conversion to the LLVM dialect); tests/lit/compiler/Conversion/StepToLinalg/lower_to_linalg_run*.mlir do so.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let options = [
    Option<"parallelRouting", "parallel-routing", "bool", /*default=*/"false",
           "route_tokens and route_experts as parallel kernels (a GPU target's), not loops "
           "over the choices or tokens (the CPU's: a GPU would run them in one thread)">,
  ];
}

def ChooseConvAlgorithm : Pass<"step-choose-conv-algorithm", "mlir::ModuleOp"> {
  let summary = "Marks the convolutions that --step-lower-to-linalg computes by Winograd's F(m, K)";
  let description = [{
    Chooses, per op and shape, how `step.conv1d`, `step.conv1d_grad_input` and
    `step.conv1d_grad_weight` in `func.func` bodies are computed: an op marked with
    `step.winograd_tile = m` is lowered by Winograd's minimal filtering F(m, K)
    (WinogradPatterns.cpp: α = m + K − 1 GEMMs over the channels instead of K), any other
    by the direct GEMMs over the convolution's window.

    `algorithm`:
    - `direct`: nothing is marked.
    - `auto` (the CPU's default): an f32 convolution with one group, K ≥ 3 and at least
      `min-channels` input and output channels, whose output sequence holds at least two
      tiles: there the GEMMs are large enough that the α / (m·K) share of their work is what
      the step pays, and the transforms' memory passes are small beside them. Narrow
      convolutions (byte_lm's small configuration, I = 32) keep the direct form, whose GEMMs
      already reach the library's rate and whose K·Cin window is the deeper reduction.
    - `winograd`: every f32 convolution with one group and m + K − 1 ≤ 14.
    `tile` is m (default 4: F(4, 7) has 2.8x fewer multiplications than the direct
    convolution at about 1e-5 relative error in f32; larger tiles save more and lose more
    digits). The three ops of one convolution are chosen alike, so the forward and both
    gradients use the same algorithm.

    A marked op whose batch splits into chunks of at least `chunk-rows` tile rows (batch
    entries × tiles per sequence) is also marked `step.winograd_chunks = c`, the most such
    chunks: its tiles, transformed tiles and GEMM products are then made one batch chunk at
    a time (the weight gradient accumulating its α products over the chunks), so those arena
    temporaries, which are live at the step's memory peak in the backward, take 1/c of the
    space. The GEMMs keep at least `chunk-rows` rows (default 256, where the library's rate
    on byte_lm_residual's [rows × 512] · [512 × 1536] planes is within a few percent of the
    whole batch's). `chunk-rows = 0` keeps every op in one chunk.

    Before:
    ```mlir
    %y = step.conv1d %x, %w {padding = "causal"} : (tensor<16x256x512xf32>, tensor<7x512x1536xf32>) -> tensor<16x256x1536xf32>
    ```
    After (`algorithm=auto`):
    ```mlir
    %y = step.conv1d %x, %w {padding = "causal", step.winograd_chunks = 4 : i64, step.winograd_tile = 4 : i64} : ...
    ```
  }];
  let options = [
    Option<"algorithm", "algorithm", "std::string", /*default=*/"\"direct\"",
           "direct, auto or winograd">,
    Option<"tile", "tile", "int64_t", /*default=*/"4", "outputs per Winograd tile (m)">,
    Option<"minChannels", "min-channels", "int64_t", /*default=*/"128",
           "auto: the fewest input and output channels taken">,
    Option<"chunkRows", "chunk-rows", "int64_t", /*default=*/"256",
           "the fewest tile rows in a batch chunk of a Winograd convolution (0: no chunks)">,
    Option<"testOnlyPerturb", "test-only-perturb", "bool", /*default=*/"false",
           "tests only: also mark each op step.winograd_perturb, which moves one coefficient "
           "of G by 1% (a wrong transform the numeric tests must catch)">,
  ];
}

#endif // STEPC_LOWERING_PASSES_TD
