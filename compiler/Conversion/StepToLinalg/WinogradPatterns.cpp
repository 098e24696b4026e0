//===- WinogradPatterns.cpp - convolutions by Winograd's minimal filtering -===//
//
// A conv1d, conv1d_grad_input or conv1d_grad_weight that --step-choose-conv-algorithm marked
// with `step.winograd_tile = m` is lowered by F(m, K) (WinogradTransforms.h) instead of the
// direct GEMMs of ConvolutionPatterns. Each is an exact identity in real arithmetic; in f32
// its error is the transforms' (benchmarks/README.md measures it against the direct form).
//
// Forward, on the padded input xp [B, L, Cin] (L ≥ T·m + K - 1, T = ⌈S_out / m⌉ tiles per
// sequence; tile t reads xp[t·m .. t·m + α)):
//   V[ξ, b, t, c]  = Σ_j Bᵀ[ξ, j] · xp[b, t·m + j, c]     one kernel, input j the stride-m slice
//   U[ξ, c, o]     = Σ_k G[ξ, k] · w[k, c, o]             one kernel
//   P[ξ]           = V[ξ] · U[ξ]  ([B·T, Cin] · [Cin, Cout]) α library GEMMs
//   y[b, t·m + i]  = Σ_ξ Aᵀ[i, ξ] · P[ξ, b, t]            one kernel
// The GEMMs do α·Cin·Cout multiply-adds per tile instead of m·K·Cin·Cout (2.8x fewer for
// F(4, 7)); the transforms are memory-bound passes, each one all-parallel kernel whose output
// index picks its coefficients (transformKernel), so no tile is copied out and nothing is
// zero-filled first.
// - conv1d_grad_input is the forward form on the gradient (padded as ConvolutionPatterns pads
//   it) with the filter wf[k] = w[K-1-k]ᵀ: its transform reverses G's columns and the GEMMs
//   take U's planes transposed, so the weight is never flipped in memory.
// - conv1d_grad_weight is the forward formula's derivative in w, the same identity:
//   dw[k] = Σ_ξ G[ξ, k] · (V[ξ]ᵀ · Z[ξ]),  Z[ξ, b, t] = Σ_i Aᵀ[i, ξ] · g[b, t·m + i]
//   (g zero past S_out), α GEMMs [Cin, B·T] · [B·T, Cout].
// With `step.winograd_chunks = c` the tiles are made c batch chunks at a time, one iteration
// of an scf.for each: the transformed tiles and the α products of one chunk are live at once,
// not the whole batch's (the weight gradient's dU, the loop's carried value, accumulates over
// the chunks). One loop, not c unrolled copies: the IR, and the bufferization analysis, whose
// cost grows with the square of an alias set, stay the size of one chunk's.
// f32 with one group only (the marking pass checks it; bf16 keeps the direct GEMMs).
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/StepToLinalg/ConvolutionHelpers.h"
#include "compiler/Conversion/StepToLinalg/LoweringUtils.h"
#include "compiler/Conversion/StepToLinalg/Patterns.h"
#include "compiler/Conversion/StepToLinalg/WinogradTransforms.h"
#include "dialects/step/IR/StepDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace stepc::lowering {
namespace {

using mlir::Value;

mlir::RankedTensorType tensorOf(Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType());
}

llvm::SmallVector<mlir::OpFoldResult> indexAttrs(mlir::OpBuilder &b,
                                                 llvm::ArrayRef<int64_t> values) {
  llvm::SmallVector<mlir::OpFoldResult> attrs;
  for (int64_t v : values) attrs.push_back(b.getIndexAttr(v));
  return attrs;
}

// value[:, offset : offset + count·stride : stride, :] of a [B, L, C] tensor.
Value sequenceSlice(mlir::OpBuilder &b, mlir::Location loc, Value value, int64_t offset,
                    int64_t count, int64_t stride) {
  auto t = tensorOf(value);
  auto type = mlir::RankedTensorType::get({t.getDimSize(0), count, t.getDimSize(2)},
                                          t.getElementType());
  return b.create<mlir::tensor::ExtractSliceOp>(
      loc, type, value, indexAttrs(b, {0, offset, 0}),
      indexAttrs(b, {t.getDimSize(0), count, t.getDimSize(2)}), indexAttrs(b, {1, stride, 1}));
}

// Plane ξ of a [α, R, C] tensor as [R, C].
Value plane(mlir::OpBuilder &b, mlir::Location loc, Value value, int64_t x) {
  auto t = tensorOf(value);
  auto type = mlir::RankedTensorType::get({t.getDimSize(1), t.getDimSize(2)}, t.getElementType());
  return b.create<mlir::tensor::ExtractSliceOp>(
      loc, type, value, indexAttrs(b, {x, 0, 0}),
      indexAttrs(b, {1, t.getDimSize(1), t.getDimSize(2)}), indexAttrs(b, {1, 1, 1}));
}

// One transform as one all-parallel kernel: out = Σ_n table[row, n] · inputs[n], where `row`
// is the value of loop `rowLoop` (the transform's output index: ξ, i or k) and every input is
// read through `inputMap` (all the inputs are slices of one shape, so no loop is summed and
// nothing needs a zero fill). Each coefficient is a chain of selects on constants that
// depends only on the row loop, which is outside the contiguous channel loop, so LLVM hoists
// it and the channel loop is a vectorised sum of scaled rows. Inputs whose column is all zero
// are not read. `init`, when given, is a tensor of the result's type whose buffer the kernel
// overwrites (the batch chunk's rows of the whole result, see winogradCorrelation).
Value transformKernel(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType resultType,
                      llvm::ArrayRef<Value> inputs, mlir::AffineMap inputMap,
                      mlir::AffineMap outputMap, unsigned rowLoop,
                      llvm::function_ref<double(int64_t row, int64_t n)> table, int64_t rows,
                      Value init = nullptr) {
  using mlir::utils::IteratorType;
  llvm::SmallVector<Value> used;
  llvm::SmallVector<int64_t> columns;
  for (auto [n, input] : llvm::enumerate(inputs)) {
    bool any = false;
    for (int64_t r = 0; r < rows; ++r) any |= static_cast<float>(table(r, n)) != 0.0f;
    if (any) {
      used.push_back(input);
      columns.push_back(n);
    }
  }
  llvm::SmallVector<mlir::AffineMap> maps(used.size(), inputMap);
  maps.push_back(outputMap);
  return b
      .create<mlir::linalg::GenericOp>(
          loc, mlir::TypeRange{resultType}, used,
          mlir::ValueRange{init ? init : emptyTensor(b, loc, resultType)},
          maps, llvm::SmallVector<IteratorType>(outputMap.getNumDims(), IteratorType::parallel),
          [&](mlir::OpBuilder &bb, mlir::Location l, mlir::ValueRange args) {
            Value row = bb.create<mlir::linalg::IndexOp>(l, rowLoop);
            Value sum;
            for (auto [i, n] : llvm::enumerate(columns)) {
              Value coefficient = bb.create<mlir::arith::ConstantOp>(l, bb.getF32FloatAttr(0.0f));
              for (int64_t r = 0; r < rows; ++r) {
                float value = static_cast<float>(table(r, n));
                if (value == 0.0f) continue;
                Value hit = bb.create<mlir::arith::CmpIOp>(
                    l, mlir::arith::CmpIPredicate::eq, row,
                    bb.create<mlir::arith::ConstantIndexOp>(l, r));
                coefficient = bb.create<mlir::arith::SelectOp>(
                    l, hit, bb.create<mlir::arith::ConstantOp>(l, bb.getF32FloatAttr(value)),
                    coefficient);
              }
              Value term = bb.create<mlir::arith::MulFOp>(l, coefficient, args[i]);
              sum = sum ? Value(bb.create<mlir::arith::AddFOp>(l, sum, term)) : term;
            }
            if (!sum) sum = bb.create<mlir::arith::ConstantOp>(l, bb.getF32FloatAttr(0.0f));
            bb.create<mlir::linalg::YieldOp>(l, sum);
          })
      .getResult(0);
}

mlir::AffineMap loopMap(mlir::MLIRContext *ctx, unsigned loops, llvm::ArrayRef<unsigned> dims) {
  llvm::SmallVector<mlir::AffineExpr> exprs;
  for (unsigned d : dims) exprs.push_back(mlir::getAffineDimExpr(d, ctx));
  return mlir::AffineMap::get(loops, 0, exprs, ctx);
}

// V [α, B·T, C]: V[ξ, b·T + t, c] = Σ_j Bᵀ[ξ, j] · xp[b, t·m + j, c] of xp [B, L, C], tap j
// read as the stride-m slice xp[:, j : : m]. Loops (b, t, ξ, c): a tile's α input rows stay
// in cache while its α outputs are made.
Value inputTransform(mlir::OpBuilder &b, mlir::Location loc, Value xp,
                     const WinogradTransforms &tr, int64_t tiles) {
  auto t = tensorOf(xp);
  int64_t batch = t.getDimSize(0), channels = t.getDimSize(2);
  mlir::MLIRContext *ctx = b.getContext();
  llvm::SmallVector<Value> taps;
  for (int64_t j = 0; j < tr.alpha; ++j) taps.push_back(sequenceSlice(b, loc, xp, j, tiles, tr.m));
  auto type = mlir::RankedTensorType::get({tr.alpha, batch, tiles, channels}, t.getElementType());
  Value v = transformKernel(b, loc, type, taps, loopMap(ctx, 4, {0, 1, 3}),
                            loopMap(ctx, 4, {2, 0, 1, 3}), 2,
                            [&](int64_t x, int64_t j) { return tr.btAt(x, j); }, tr.alpha);
  return b.create<mlir::tensor::CollapseShapeOp>(
      loc, mlir::RankedTensorType::get({tr.alpha, batch * tiles, channels}, t.getElementType()),
      v, llvm::SmallVector<mlir::ReassociationIndices>{{0}, {1, 2}, {3}});
}

// U [α, Cin, Cout]: U[ξ] = Σ_k G[ξ, k] · w[k] of a [K, Cin, Cout] weight, or with the taps in
// reverse order (`flipped`: the input gradient's filter, whose transpose the GEMM takes).
Value weightTransform(mlir::OpBuilder &b, mlir::Location loc, Value weight,
                      const WinogradTransforms &tr, bool flipped) {
  auto t = tensorOf(weight);
  mlir::MLIRContext *ctx = b.getContext();
  llvm::SmallVector<Value> taps;
  for (int64_t k = 0; k < tr.r; ++k) taps.push_back(tap(b, loc, weight, k));
  auto type = mlir::RankedTensorType::get({tr.alpha, t.getDimSize(1), t.getDimSize(2)},
                                          t.getElementType());
  return transformKernel(
      b, loc, type, taps, loopMap(ctx, 3, {1, 2}), loopMap(ctx, 3, {0, 1, 2}), 0,
      [&](int64_t x, int64_t k) { return tr.gAt(x, flipped ? tr.r - 1 - k : k); }, tr.alpha);
}

// P [α, rows, cols] with P[ξ] = op(lhs[ξ]) · op(rhs[ξ]): one batched contraction over ξ (a
// library batch GEMM), overwriting P (its zero fill becomes the GEMM's beta = 0), or with
// `accumulate` (a [α, rows, cols] tensor) P[ξ] = accumulate[ξ] + op(lhs[ξ]) · op(rhs[ξ]), which
// the GEMM does in place. One batch rather than α GEMMs one after the other: the runtime runs a
// batch's GEMMs side by side, each whole on one thread (Gemm.cpp), so each thread packs only
// its own planes; α GEMMs each split over the threads had every thread pack the same lhs
// plane, in every column block (byte_lm_residual's planes ran at 62-88% of the FMA peak so).
Value planeGemms(mlir::OpBuilder &b, mlir::Location loc, Value lhs, Value rhs, int64_t rows,
                 int64_t cols, bool transLhs, bool transRhs, int64_t alpha,
                 Value accumulate = nullptr) {
  mlir::Type f32 = b.getF32Type();
  Value all = accumulate;
  if (!all)
    all = b.create<mlir::linalg::FillOp>(
                loc, scalarConstant(b, loc, f32, 0.0),
                emptyTensor(b, loc, mlir::RankedTensorType::get({alpha, rows, cols}, f32)))
              .getResult(0);
  return matmulInto(b, loc, lhs, rhs, all, transLhs, transRhs);
}

// value[b0 : b0 + count] of a [B, ...] tensor: one batch chunk (b0 the chunk loop's index).
Value batchSlice(mlir::OpBuilder &b, mlir::Location loc, Value value, mlir::OpFoldResult b0,
                 int64_t count) {
  auto t = tensorOf(value);
  llvm::SmallVector<int64_t> shape(t.getShape()), strides(t.getRank(), 1);
  shape[0] = count;
  llvm::SmallVector<mlir::OpFoldResult> offsets(t.getRank(), b.getIndexAttr(0));
  offsets[0] = b0;
  return b.create<mlir::tensor::ExtractSliceOp>(
      loc, mlir::RankedTensorType::get(shape, t.getElementType()), value, offsets,
      indexAttrs(b, shape), indexAttrs(b, strides));
}

// value with `part` written at value[b0 : b0 + count].
Value insertBatchSlice(mlir::OpBuilder &b, mlir::Location loc, Value part, Value value,
                       mlir::OpFoldResult b0) {
  auto t = tensorOf(part);
  llvm::SmallVector<mlir::OpFoldResult> offsets(t.getRank(), b.getIndexAttr(0));
  offsets[0] = b0;
  return b.create<mlir::tensor::InsertSliceOp>(
      loc, part, value, offsets, indexAttrs(b, t.getShape()),
      indexAttrs(b, llvm::SmallVector<int64_t>(t.getRank(), 1)));
}

// `body(b0, carried)` for each batch chunk b0 = 0, rows, 2·rows, ... < batch, carrying one
// tensor: one scf.for, or the body once (b0 = 0) when there is one chunk.
Value forEachChunk(mlir::OpBuilder &b, mlir::Location loc, int64_t batch, int64_t rows,
                   Value init,
                   llvm::function_ref<Value(mlir::OpBuilder &, mlir::Location,
                                            mlir::OpFoldResult, Value)> body) {
  if (rows == batch) return body(b, loc, b.getIndexAttr(0), init);
  auto index = [&](int64_t v) { return b.create<mlir::arith::ConstantIndexOp>(loc, v); };
  return b
      .create<mlir::scf::ForOp>(
          loc, index(0), index(batch), index(rows), mlir::ValueRange{init},
          [&](mlir::OpBuilder &bb, mlir::Location l, Value b0, mlir::ValueRange carried) {
            bb.create<mlir::scf::YieldOp>(l, body(bb, l, b0, carried[0]));
          })
      .getResult(0);
}

// y [B, outSeq, Cout]: the correlation y[b, s] = Σ_k xp[b, s + k] · w[k] for s < outSeq by
// F(m, K), xp long enough for every tile, the tiles made `chunks` batch chunks at a time (the
// weight transformed once). Each chunk's output transform writes its rows of one [B, T, m,
// Cout] tensor through an insert_slice with no reshape in between, which
// --eliminate-empty-tensors turns into a write in place. With `flipped` the filter is instead
// wf[k] = w[K-1-k]ᵀ (the input gradient's), and Cout is w's Cin.
Value winogradCorrelation(mlir::OpBuilder &b, mlir::Location loc, Value xp, Value weight,
                          int64_t outSeq, const WinogradTransforms &tr, bool flipped,
                          int64_t chunks) {
  auto wType = tensorOf(weight);
  int64_t batch = tensorOf(xp).getDimSize(0), rows = batch / chunks;
  int64_t cout = wType.getDimSize(flipped ? 1 : 2);
  int64_t tiles = (outSeq + tr.m - 1) / tr.m;
  mlir::Type f32 = b.getF32Type();
  mlir::MLIRContext *ctx = b.getContext();
  Value u = weightTransform(b, loc, weight, tr, flipped);
  auto yType = mlir::RankedTensorType::get({batch, tiles, tr.m, cout}, f32);
  auto partType = mlir::RankedTensorType::get({rows, tiles, tr.m, cout}, f32);
  // Each chunk's output transform writes its rows of y in place (extract, compute, insert).
  Value y = forEachChunk(
      b, loc, batch, rows, emptyTensor(b, loc, yType),
      [&](mlir::OpBuilder &bb, mlir::Location l, mlir::OpFoldResult b0, Value yAll) {
        Value v = inputTransform(bb, l, batchSlice(bb, l, xp, b0, rows), tr, tiles);
        Value products =
            planeGemms(bb, l, v, u, rows * tiles, cout, false, flipped, tr.alpha);
        auto planeType = mlir::RankedTensorType::get({rows, tiles, cout}, f32);
        llvm::SmallVector<Value> planes;
        for (int64_t x = 0; x < tr.alpha; ++x)
          planes.push_back(bb.create<mlir::tensor::ExpandShapeOp>(
              l, planeType, plane(bb, l, products, x),
              llvm::SmallVector<mlir::ReassociationIndices>{{0, 1}, {2}}));
        // y[b, t, i, o] = Σ_ξ Aᵀ[i, ξ] · P[ξ, b, t, o]; loops (b, t, i, o).
        Value part = transformKernel(
            bb, l, partType, planes, loopMap(ctx, 4, {0, 1, 3}), loopMap(ctx, 4, {0, 1, 2, 3}),
            2, [&](int64_t i, int64_t x) { return tr.atAt(i, x); }, tr.m,
            rows == batch ? yAll : batchSlice(bb, l, yAll, b0, rows));
        return rows == batch ? part : insertBatchSlice(bb, l, part, yAll, b0);
      });
  Value full = b.create<mlir::tensor::CollapseShapeOp>(
      loc, mlir::RankedTensorType::get({batch, tiles * tr.m, cout}, f32), y,
      llvm::SmallVector<mlir::ReassociationIndices>{{0}, {1, 2}, {3}});
  if (tiles * tr.m == outSeq) return full;
  return b.create<mlir::tensor::ExtractSliceOp>(
      loc, mlir::RankedTensorType::get({batch, outSeq, cout}, f32), full,
      indexAttrs(b, {0, 0, 0}), indexAttrs(b, {batch, outSeq, cout}), indexAttrs(b, {1, 1, 1}));
}

// The op's F(m, K) when it is marked and of the shapes the lowering takes (the marking pass
// checks the same; an op marked by hand that does not fit is lowered directly).
std::optional<WinogradTransforms> marked(mlir::Operation *op, int64_t kernel) {
  auto tile = op->getAttrOfType<mlir::IntegerAttr>(kWinogradTileAttr);
  if (!tile) return std::nullopt;
  llvm::SmallVector<mlir::Type> types(op->getOperandTypes());
  llvm::append_range(types, op->getResultTypes());
  for (mlir::Type type : types) {
    auto t = llvm::dyn_cast<mlir::RankedTensorType>(type);
    if (!t || t.getRank() != 3 || !t.hasStaticShape() || !t.getElementType().isF32())
      return std::nullopt;
  }
  if (auto groups = op->getAttrOfType<mlir::IntegerAttr>("groups"); groups && groups.getInt() != 1)
    return std::nullopt;
  std::optional<WinogradTransforms> transforms = winogradTransforms(tile.getInt(), kernel);
  if (transforms && op->hasAttr(kWinogradPerturbAttr)) transforms->g.back() *= 1.01;
  return transforms;
}

// The op's batch chunks (kWinogradChunksAttr): 1 when absent or not a divisor of the batch.
int64_t chunksOf(mlir::Operation *op, int64_t batch) {
  auto chunks = op->getAttrOfType<mlir::IntegerAttr>(kWinogradChunksAttr);
  if (!chunks || chunks.getInt() < 1 || batch % chunks.getInt() != 0) return 1;
  return chunks.getInt();
}

int64_t padOf(llvm::StringRef padding, int64_t kernel) {
  return padding == "causal" ? kernel - 1 : 0;
}

struct Conv1dWinograd : mlir::OpRewritePattern<step::Conv1dOp> {
  Conv1dWinograd(mlir::MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/3) {}
  mlir::LogicalResult matchAndRewrite(step::Conv1dOp op,
                                      mlir::PatternRewriter &rw) const override {
    int64_t kernel = tensorOf(op.getWeight()).getDimSize(0);
    std::optional<WinogradTransforms> tr = marked(op, kernel);
    if (!tr) return mlir::failure();
    int64_t seq = tensorOf(op.getInput()).getDimSize(1);
    int64_t outSeq = tensorOf(op.getResult()).getDimSize(1);
    int64_t pad = padOf(op.getPadding(), kernel);
    int64_t length = (outSeq + tr->m - 1) / tr->m * tr->m + kernel - 1;
    if (length < pad + seq) return mlir::failure();
    Value xp = padSequence(rw, op.getLoc(), op.getInput(), pad, length - pad - seq);
    int64_t chunks = chunksOf(op, tensorOf(op.getInput()).getDimSize(0));
    rw.replaceOp(op, winogradCorrelation(rw, op.getLoc(), xp, op.getWeight(), outSeq, *tr, false,
                                         chunks));
    return mlir::success();
  }
};

struct Conv1dGradInputWinograd : mlir::OpRewritePattern<step::Conv1dGradInputOp> {
  Conv1dGradInputWinograd(mlir::MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/3) {}
  mlir::LogicalResult matchAndRewrite(step::Conv1dGradInputOp op,
                                      mlir::PatternRewriter &rw) const override {
    int64_t kernel = tensorOf(op.getWeight()).getDimSize(0);
    std::optional<WinogradTransforms> tr = marked(op, kernel);
    if (!tr) return mlir::failure();
    int64_t seq = tensorOf(op.getResult()).getDimSize(1);
    int64_t outSeq = tensorOf(op.getGrad()).getDimSize(1);
    // dx[s] = Σ_k gp[s + k] · w[K-1-k]ᵀ with the gradient shifted right by K-1-pad.
    int64_t left = kernel - 1 - padOf(op.getPadding(), kernel);
    int64_t length = (seq + tr->m - 1) / tr->m * tr->m + kernel - 1;
    if (left < 0 || length < left + outSeq) return mlir::failure();
    Value gp = padSequence(rw, op.getLoc(), op.getGrad(), left, length - left - outSeq);
    int64_t chunks = chunksOf(op, tensorOf(op.getGrad()).getDimSize(0));
    rw.replaceOp(op, winogradCorrelation(rw, op.getLoc(), gp, op.getWeight(), seq, *tr, true,
                                         chunks));
    return mlir::success();
  }
};

struct Conv1dGradWeightWinograd : mlir::OpRewritePattern<step::Conv1dGradWeightOp> {
  Conv1dGradWeightWinograd(mlir::MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/3) {}
  mlir::LogicalResult matchAndRewrite(step::Conv1dGradWeightOp op,
                                      mlir::PatternRewriter &rw) const override {
    auto dwType = tensorOf(op.getResult());
    int64_t kernel = dwType.getDimSize(0), cin = dwType.getDimSize(1),
            cout = dwType.getDimSize(2);
    std::optional<WinogradTransforms> tr = marked(op, kernel);
    if (!tr) return mlir::failure();
    mlir::Location loc = op.getLoc();
    auto gType = tensorOf(op.getGrad());
    int64_t batch = gType.getDimSize(0), outSeq = gType.getDimSize(1);
    int64_t seq = tensorOf(op.getInput()).getDimSize(1);
    int64_t pad = padOf(op.getPadding(), kernel);
    int64_t tiles = (outSeq + tr->m - 1) / tr->m;
    int64_t length = tiles * tr->m + kernel - 1;
    if (length < pad + seq) return mlir::failure();
    Value xp = padSequence(rw, loc, op.getInput(), pad, length - pad - seq);
    Value gp = padSequence(rw, loc, op.getGrad(), 0, tiles * tr->m - outSeq);
    mlir::Type f32 = rw.getF32Type();
    mlir::MLIRContext *ctx = getContext();
    // Per batch chunk: V of its input, Z[ξ, b, t, o] = Σ_i Aᵀ[i, ξ] · g[b, t·m + i, o] (the
    // output transform's transpose; loops (b, t, ξ, o)) and dU[ξ] += V[ξ]ᵀ · Z[ξ], the chunks
    // summed in order (the GEMMs accumulate in place into the loop's carried dU, zero first).
    int64_t chunks = chunksOf(op, batch), rows = batch / chunks;
    auto duType = mlir::RankedTensorType::get({tr->alpha, cin, cout}, f32);
    // (One chunk: each GEMM overwrites its plane, no zero fill.)
    Value zero = chunks == 1 ? Value()
                             : rw.create<mlir::linalg::FillOp>(
                                     loc, scalarConstant(rw, loc, f32, 0.0),
                                     emptyTensor(rw, loc, duType))
                                   .getResult(0);
    Value du = forEachChunk(
        rw, loc, batch, rows, zero,
        [&](mlir::OpBuilder &bb, mlir::Location l, mlir::OpFoldResult b0, Value duAll) {
          Value v = inputTransform(bb, l, batchSlice(bb, l, xp, b0, rows), *tr, tiles);
          Value gc = batchSlice(bb, l, gp, b0, rows);
          llvm::SmallVector<Value> outputs;
          for (int64_t i = 0; i < tr->m; ++i)
            outputs.push_back(sequenceSlice(bb, l, gc, i, tiles, tr->m));
          Value z4 = transformKernel(
              bb, l, mlir::RankedTensorType::get({tr->alpha, rows, tiles, cout}, f32), outputs,
              loopMap(ctx, 4, {0, 1, 3}), loopMap(ctx, 4, {2, 0, 1, 3}), 2,
              [&](int64_t x, int64_t i) { return tr->atAt(i, x); }, tr->alpha);
          Value z = bb.create<mlir::tensor::CollapseShapeOp>(
              l, mlir::RankedTensorType::get({tr->alpha, rows * tiles, cout}, f32), z4,
              llvm::SmallVector<mlir::ReassociationIndices>{{0}, {1, 2}, {3}});
          return planeGemms(bb, l, v, z, cin, cout, true, false, tr->alpha, duAll);
        });
    // dw[k] = Σ_ξ G[ξ, k] · dU[ξ]; loops (k, c, o).
    llvm::SmallVector<Value> planes;
    for (int64_t x = 0; x < tr->alpha; ++x) planes.push_back(plane(rw, loc, du, x));
    Value dw = transformKernel(rw, loc, dwType, planes, loopMap(ctx, 3, {1, 2}),
                               loopMap(ctx, 3, {0, 1, 2}), 0,
                               [&](int64_t k, int64_t x) { return tr->gAt(x, k); }, kernel);
    rw.replaceOp(op, dw);
    return mlir::success();
  }
};

}  // namespace

void populateWinogradPatterns(mlir::RewritePatternSet &patterns) {
  patterns.add<Conv1dWinograd, Conv1dGradInputWinograd, Conv1dGradWeightWinograd>(
      patterns.getContext());
}

}  // namespace stepc::lowering
