//===- ConvolutionPatterns.cpp - conv1d and its gradients → linalg.generic -===//
//
// All three follow the interpreter's definition (channels last, stride 1):
//   y[b, t, o] = Σ_k Σ_c x[b, t + k - pad, g(o) * Cin/groups + c] · w[k, c, o]
// with pad = K - 1 for "causal" and 0 for "valid", x zero outside [0, S), and
// g(o) = o floordiv (Cout/groups). Zero padding is explicit (a zero-filled tensor with the
// operand inserted), so every generic reads in bounds through affine maps:
// - conv1d: loops (b, t, o, k, c), reading xpad[b, t + k, g(o)·Cin/g + c] and w[k, c, o].
// - conv1d_grad_input: dx[b, s, h·Cin/g + i] = Σ_k Σ_j gpad[b, s + K-1 - k, h·Cout/g + j] ·
//   w[k, i, h·Cout/g + j] for group h, computed as [B, S, groups, Cin/g] (the weight expanded
//   to [K, Cin/g, groups, Cout/g]) and collapsed; the gradient is padded by K-1-pad on the
//   left and so that the last index is in range on the right.
// - conv1d_grad_weight: dw[k, c, o] = Σ_b Σ_t xpad[b, t + k, g(o)·Cin/g + c] · g[b, t, o].
// Groups must divide both channel counts (declined otherwise).
//
//===----------------------------------------------------------------------===//
#include "compiler/Lowering/LoweringUtils.h"
#include "compiler/Lowering/Patterns.h"
#include "dialects/step/IR/StepDialect.h"

namespace stepc::lowering {
namespace {

using mlir::Value;

// `value` [B, S, C] padded with zeros on the sequence axis.
Value padSequence(mlir::OpBuilder &b, mlir::Location loc, Value value, int64_t left,
                  int64_t right) {
  if (left == 0 && right == 0) return value;
  auto type = llvm::cast<mlir::RankedTensorType>(value.getType());
  llvm::SmallVector<int64_t> shape(type.getShape());
  shape[1] += left + right;
  Value zeros =
      filledTensor(b, loc, mlir::RankedTensorType::get(shape, type.getElementType()), 0.0);
  llvm::SmallVector<mlir::OpFoldResult> offsets = {b.getIndexAttr(0), b.getIndexAttr(left),
                                                   b.getIndexAttr(0)};
  llvm::SmallVector<mlir::OpFoldResult> sizes, strides(3, b.getIndexAttr(1));
  for (int64_t s : type.getShape()) sizes.push_back(b.getIndexAttr(s));
  return b.create<mlir::tensor::InsertSliceOp>(loc, value, zeros, offsets, sizes, strides);
}

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
            Value product = bb.create<mlir::arith::MulFOp>(l, args[0], args[1]);
            Value sum = bb.create<mlir::arith::AddFOp>(l, args[2], product);
            bb.create<mlir::linalg::YieldOp>(l, sum);
          })
      .getResult(0);
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
    // Loops (b, s, h, i, k, j) over a [B, S, groups, Cin/g] result and the weight expanded to
    // [K, Cin/g, groups, Cout/g], so that every loop is a plain dimension of some operand.
    mlir::AffineExpr b = d(0), s = d(1), h = d(2), i = d(3), k = d(4), j = d(5);
    mlir::Type element = resultType.getElementType();
    Value w = rw.create<mlir::tensor::ExpandShapeOp>(
        op.getLoc(), mlir::RankedTensorType::get({kernel, cinPG, groups, coutPG}, element),
        op.getWeight(), llvm::SmallVector<mlir::ReassociationIndices>{{0}, {1}, {2, 3}});
    auto splitType = mlir::RankedTensorType::get(
        {resultType.getDimSize(0), seq, groups, cinPG}, element);
    auto map6 = [&](llvm::ArrayRef<mlir::AffineExpr> exprs) {
      return mlir::AffineMap::get(6, 0, exprs, ctx);
    };
    Value split = contraction(rw, op.getLoc(), splitType, g, w,
                              {map6({b, s + (kernel - 1) - k, h * coutPG + j}),
                               map6({k, i, h, j}), map6({b, s, h, i})});
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

void populateConvolutionPatterns(mlir::RewritePatternSet &patterns) {
  patterns.add<Conv1dLowering, Conv1dGradInputLowering, Conv1dGradWeightLowering>(
      patterns.getContext());
}

}  // namespace stepc::lowering
