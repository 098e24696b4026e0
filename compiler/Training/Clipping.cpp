//===- Clipping.cpp - gradient clipping by global norm and AGC ----------===//
#include "compiler/Training/UpdateRules.h"

namespace stepc::train {

mlir::Value emitGlobalNorm(ad::GradBuilder &g, llvm::ArrayRef<mlir::Value> grads) {
  mlir::Value total;
  for (mlir::Value grad : grads) {
    mlir::Value sq = g.sumOfSquares(grad);
    total = total ? g.add(total, sq) : sq;
  }
  return g.one<step::SqrtOp>({total});
}

namespace {

// The L2 norm over `axes`, kept as size-1 dims (elementwise |x| when there are none).
mlir::Value unitNorm(ad::GradBuilder &g, mlir::Value x, llvm::ArrayRef<int64_t> axes) {
  mlir::Value sq = g.mul(x, x);
  return g.one<step::SqrtOp>({axes.empty() ? sq : g.sum(sq, axes, /*keepdim=*/true)});
}

}  // namespace

llvm::SmallVector<mlir::Value> emitClipping(ad::GradBuilder &g, const TrainConfig &c,
                                            llvm::ArrayRef<ParamSlot> params, mlir::Value norm) {
  llvm::SmallVector<mlir::Value> out;
  if (c.clip == "none") {
    for (const ParamSlot &p : params) out.push_back(p.grad);
    return out;
  }
  mlir::Type et = ad::elementTypeOf(norm);
  if (c.clip == "global_norm") {
    mlir::Value coef = g.div(g.scalar(c.maxNorm, et), g.add(norm, g.scalar(1e-6, et)));
    coef = g.one<step::MinOp>({coef, g.scalar(1.0, et)});
    for (const ParamSlot &p : params) out.push_back(g.mul(p.grad, coef));
    return out;
  }
  for (const ParamSlot &p : params) {
    int64_t rank = ad::rankOf(p.value);
    int64_t declaredRank = rank - p.stackedDims;
    llvm::SmallVector<int64_t> axes;
    for (int64_t a = p.stackedDims; a < (declaredRank > 1 ? rank - 1 : rank); ++a) axes.push_back(a);
    mlir::Value pn = g.one<step::MaxOp>({unitNorm(g, p.value, axes), g.scalar(c.agcEpsParam, et)});
    mlir::Value gn = g.one<step::MaxOp>({unitNorm(g, p.grad, axes), g.scalar(c.agcEpsGrad, et)});
    mlir::Value scale = g.one<step::MinOp>({g.scale(g.div(pn, gn), c.agcLambda), g.scalar(1.0, et)});
    out.push_back(g.mul(p.grad, scale));
  }
  return out;
}

}  // namespace stepc::train
