//===- StructuredVjps.cpp - VJPs of contractions, norms and losses --------===//
#include "compiler/Autodiff/VjpModel.h"

namespace stepc::ad {
namespace {

using llvm::ArrayRef;
using llvm::SmallVectorImpl;
using mlir::LogicalResult;
using mlir::success;
using mlir::Value;
using Grads = SmallVectorImpl<Value>;

Value swapLastTwo(GradBuilder &g, Value x) {
  llvm::SmallVector<int64_t> perm;
  for (int64_t i = 0; i < rankOf(x); ++i) perm.push_back(i);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return g.transpose(x, perm);
}

template <typename OpTy>
Value contract(GradBuilder &g, Value a, Value b, bool transposeA, bool transposeB) {
  llvm::SmallVector<mlir::NamedAttribute> attrs;
  if (transposeA) attrs.push_back(g.unitAttr("transpose_lhs"));
  if (transposeB) attrs.push_back(g.unitAttr("transpose_rhs"));
  return g.one<OpTy>({a, b}, attrs);
}

// C = op(A) op(B): dop(A) = G op(B)^T, dop(B) = op(A)^T G; a transposed operand's adjoint is
// the transpose of its op's adjoint.
LogicalResult vjpMatmul(step::MatmulOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  Value a = op.getLhs(), b = op.getRhs(), grad = gy[0];
  bool ta = op.getTransposeLhs(), tb = op.getTransposeRhs();
  Value dOpA = contract<step::MatmulOp>(g, grad, b, false, !tb);
  gx[0] = ta ? swapLastTwo(g, dOpA) : dOpA;
  // The right operand is shared across the left operand's leading dims: flatten them.
  Value a2 = a, g2 = grad;
  if (rankOf(a) > 2) {
    a2 = g.reshape(a, {-1, shapeOf(a).back()});
    g2 = g.reshape(grad, {-1, shapeOf(grad).back()});
  }
  Value dOpB = contract<step::MatmulOp>(g, a2, g2, !ta, false);
  gx[1] = tb ? swapLastTwo(g, dOpB) : dOpB;
  return success();
}

LogicalResult vjpBatchMatmul(step::BatchMatmulOp op, GradBuilder &g, ArrayRef<Value> gy,
                             Grads &gx) {
  Value a = op.getLhs(), b = op.getRhs(), grad = gy[0];
  bool ta = op.getTransposeLhs(), tb = op.getTransposeRhs();
  Value dOpA = contract<step::BatchMatmulOp>(g, grad, b, false, !tb);
  gx[0] = ta ? swapLastTwo(g, dOpA) : dOpA;
  Value dOpB = contract<step::BatchMatmulOp>(g, a, grad, !ta, false);
  gx[1] = tb ? swapLastTwo(g, dOpB) : dOpB;
  return success();
}

// The table's gradient: each id's row of dY added into that id's row, in the ids' order
// (embedding_grad: a scan over the ids). Ids that are positions (an iota along axis a, as
// GPT-2's wpe reads them) name row o + i_a for every other index, so the rows are the sum of
// dY over those other dims, in order: a reduction that runs in parallel over the rows,
// where the scan adds one id's row after another (4096 dependent steps for gpt2_124m).
LogicalResult vjpEmbedding(step::EmbeddingOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  int64_t vocab = shapeOf(op.getTable())[0];
  if (auto iota = op.getIds().getDefiningOp<step::IotaOp>()) {
    llvm::ArrayRef<int64_t> ids = shapeOf(op.getIds());
    int64_t axis = iota.getAxis(), offset = iota.getOffset(), rank = static_cast<int64_t>(ids.size());
    if (axis >= 0 && axis < rank && offset >= 0 && offset + ids[axis] <= vocab) {
      llvm::SmallVector<int64_t> others;
      for (int64_t d = 0; d < rank; ++d)
        if (d != axis) others.push_back(d);
      Value rows = others.empty() ? gy[0] : g.sum(gy[0], others);  // [ids[axis], width]
      if (offset == 0 && ids[axis] == vocab) {
        gx[0] = rows;
      } else {
        gx[0] = g.one<step::PadOp>(
            {rows}, {g.arrayAttr("low", {offset, 0}),
                     g.arrayAttr("high", {vocab - offset - ids[axis], 0})});
      }
      return success();
    }
  }
  gx[0] = g.one<step::EmbeddingGradOp>({gy[0], op.getIds()}, {g.i64Attr("vocab", vocab)});
  return success();
}

LogicalResult vjpConv1d(step::Conv1dOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  auto padding = g.attr("padding", op.getPaddingAttr());
  auto groups = g.attr("groups", op.getGroupsAttr());
  gx[0] = g.one<step::Conv1dGradInputOp>({gy[0], op.getWeight()}, {padding, groups});
  gx[1] = g.one<step::Conv1dGradWeightOp>(
      {op.getInput(), gy[0]},
      {g.i64Attr("kernel", shapeOf(op.getWeight())[0]), padding, groups});
  return success();
}

LogicalResult vjpSoftmax(step::SoftmaxOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  Value y = op.getResult();
  Value dot = g.sum(g.mul(gy[0], y), {op.getAxis()}, /*keepdim=*/true);
  gx[0] = g.mul(y, g.sub(gy[0], dot));
  return success();
}

LogicalResult vjpLogSoftmax(step::LogSoftmaxOp op, GradBuilder &g, ArrayRef<Value> gy,
                            Grads &gx) {
  Value p = g.one<step::ExpOp>({op.getResult()});
  Value total = g.sum(gy[0], {op.getAxis()}, /*keepdim=*/true);
  gx[0] = g.sub(gy[0], g.mul(p, total));
  return success();
}

// With xhat the normalised input and r the reciprocal scale over the last axis, both norms have
// dx = r * (dxhat - [mean(dxhat)] - xhat * mean(dxhat * xhat)), dxhat = g * gamma.
LogicalResult vjpLayerNorm(step::LayerNormOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  Value x = op.getInput(), grad = gy[0];
  mlir::Type et = elementTypeOf(x);
  Value xc = g.sub(x, g.mean(x, {-1}, true));
  Value var = g.mean(g.mul(xc, xc), {-1}, true);
  Value r = g.one<step::RsqrtOp>({g.add(var, g.scalar(op.getEps().convertToDouble(), et))});
  Value xhat = g.mul(xc, r);
  Value dxhat = g.mul(grad, op.getGamma());
  Value inner = g.sub(g.sub(dxhat, g.mean(dxhat, {-1}, true)),
                      g.mul(xhat, g.mean(g.mul(dxhat, xhat), {-1}, true)));
  gx[0] = g.mul(r, inner);
  gx[1] = g.reduceToShape(g.mul(grad, xhat), op.getGamma().getType());
  gx[2] = g.reduceToShape(grad, op.getBeta().getType());
  return success();
}

LogicalResult vjpRmsNorm(step::RmsNormOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  Value x = op.getInput(), grad = gy[0];
  mlir::Type et = elementTypeOf(x);
  Value ms = g.mean(g.mul(x, x), {-1}, true);
  Value r = g.one<step::RsqrtOp>({g.add(ms, g.scalar(op.getEps().convertToDouble(), et))});
  Value xhat = g.mul(x, r);
  Value dxhat = g.mul(grad, op.getGamma());
  gx[0] = g.mul(r, g.sub(dxhat, g.mul(xhat, g.mean(g.mul(dxhat, xhat), {-1}, true))));
  gx[1] = g.reduceToShape(g.mul(grad, xhat), op.getGamma().getType());
  return success();
}

// d loss / d logits = (softmax(logits) - onehot(targets)) scaled by the reduction's adjoint.
LogicalResult vjpCrossEntropy(step::CrossEntropyOp op, GradBuilder &g, ArrayRef<Value> gy,
                              Grads &gx) {
  Value logits = op.getLogits(), targets = op.getTargets();
  int64_t rank = rankOf(logits);
  Value p = g.one<step::SoftmaxOp>({logits}, {g.i64Attr("axis", rank - 1)});
  Value classes = g.one<step::IotaOp>(
      {logits}, {g.i64Attr("axis", rank - 1),
                 g.attr("dtype", mlir::TypeAttr::get(elementTypeOf(targets)))});
  llvm::SmallVector<int64_t> column(shapeOf(targets));
  column.push_back(1);
  Value hit = g.compare(classes, g.reshape(targets, column), "eq");
  Value onehot = g.one<step::CastOp>({hit}, {g.attr("to", mlir::TypeAttr::get(elementTypeOf(logits)))});
  Value d = g.sub(p, onehot);
  llvm::StringRef reduction = op.getReduction();
  if (reduction == "none") {
    gx[0] = g.mul(d, g.reshape(gy[0], column));
  } else {
    Value scaled = g.mul(d, gy[0]);
    int64_t count = 1;
    for (int64_t dim : shapeOf(targets)) count *= dim;
    gx[0] = reduction == "mean" ? g.scale(scaled, 1.0 / static_cast<double>(count)) : scaled;
  }
  return success();
}

}  // namespace

void attachStructuredVjps(mlir::MLIRContext *ctx) {
  attachVjp<step::MatmulOp, vjpMatmul>(ctx);
  attachVjp<step::BatchMatmulOp, vjpBatchMatmul>(ctx);
  attachVjp<step::EmbeddingOp, vjpEmbedding>(ctx);
  attachVjp<step::Conv1dOp, vjpConv1d>(ctx);
  attachVjp<step::SoftmaxOp, vjpSoftmax>(ctx);
  attachVjp<step::LogSoftmaxOp, vjpLogSoftmax>(ctx);
  attachVjp<step::LayerNormOp, vjpLayerNorm>(ctx);
  attachVjp<step::RmsNormOp, vjpRmsNorm>(ctx);
  attachVjp<step::CrossEntropyOp, vjpCrossEntropy>(ctx);
}

}  // namespace stepc::ad
