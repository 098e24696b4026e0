//===- Clipping.cpp - gradient clipping by global norm and AGC ----------===//
#include "compiler/Training/UpdateRules.h"

namespace stepc::train {

mlir::Value castTo(ad::GradBuilder &g, mlir::Value v, mlir::Type type) {
  if (ad::elementTypeOf(v) == type) return v;
  return g.one<step::CastOp>({v}, {g.attr("to", mlir::TypeAttr::get(type))});
}

mlir::Value emitGlobalNorm(ad::GradBuilder &g, llvm::ArrayRef<mlir::Value> values,
                           mlir::Type type, bool byColumns) {
  mlir::Value total = g.scalar(0.0, type);
  for (mlir::Value v : values)
    total = g.add(total, castTo(g, g.sumOfSquares(v, byColumns), type));
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
  mlir::Type normType = ad::elementTypeOf(norm);
  if (c.clip == "global_norm") {
    mlir::Value coef =
        g.div(g.scalar(c.maxNorm, normType), g.add(norm, g.scalar(1e-6, normType)));
    coef = g.one<step::MinOp>({coef, g.scalar(1.0, normType)});
    for (const ParamSlot &p : params)
      out.push_back(g.mul(p.grad, castTo(g, coef, ad::elementTypeOf(p.grad))));
    return out;
  }
  for (const ParamSlot &p : params) {
    mlir::Type et = ad::elementTypeOf(p.grad);
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
