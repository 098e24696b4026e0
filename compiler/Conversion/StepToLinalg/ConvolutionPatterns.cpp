//===- ConvolutionPatterns.cpp - conv1d and its gradients → linalg.generic -===//
//
// All three follow the interpreter's definition (channels last, stride 1):
//   y[b, t, o] = Σ_k Σ_c x[b, t + k - pad, g(o) * Cin/groups + c] · w[k, c, o]
// with pad = K - 1 for "causal" and 0 for "valid", x zero outside [0, S), and
// g(o) = o floordiv (Cout/groups). Zero padding is explicit (a zero-filled tensor with the
// operand inserted), so every generic reads in bounds through affine maps:
// - conv1d: loops (b, t, o, k, c), reading xpad[b, t + k, g(o)·Cin/g + c] and w[k, c, o].
// - conv1d_grad_input: dx[b, s, h·Cin/g + i] = Σ_k Σ_j gpad[b, s + k, h·Cout/g + j] ·
//   wf[k, h·Cout/g + j, i] for group h, with wf the taps reversed and transposed
//   (flippedTaps: wf[k, o, i] = w[K-1-k, i, o]), computed as [B, S, groups, Cin/g] and
//   collapsed; the gradient is padded by K-1-pad on the left and so that the last index is in
//   range on the right. (Reading w[K-1-k] or gpad[s + K-1 - k] through a map instead would
//   make a kernel that cannot be tiled: kernel tiling miscounts an index that is not zero at
//   the origin, so TileKernels leaves such kernels whole.)
// - conv1d_grad_weight: dw[k, c, o] = Σ_b Σ_t xpad[b, t + k, g(o)·Cin/g + c] · g[b, t, o].
// Groups must divide both channel counts (declined otherwise).
//
// With one group (the common case) the three are instead GEMMs over time-shifted views, with
// no im2col copy: flatten the padded sequence to rows, [B·P, C]; tap k of the convolution is
// then one contiguous row window, rows [k, k + R) with R = (B-1)·P + T, and
//   y  rows  = Σ_k X[k : k+R] · w[k]              (B·P-row space; rows t >= T of a batch mix
//   dx rows  = Σ_s G[s : s+R] · w[K-1-s]ᵀ           two sequences and are dropped)
//   dw[k]    = X[k : k+R]ᵀ · G0[0 : R]             (G0: the gradient padded with zeros to P,
//                                                   so the mixed rows contribute nothing)
// Each is a 2-D contraction that the backend turns into a library GEMM; the wasted rows are
// (K-1)/P of the work (4% for K = 11, S = 256). The input gradient's taps are flipped and
// transposed once (flippedTaps), so that all three read consecutive row windows in the order
// of consecutive weight rows; on the CPU, --step-windowed-gemms then runs the K GEMMs as one
// over the overlapping [R, K·C] window (a K·C-deep reduction instead of K C-deep ones). bf16 operands (--precision=bf16) stay bf16:
// the GEMMs extend them in their bodies and accumulate in f32 (bf16 tensor-core GEMMs on the
// GPU), and the sum is rounded to the result's type once.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/StepToLinalg/ConvolutionHelpers.h"
#include "compiler/Conversion/StepToLinalg/LoweringUtils.h"
#include "compiler/Conversion/StepToLinalg/Patterns.h"
#include "dialects/step/IR/StepDialect.h"

namespace stepc::lowering {

using mlir::Value;

// `value` [B, S, C] padded with zeros on the sequence axis. Only the pad rows are filled (the
// value's rows are copied over the rest), so a long sequence is not written twice.
Value padSequence(mlir::OpBuilder &b, mlir::Location loc, Value value, int64_t left,
                  int64_t right) {
  if (left == 0 && right == 0) return value;
  auto type = llvm::cast<mlir::RankedTensorType>(value.getType());
  llvm::SmallVector<int64_t> shape(type.getShape());
  int64_t seq = shape[1];
  shape[1] += left + right;
  Value padded = emptyTensor(b, loc, mlir::RankedTensorType::get(shape, type.getElementType()));
  auto insert = [&](Value part, int64_t at) {
    auto t = llvm::cast<mlir::RankedTensorType>(part.getType());
    llvm::SmallVector<mlir::OpFoldResult> offsets = {b.getIndexAttr(0), b.getIndexAttr(at),
                                                     b.getIndexAttr(0)};
    llvm::SmallVector<mlir::OpFoldResult> sizes, strides(3, b.getIndexAttr(1));
    for (int64_t s : t.getShape()) sizes.push_back(b.getIndexAttr(s));
    padded = b.create<mlir::tensor::InsertSliceOp>(loc, part, padded, offsets, sizes, strides);
  };
  auto zeros = [&](int64_t rows) {
    return filledTensor(b, loc,
                        mlir::RankedTensorType::get({shape[0], rows, shape[2]},
                                                    type.getElementType()),
                        0.0);
  };
  if (left > 0) insert(zeros(left), 0);
  insert(value, left);
  if (right > 0) insert(zeros(right), left + seq);
  return padded;
}

namespace {

// A generic whose loops are the result's rank in parallel then two reductions, accumulating
// lhs · rhs into a zero-filled result.
Value contraction(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType resultType,
                  Value lhs, Value rhs, llvm::ArrayRef<mlir::AffineMap> maps) {
  using mlir::utils::IteratorType;
  llvm::SmallVector<IteratorType> iterators(resultType.getRank(), IteratorType::parallel);
  iterators.append({IteratorType::reduction, IteratorType::reduction});
  Value acc = filledTensor(b, loc, resultType, 0.0);
  return b
      .create<mlir::linalg::GenericOp>(
          loc, mlir::TypeRange{resultType}, mlir::ValueRange{lhs, rhs}, mlir::ValueRange{acc},
          maps, iterators,
          [&](mlir::OpBuilder &bb, mlir::Location l, mlir::ValueRange args) {
            // bf16 operands are extended (exactly) to the f32 accumulator.
            mlir::Type accElement = args[2].getType();
            auto widen = [&](Value v) -> Value {
              return v.getType() == accElement ? v
                                               : bb.create<mlir::arith::ExtFOp>(l, accElement, v);
            };
            Value product = bb.create<mlir::arith::MulFOp>(l, widen(args[0]), widen(args[1]));
            Value sum = bb.create<mlir::arith::AddFOp>(l, args[2], product);
            bb.create<mlir::linalg::YieldOp>(l, sum);
          })
      .getResult(0);
}

// bf16 / f16 operands or result: the generic lowerings accumulate in the element type, so they
// leave such a convolution to the GEMM path or to LowPrecisionPatterns' widening to f32, whatever
// order the patterns are tried in.
bool anyNarrowFloat(mlir::Operation *op) {
  auto narrow = [](mlir::Type type) {
    auto element = llvm::cast<mlir::ShapedType>(type).getElementType();
    return llvm::isa<mlir::FloatType>(element) && element.getIntOrFloatBitWidth() < 32;
  };
  return llvm::any_of(op->getOperandTypes(), narrow) || llvm::any_of(op->getResultTypes(), narrow);
}

bool staticRank3(mlir::Type type) {
  auto t = llvm::dyn_cast<mlir::RankedTensorType>(type);
  return t && t.getRank() == 3 && t.hasStaticShape();
}

mlir::AffineMap map5(mlir::MLIRContext *ctx, llvm::ArrayRef<mlir::AffineExpr> exprs) {
  return mlir::AffineMap::get(5, 0, exprs, ctx);
}

struct Conv1dLowering : mlir::OpRewritePattern<step::Conv1dOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::Conv1dOp op,
                                      mlir::PatternRewriter &rw) const override {
    if (!staticRank3(op.getInput().getType()) || !staticRank3(op.getWeight().getType()) ||
        !staticRank3(op.getType()))
      return mlir::failure();
    if (anyNarrowFloat(op)) return mlir::failure();
    auto wType = llvm::cast<mlir::RankedTensorType>(op.getWeight().getType());
    auto resultType = llvm::cast<mlir::RankedTensorType>(op.getType());
    int64_t kernel = wType.getDimSize(0), cinPG = wType.getDimSize(1),
            cout = wType.getDimSize(2), groups = op.getGroups();
    if (cout % groups) return mlir::failure();
    int64_t coutPG = cout / groups;
    int64_t pad = op.getPadding() == "causal" ? kernel - 1 : 0;
    Value x = padSequence(rw, op.getLoc(), op.getInput(), pad, 0);
    mlir::MLIRContext *ctx = getContext();
    auto d = [&](unsigned i) { return mlir::getAffineDimExpr(i, ctx); };
    mlir::AffineExpr b = d(0), t = d(1), o = d(2), k = d(3), c = d(4);
    Value y = contraction(rw, op.getLoc(), resultType, x, op.getWeight(),
                          {map5(ctx, {b, t + k, o.floorDiv(coutPG) * cinPG + c}),
                           map5(ctx, {k, c, o}), map5(ctx, {b, t, o})});
    rw.replaceOp(op, y);
    return mlir::success();
  }
};

struct Conv1dGradInputLowering : mlir::OpRewritePattern<step::Conv1dGradInputOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::Conv1dGradInputOp op,
                                      mlir::PatternRewriter &rw) const override {
    if (!staticRank3(op.getGrad().getType()) || !staticRank3(op.getWeight().getType()) ||
        !staticRank3(op.getType()))
      return mlir::failure();
    if (anyNarrowFloat(op)) return mlir::failure();
    auto wType = llvm::cast<mlir::RankedTensorType>(op.getWeight().getType());
    auto gType = llvm::cast<mlir::RankedTensorType>(op.getGrad().getType());
    auto resultType = llvm::cast<mlir::RankedTensorType>(op.getType());
    int64_t kernel = wType.getDimSize(0), cinPG = wType.getDimSize(1),
            cout = wType.getDimSize(2), groups = op.getGroups();
    int64_t seq = resultType.getDimSize(1), outSeq = gType.getDimSize(1);
    if (cout % groups || resultType.getDimSize(2) != cinPG * groups) return mlir::failure();
    int64_t coutPG = cout / groups;
    int64_t pad = op.getPadding() == "causal" ? kernel - 1 : 0;
    // The gradient index is s + pad - k, from pad - K + 1 to S - 1 + pad.
    int64_t left = kernel - 1 - pad, right = (seq - 1 + pad) - (outSeq - 1);
    if (left < 0 || right < 0) return mlir::failure();
    Value g = padSequence(rw, op.getLoc(), op.getGrad(), left, right);
    mlir::MLIRContext *ctx = getContext();
    auto d = [&](unsigned i) { return mlir::getAffineDimExpr(i, ctx); };
    // Loops (b, s, h, i, k, j) over a [B, S, groups, Cin/g] result and the flipped taps
    // expanded to [K, groups, Cout/g, Cin/g], so that every loop is a plain dimension of some
    // operand and every index an increasing sum of loops.
    mlir::AffineExpr b = d(0), s = d(1), h = d(2), i = d(3), k = d(4), j = d(5);
    mlir::Type element = resultType.getElementType();
    Value w = rw.create<mlir::tensor::ExpandShapeOp>(
        op.getLoc(), mlir::RankedTensorType::get({kernel, groups, coutPG, cinPG}, element),
        flippedTaps(rw, op.getLoc(), op.getWeight()),
        llvm::SmallVector<mlir::ReassociationIndices>{{0}, {1, 2}, {3}});
    auto splitType = mlir::RankedTensorType::get(
        {resultType.getDimSize(0), seq, groups, cinPG}, element);
    auto map6 = [&](llvm::ArrayRef<mlir::AffineExpr> exprs) {
      return mlir::AffineMap::get(6, 0, exprs, ctx);
    };
    Value split = contraction(rw, op.getLoc(), splitType, g, w,
                              {map6({b, s + k, h * coutPG + j}),
                               map6({k, h, j, i}), map6({b, s, h, i})});
    Value dx = rw.create<mlir::tensor::CollapseShapeOp>(
        op.getLoc(), resultType, split,
        llvm::SmallVector<mlir::ReassociationIndices>{{0}, {1}, {2, 3}});
    rw.replaceOp(op, dx);
    return mlir::success();
  }
};

struct Conv1dGradWeightLowering : mlir::OpRewritePattern<step::Conv1dGradWeightOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::Conv1dGradWeightOp op,
                                      mlir::PatternRewriter &rw) const override {
    if (!staticRank3(op.getInput().getType()) || !staticRank3(op.getGrad().getType()) ||
        !staticRank3(op.getType()))
      return mlir::failure();
    if (anyNarrowFloat(op)) return mlir::failure();
    auto resultType = llvm::cast<mlir::RankedTensorType>(op.getType());
    int64_t kernel = resultType.getDimSize(0), cinPG = resultType.getDimSize(1),
            cout = resultType.getDimSize(2), groups = op.getGroups();
    if (cout % groups) return mlir::failure();
    int64_t coutPG = cout / groups;
    int64_t pad = op.getPadding() == "causal" ? kernel - 1 : 0;
    Value x = padSequence(rw, op.getLoc(), op.getInput(), pad, 0);
    mlir::MLIRContext *ctx = getContext();
    auto d = [&](unsigned i) { return mlir::getAffineDimExpr(i, ctx); };
    mlir::AffineExpr k = d(0), c = d(1), o = d(2), b = d(3), t = d(4);
    Value dw = contraction(rw, op.getLoc(), resultType, x, op.getGrad(),
                           {map5(ctx, {b, t + k, o.floorDiv(coutPG) * cinPG + c}),
                            map5(ctx, {b, t, o}), map5(ctx, {k, c, o})});
    rw.replaceOp(op, dw);
    return mlir::success();
  }
};

}  // namespace

// acc[(β,) m, n] += op(a)[(β,) m, k] · op(b)[(β,) k, n] as one linalg.generic contraction,
// with a leading batch dim β when acc has rank 3.
Value matmulInto(mlir::OpBuilder &b, mlir::Location loc, Value lhs, Value rhs, Value acc,
                 bool transLhs, bool transRhs) {
  using mlir::utils::IteratorType;
  mlir::MLIRContext *ctx = b.getContext();
  unsigned batch = llvm::cast<mlir::RankedTensorType>(acc.getType()).getRank() - 2;
  unsigned loops = batch + 3;
  auto d = [&](unsigned i) { return mlir::getAffineDimExpr(i, ctx); };
  mlir::AffineExpr m = d(batch), n = d(batch + 1), k = d(batch + 2);
  auto map = [&](llvm::ArrayRef<mlir::AffineExpr> e) {
    llvm::SmallVector<mlir::AffineExpr> exprs;
    for (unsigned i = 0; i < batch; ++i) exprs.push_back(d(i));
    exprs.append(e.begin(), e.end());
    return mlir::AffineMap::get(loops, 0, exprs, ctx);
  };
  llvm::SmallVector<mlir::AffineMap> maps = {transLhs ? map({k, m}) : map({m, k}),
                                             transRhs ? map({n, k}) : map({k, n}), map({m, n})};
  llvm::SmallVector<IteratorType> iterators(loops - 1, IteratorType::parallel);
  iterators.push_back(IteratorType::reduction);
  return b
      .create<mlir::linalg::GenericOp>(
          loc, mlir::TypeRange{acc.getType()}, mlir::ValueRange{lhs, rhs}, mlir::ValueRange{acc},
          maps, iterators,
          [&](mlir::OpBuilder &bb, mlir::Location l, mlir::ValueRange args) {
            // bf16 operands are extended (exactly) to the f32 accumulator.
            mlir::Type accElement = args[2].getType();
            auto widen = [&](Value v) -> Value {
              return v.getType() == accElement ? v
                                               : bb.create<mlir::arith::ExtFOp>(l, accElement, v);
            };
            Value product = bb.create<mlir::arith::MulFOp>(l, widen(args[0]), widen(args[1]));
            Value sum = bb.create<mlir::arith::AddFOp>(l, args[2], product);
            bb.create<mlir::linalg::YieldOp>(l, sum);
          })
      .getResult(0);
}

// `value` [B, S, C] as rows [B·S, C].
Value rows(mlir::OpBuilder &b, mlir::Location loc, Value value) {
  auto t = llvm::cast<mlir::RankedTensorType>(value.getType());
  auto type = mlir::RankedTensorType::get({t.getDimSize(0) * t.getDimSize(1), t.getDimSize(2)},
                                          t.getElementType());
  return b.create<mlir::tensor::CollapseShapeOp>(
      loc, type, value, llvm::SmallVector<mlir::ReassociationIndices>{{0, 1}, {2}});
}

// Rows [offset, offset + count) of a 2-D tensor, or `index` of the leading axis of a 3-D one.
Value rowWindow(mlir::OpBuilder &b, mlir::Location loc, Value value, int64_t offset,
                int64_t count) {
  auto t = llvm::cast<mlir::RankedTensorType>(value.getType());
  auto type = mlir::RankedTensorType::get({count, t.getDimSize(1)}, t.getElementType());
  return b.create<mlir::tensor::ExtractSliceOp>(
      loc, type, value, llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(offset), b.getIndexAttr(0)},
      llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(count), b.getIndexAttr(t.getDimSize(1))},
      llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
}
Value tap(mlir::OpBuilder &b, mlir::Location loc, Value weight, int64_t k) {
  auto t = llvm::cast<mlir::RankedTensorType>(weight.getType());
  auto type = mlir::RankedTensorType::get({t.getDimSize(1), t.getDimSize(2)}, t.getElementType());
  return b.create<mlir::tensor::ExtractSliceOp>(
      loc, type, weight,
      llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(k), b.getIndexAttr(0), b.getIndexAttr(0)},
      llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(t.getDimSize(1)),
                                         b.getIndexAttr(t.getDimSize(2))},
      llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1), b.getIndexAttr(1)});
}

namespace {

// Σ_taps window(shift(k)) · op(w[k]) accumulated over rows [0, R) of a [batch·P, N] zero
// tensor, then viewed as [batch, P, N] and cut to the first `keep` positions of each sequence.
Value shiftedGemmSum(mlir::OpBuilder &b, mlir::Location loc, Value flat, Value weight,
                     int64_t batch, int64_t period, int64_t keep, int64_t n, bool transW,
                     llvm::function_ref<int64_t(int64_t)> shift, mlir::Type element) {
  int64_t kernel = llvm::cast<mlir::RankedTensorType>(weight.getType()).getDimSize(0);
  int64_t r = (batch - 1) * period + keep;
  // The sums land in rows [0, R) of a [batch·period, n] buffer; rows past R are never read,
  // so only the window is zeroed (and that fill becomes the first GEMM's beta = 0).
  auto fullType = mlir::RankedTensorType::get({batch * period, n}, element);
  Value full = emptyTensor(b, loc, fullType);
  Value acc = rowWindow(b, loc, full, 0, r);
  acc = b.create<mlir::linalg::FillOp>(loc, scalarConstant(b, loc, element, 0.0), acc).getResult(0);
  for (int64_t k = 0; k < kernel; ++k)
    acc = matmulInto(b, loc, rowWindow(b, loc, flat, shift(k), r), tap(b, loc, weight, k), acc,
                   false, transW);
  full = b.create<mlir::tensor::InsertSliceOp>(
      loc, acc, full, llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
      llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(r), b.getIndexAttr(n)},
      llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
  Value cube = b.create<mlir::tensor::ExpandShapeOp>(
      loc, mlir::RankedTensorType::get({batch, period, n}, element), full,
      llvm::SmallVector<mlir::ReassociationIndices>{{0, 1}, {2}});
  return b.create<mlir::tensor::ExtractSliceOp>(
      loc, mlir::RankedTensorType::get({batch, keep, n}, element), cube,
      llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0), b.getIndexAttr(0)},
      llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(batch), b.getIndexAttr(keep),
                                         b.getIndexAttr(n)},
      llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1), b.getIndexAttr(1)});
}

}  // namespace

// wf[s, j, i] = w[K-1-s, i, j]: the taps in reverse order, each transposed. The weight is read
// in the body (tensor.extract at K-1-s), not through an indexing map: kernel tiling slices an
// operand by its map at the tile's first index, which a decreasing map (K-1-s) gets wrong.
Value flippedTaps(mlir::OpBuilder &b, mlir::Location loc, Value weight) {
  auto t = llvm::cast<mlir::RankedTensorType>(weight.getType());
  int64_t kernel = t.getDimSize(0);
  auto type = mlir::RankedTensorType::get({kernel, t.getDimSize(2), t.getDimSize(1)},
                                          t.getElementType());
  using mlir::utils::IteratorType;
  return b
      .create<mlir::linalg::GenericOp>(
          loc, mlir::TypeRange{type}, mlir::ValueRange{},
          mlir::ValueRange{emptyTensor(b, loc, type)},
          llvm::SmallVector<mlir::AffineMap>{b.getMultiDimIdentityMap(3)},
          llvm::SmallVector<IteratorType>(3, IteratorType::parallel),
          [&](mlir::OpBuilder &bb, mlir::Location l, mlir::ValueRange) {
            Value s = bb.create<mlir::linalg::IndexOp>(l, 0);
            Value j = bb.create<mlir::linalg::IndexOp>(l, 1);
            Value i = bb.create<mlir::linalg::IndexOp>(l, 2);
            Value tap = bb.create<mlir::arith::SubIOp>(
                l, bb.create<mlir::arith::ConstantIndexOp>(l, kernel - 1), s);
            Value v = bb.create<mlir::tensor::ExtractOp>(l, weight, mlir::ValueRange{tap, i, j});
            bb.create<mlir::linalg::YieldOp>(l, v);
          })
      .getResult(0);
}

namespace {

mlir::Type elementOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType()).getElementType();
}

// What the GEMM path takes: static rank-3 tensors, the two operands both f32 or both bf16
// (GEMMs with an f32 accumulator exist for those), an f32 or bf16 result.
bool gemmTypes(mlir::Value lhs, mlir::Value rhs, mlir::Value result) {
  for (mlir::Value v : {lhs, rhs, result})
    if (!staticRank3(v.getType()) || !(elementOf(v).isF32() || elementOf(v).isBF16()))
      return false;
  return elementOf(lhs) == elementOf(rhs);
}

// The f32 accumulator rounded to the result's type (none for an f32 result).
Value roundResult(mlir::OpBuilder &b, mlir::Location loc, Value acc, mlir::Type resultType) {
  if (acc.getType() == resultType) return acc;
  auto type = llvm::cast<mlir::RankedTensorType>(resultType);
  return elementwise(b, loc, type, {acc},
                     [&](mlir::OpBuilder &bb, mlir::Location l, mlir::ValueRange v) -> Value {
                       return bb.create<mlir::arith::TruncFOp>(l, type.getElementType(), v[0]);
                     });
}

struct Conv1dAsGemms : mlir::OpRewritePattern<step::Conv1dOp> {
  Conv1dAsGemms(mlir::MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}
  mlir::LogicalResult matchAndRewrite(step::Conv1dOp op,
                                      mlir::PatternRewriter &rw) const override {
    if (op.getGroups() != 1 || !gemmTypes(op.getInput(), op.getWeight(), op.getResult()))
      return mlir::failure();
    auto in = llvm::cast<mlir::RankedTensorType>(op.getInput().getType());
    auto out = llvm::cast<mlir::RankedTensorType>(op.getType());
    int64_t kernel = llvm::cast<mlir::RankedTensorType>(op.getWeight().getType()).getDimSize(0);
    int64_t pad = op.getPadding() == "causal" ? kernel - 1 : 0;
    mlir::Location loc = op.getLoc();
    Value x = padSequence(rw, loc, op.getInput(), pad, 0);
    int64_t period = in.getDimSize(1) + pad;
    Value y = shiftedGemmSum(rw, loc, rows(rw, loc, x), op.getWeight(), in.getDimSize(0), period,
                             out.getDimSize(1), out.getDimSize(2), false,
                             [](int64_t k) { return k; }, rw.getF32Type());
    rw.replaceOp(op, roundResult(rw, loc, y, out));
    return mlir::success();
  }
};

struct Conv1dGradInputAsGemms : mlir::OpRewritePattern<step::Conv1dGradInputOp> {
  Conv1dGradInputAsGemms(mlir::MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}
  mlir::LogicalResult matchAndRewrite(step::Conv1dGradInputOp op,
                                      mlir::PatternRewriter &rw) const override {
    if (op.getGroups() != 1 || !gemmTypes(op.getGrad(), op.getWeight(), op.getResult()))
      return mlir::failure();
    auto gType = llvm::cast<mlir::RankedTensorType>(op.getGrad().getType());
    auto out = llvm::cast<mlir::RankedTensorType>(op.getType());
    int64_t kernel = llvm::cast<mlir::RankedTensorType>(op.getWeight().getType()).getDimSize(0);
    int64_t seq = out.getDimSize(1), outSeq = gType.getDimSize(1);
    int64_t pad = op.getPadding() == "causal" ? kernel - 1 : 0;
    int64_t left = kernel - 1 - pad, right = (seq - 1 + pad) - (outSeq - 1);
    if (left < 0 || right < 0) return mlir::failure();
    mlir::Location loc = op.getLoc();
    Value g = padSequence(rw, loc, op.getGrad(), left, right);
    int64_t period = left + outSeq + right;  // = seq + K - 1
    // Shift s of the gradient meets tap K-1-s transposed: with the taps flipped and transposed
    // once (one weight-sized buffer and a pass over it), shift s meets tap s of a
    // contiguous [K, Cout, Cin] weight, so the K GEMMs read consecutive row windows against
    // consecutive weight rows, which the CPU runs as one GEMM over the K·Cout window
    // (--step-windowed-gemms).
    Value dx = shiftedGemmSum(rw, loc, rows(rw, loc, g), flippedTaps(rw, loc, op.getWeight()),
                              out.getDimSize(0), period, seq, out.getDimSize(2), false,
                              [](int64_t s) { return s; }, rw.getF32Type());
    rw.replaceOp(op, roundResult(rw, loc, dx, out));
    return mlir::success();
  }
};

struct Conv1dGradWeightAsGemms : mlir::OpRewritePattern<step::Conv1dGradWeightOp> {
  Conv1dGradWeightAsGemms(mlir::MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}
  mlir::LogicalResult matchAndRewrite(step::Conv1dGradWeightOp op,
                                      mlir::PatternRewriter &rw) const override {
    if (op.getGroups() != 1 || !gemmTypes(op.getInput(), op.getGrad(), op.getResult()))
      return mlir::failure();
    auto in = llvm::cast<mlir::RankedTensorType>(op.getInput().getType());
    auto gType = llvm::cast<mlir::RankedTensorType>(op.getGrad().getType());
    auto dwType = llvm::cast<mlir::RankedTensorType>(op.getType());
    int64_t kernel = dwType.getDimSize(0), cin = dwType.getDimSize(1), cout = dwType.getDimSize(2);
    int64_t pad = op.getPadding() == "causal" ? kernel - 1 : 0;
    int64_t batch = in.getDimSize(0), period = in.getDimSize(1) + pad, keep = gType.getDimSize(1);
    if (keep + kernel - 1 > period) return mlir::failure();
    mlir::Location loc = op.getLoc();
    Value x = rows(rw, loc, padSequence(rw, loc, op.getInput(), pad, 0));
    Value g = rows(rw, loc, padSequence(rw, loc, op.getGrad(), 0, period - keep));
    int64_t r = (batch - 1) * period + keep;
    Value gWindow = rowWindow(rw, loc, g, 0, r);
    mlir::Type element = rw.getF32Type();  // the accumulator's
    // Every tap is written whole by its GEMM: no zeroing of dw beyond each tap's own fill,
    // which becomes that GEMM's beta = 0.
    Value dw = emptyTensor(rw, loc, mlir::RankedTensorType::get(dwType.getShape(), element));
    for (int64_t k = 0; k < kernel; ++k) {
      Value acc = tap(rw, loc, dw, k);
      acc = rw.create<mlir::linalg::FillOp>(loc, scalarConstant(rw, loc, element, 0.0), acc)
                .getResult(0);
      acc = matmulInto(rw, loc, rowWindow(rw, loc, x, k, r), gWindow, acc, true, false);
      dw = rw.create<mlir::tensor::InsertSliceOp>(
          loc, acc, dw,
          llvm::ArrayRef<mlir::OpFoldResult>{rw.getIndexAttr(k), rw.getIndexAttr(0), rw.getIndexAttr(0)},
          llvm::ArrayRef<mlir::OpFoldResult>{rw.getIndexAttr(1), rw.getIndexAttr(cin), rw.getIndexAttr(cout)},
          llvm::ArrayRef<mlir::OpFoldResult>{rw.getIndexAttr(1), rw.getIndexAttr(1), rw.getIndexAttr(1)});
    }
    rw.replaceOp(op, roundResult(rw, loc, dw, dwType));
    return mlir::success();
  }
};

}  // namespace

void populateConvolutionPatterns(mlir::RewritePatternSet &patterns) {
  patterns.add<Conv1dLowering, Conv1dGradInputLowering, Conv1dGradWeightLowering>(
      patterns.getContext());
  // Preferred when they apply (one group; f32, or bf16 in place of LowPrecisionPatterns'
  // widening): GEMMs over shifted row windows.
  patterns.add<Conv1dAsGemms, Conv1dGradInputAsGemms, Conv1dGradWeightAsGemms>(
      patterns.getContext());
}

}  // namespace stepc::lowering
