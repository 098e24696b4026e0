//===- ElementwiseVjps.cpp - VJPs of elementwise, reduction and shape ops ===//
//
// Each function receives the adjoints of the op's results (gy) and fills those of its operands
// (gx), written in step ops. Broadcasting operands get their adjoint summed back to their shape.
//
//===----------------------------------------------------------------------===//
#include <numeric>

#include "compiler/Autodiff/VjpModel.h"
#include "dialects/step/IR/ShapeRules.h"

namespace stepc::ad {
namespace {

using llvm::ArrayRef;
using llvm::SmallVectorImpl;
using mlir::LogicalResult;
using mlir::success;
using mlir::Value;
using Grads = SmallVectorImpl<Value>;

// --- unary ---------------------------------------------------------------------------------

LogicalResult vjpNeg(step::NegOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  if (isFloatTensor(op.getInput().getType())) gx[0] = g.neg(gy[0]);
  return success();
}

LogicalResult vjpAbs(step::AbsOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  if (!isFloatTensor(op.getInput().getType())) return success();
  Value x = op.getInput();
  // Subgradient +1 at 0 (PyTorch and JAX use 0 there; any value in [-1, 1] is a subgradient).
  Value nonneg = g.compare(x, g.scalar(0.0, elementTypeOf(x)), "ge");
  gx[0] = g.select(nonneg, gy[0], g.neg(gy[0]));
  return success();
}

LogicalResult vjpExp(step::ExpOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  gx[0] = g.mul(gy[0], op.getResult());
  return success();
}

LogicalResult vjpLog(step::LogOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  gx[0] = g.div(gy[0], op.getInput());
  return success();
}

LogicalResult vjpSqrt(step::SqrtOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  gx[0] = g.div(g.scale(gy[0], 0.5), op.getResult());
  return success();
}

LogicalResult vjpRsqrt(step::RsqrtOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  // d/dx x^(-1/2) = -1/2 * y^3.
  Value y = op.getResult();
  gx[0] = g.mul(g.scale(gy[0], -0.5), g.mul(y, g.mul(y, y)));
  return success();
}

LogicalResult vjpTanh(step::TanhOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  Value y = op.getResult();
  Value one = g.scalar(1.0, elementTypeOf(y));
  gx[0] = g.mul(gy[0], g.sub(one, g.mul(y, y)));
  return success();
}

LogicalResult vjpSigmoid(step::SigmoidOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  Value y = op.getResult();
  Value one = g.scalar(1.0, elementTypeOf(y));
  gx[0] = g.mul(gy[0], g.mul(y, g.sub(one, y)));
  return success();
}

LogicalResult vjpRelu(step::ReluOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  Value x = op.getInput();
  Value zero = g.scalar(0.0, elementTypeOf(x));
  gx[0] = g.select(g.compare(x, zero, "gt"), gy[0], g.zerosLike(gy[0].getType()));
  return success();
}

LogicalResult vjpLeakyRelu(step::LeakyReluOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  Value x = op.getInput();
  Value zero = g.scalar(0.0, elementTypeOf(x));
  gx[0] = g.select(g.compare(x, zero, "gt"), gy[0],
                   g.scale(gy[0], op.getAlpha().convertToDouble()));
  return success();
}

LogicalResult vjpSilu(step::SiluOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  // d/dx x*s(x) = s * (1 + x * (1 - s)).
  Value x = op.getInput();
  Value s = g.one<step::SigmoidOp>({x});
  Value one = g.scalar(1.0, elementTypeOf(x));
  gx[0] = g.mul(gy[0], g.mul(s, g.add(one, g.mul(x, g.sub(one, s)))));
  return success();
}

LogicalResult vjpErf(step::ErfOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  // d/dx erf(x) = 2/sqrt(pi) * exp(-x^2).
  Value x = op.getInput();
  Value e = g.one<step::ExpOp>({g.neg(g.mul(x, x))});
  gx[0] = g.mul(gy[0], g.scale(e, 1.1283791670955126));
  return success();
}

LogicalResult vjpSin(step::SinOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  gx[0] = g.mul(gy[0], g.one<step::CosOp>({op.getInput()}));
  return success();
}

LogicalResult vjpCos(step::CosOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  gx[0] = g.neg(g.mul(gy[0], g.one<step::SinOp>({op.getInput()})));
  return success();
}

LogicalResult vjpGelu(step::GeluOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  Value x = op.getInput();
  mlir::Type et = elementTypeOf(x);
  Value one = g.scalar(1.0, et), half = g.scalar(0.5, et);
  if (op.getApproximate() == "erf") {
    // Phi(x) + x * phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2, phi(x) = exp(-x^2/2) / sqrt(2 pi).
    Value cdf = g.mul(half, g.add(one, g.one<step::ErfOp>({g.scale(x, 0.7071067811865476)})));
    Value pdf = g.scale(g.one<step::ExpOp>({g.scale(g.mul(x, x), -0.5)}), 0.3989422804014327);
    gx[0] = g.mul(gy[0], g.add(cdf, g.mul(x, pdf)));
    return success();
  }
  // y = x/2 (1 + tanh u), u = k (x + c x^3):
  // dy/dx = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3 c x^2).
  constexpr double k = 0.7978845608028654, c = 0.044715;
  Value x2 = g.mul(x, x);
  Value u = g.scale(g.add(x, g.scale(g.mul(x2, x), c)), k);
  Value t = g.one<step::TanhOp>({u});
  Value du = g.scale(g.add(one, g.scale(x2, 3 * c)), k);
  Value d = g.add(g.mul(half, g.add(one, t)),
                  g.mul(g.mul(half, x), g.mul(g.sub(one, g.mul(t, t)), du)));
  gx[0] = g.mul(gy[0], d);
  return success();
}

LogicalResult vjpPow(step::PowOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  double p = op.getExponent().convertToDouble();
  Value x = op.getInput();
  // x^0 is constant and x^1 the identity: no 0 * x^-1 (NaN at 0) in their gradients.
  if (p == 0.0) return success();
  if (p == 1.0) {
    gx[0] = gy[0];
    return success();
  }
  Value d = p == 2.0 ? g.scale(x, 2.0)
                     : g.scale(g.one<step::PowOp>({x}, {g.f64Attr("exponent", p - 1.0)}), p);
  gx[0] = g.mul(gy[0], d);
  return success();
}

// Dropout and jitter multiply by numbers that are a pure function of (seed, step, index): the
// same op applied to the adjoint multiplies it by exactly the forward's mask and scale, or
// factors.
template <typename OpT>
LogicalResult vjpSameDraws(OpT op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  llvm::SmallVector<Value> operands{gy[0]};
  if (op.getStep()) operands.push_back(op.getStep());
  gx[0] = g.one<OpT>(operands, op->getAttrs());
  return success();
}

LogicalResult vjpCast(step::CastOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  // Integer operands get no gradient; a float -> int -> ... path is cut here.
  if (!isFloatTensor(op.getInput().getType()) || !isFloatTensor(op.getResult().getType()))
    return success();
  gx[0] = g.one<step::CastOp>({gy[0]},
                              {g.attr("to", mlir::TypeAttr::get(elementTypeOf(op.getInput())))});
  return success();
}

// The fixed-point grid is a representation of the value (exact streams): straight through.
LogicalResult vjpQuantize(step::QuantizeOp, GradBuilder &, ArrayRef<Value> gy, Grads &gx) {
  gx[0] = gy[0];
  return success();
}

// The surrogate of exact streams: the gradient of y = x * num/den. The buffer (an integer
// record of the low digits) carries none.
LogicalResult vjpExactScale(step::ExactScaleOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  if (!gy[0]) return success();
  double ratio = static_cast<double>(op.getNum()) / static_cast<double>(op.getDen());
  gx[0] = g.scale(gy[0], op.getInverse() ? 1.0 / ratio : ratio);
  return success();
}

LogicalResult vjpIota(step::IotaOp, GradBuilder &, ArrayRef<Value>, Grads &) {
  // An iota reads only its operand's shape: the operand gets no gradient.
  return success();
}

// --- binary --------------------------------------------------------------------------------

template <typename OpTy>
bool floatOperands(OpTy op) {
  return isFloatTensor(op.getLhs().getType());
}

LogicalResult vjpAdd(step::AddOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  if (!floatOperands(op)) return success();
  gx[0] = g.reduceToShape(gy[0], op.getLhs().getType());
  gx[1] = g.reduceToShape(gy[0], op.getRhs().getType());
  return success();
}

LogicalResult vjpSub(step::SubOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  if (!floatOperands(op)) return success();
  gx[0] = g.reduceToShape(gy[0], op.getLhs().getType());
  gx[1] = g.reduceToShape(g.neg(gy[0]), op.getRhs().getType());
  return success();
}

LogicalResult vjpMul(step::MulOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  if (!floatOperands(op)) return success();
  gx[0] = g.reduceToShape(g.mul(gy[0], op.getRhs()), op.getLhs().getType());
  gx[1] = g.reduceToShape(g.mul(gy[0], op.getLhs()), op.getRhs().getType());
  return success();
}

LogicalResult vjpDiv(step::DivOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  if (!floatOperands(op)) return success();
  Value b = op.getRhs();
  gx[0] = g.reduceToShape(g.div(gy[0], b), op.getLhs().getType());
  // d(a/b)/db = -a/b^2 = -y/b.
  gx[1] = g.reduceToShape(g.neg(g.div(g.mul(gy[0], op.getResult()), b)), b.getType());
  return success();
}

// max/min: the adjoint goes to the chosen operand; ties go to the left one.
template <typename OpTy>
LogicalResult vjpMinMax(OpTy op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx,
                        llvm::StringRef leftWins) {
  if (!floatOperands(op)) return success();
  Value pickLeft = g.compare(op.getLhs(), op.getRhs(), leftWins);
  Value zero = g.zerosLike(gy[0].getType());
  gx[0] = g.reduceToShape(g.select(pickLeft, gy[0], zero), op.getLhs().getType());
  gx[1] = g.reduceToShape(g.select(pickLeft, zero, gy[0]), op.getRhs().getType());
  return success();
}
LogicalResult vjpMax(step::MaxOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  return vjpMinMax(op, g, gy, gx, "ge");
}
LogicalResult vjpMin(step::MinOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  return vjpMinMax(op, g, gy, gx, "le");
}

LogicalResult vjpSelect(step::SelectOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  if (!isFloatTensor(op.getOnTrue().getType())) return success();
  Value zero = g.zerosLike(gy[0].getType());
  gx[1] = g.reduceToShape(g.select(op.getCond(), gy[0], zero), op.getOnTrue().getType());
  gx[2] = g.reduceToShape(g.select(op.getCond(), zero, gy[0]), op.getOnFalse().getType());
  return success();
}

// --- reductions ----------------------------------------------------------------------------

// The adjoint of a reduction, broadcast back over the reduced axes.
Value expandReduced(GradBuilder &g, Value grad, Value input, mlir::ArrayAttr axesAttr,
                    bool keepdim) {
  llvm::SmallVector<int64_t> keptShape(shapeOf(input));
  for (int64_t axis : step::toI64Vector(axesAttr))
    keptShape[*step::normalizeAxis(axis, rankOf(input))] = 1;
  Value kept = keepdim ? grad : g.reshape(grad, keptShape);
  return g.broadcastTo(kept, shapeOf(input));
}

LogicalResult vjpSum(step::SumOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  if (!isFloatTensor(op.getInput().getType())) return success();
  gx[0] = expandReduced(g, gy[0], op.getInput(), op.getAxes(), op.getKeepdim());
  return success();
}

LogicalResult vjpMean(step::MeanOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  if (!isFloatTensor(op.getInput().getType())) return success();
  int64_t count = 1;
  for (int64_t axis : step::toI64Vector(op.getAxes()))
    count *= shapeOf(op.getInput())[*step::normalizeAxis(axis, rankOf(op.getInput()))];
  Value expanded = expandReduced(g, gy[0], op.getInput(), op.getAxes(), op.getKeepdim());
  gx[0] = g.scale(expanded, 1.0 / static_cast<double>(count));
  return success();
}

LogicalResult vjpReduceMax(step::ReduceMaxOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  if (!isFloatTensor(op.getInput().getType())) return success();
  Value x = op.getInput();
  Value maxB = expandReduced(g, op.getResult(), x, op.getAxes(), op.getKeepdim());
  Value gB = expandReduced(g, gy[0], x, op.getAxes(), op.getKeepdim());
  // The adjoint is split equally among the elements equal to the maximum (as JAX does), so
  // ties (common with zero-initialised layers) do not multiply it.
  Value hit = g.one<step::CastOp>({g.compare(x, maxB, "eq")},
                                  {g.attr("to", mlir::TypeAttr::get(elementTypeOf(x)))});
  llvm::SmallVector<int64_t> axes;
  for (int64_t axis : step::toI64Vector(op.getAxes()))
    axes.push_back(*step::normalizeAxis(axis, rankOf(x)));
  Value ties = g.broadcastTo(g.sum(hit, axes, /*keepdim=*/true), shapeOf(x));
  gx[0] = g.div(g.mul(hit, gB), ties);
  return success();
}

LogicalResult vjpCumsum(step::CumsumOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  if (!isFloatTensor(op.getInput().getType())) return success();
  llvm::SmallVector<mlir::NamedAttribute> attrs{g.attr("axis", op.getAxisAttr())};
  if (!op.getReverse()) attrs.push_back(g.unitAttr("reverse"));
  gx[0] = g.one<step::CumsumOp>({gy[0]}, attrs);
  return success();
}

// --- shape ops -----------------------------------------------------------------------------

LogicalResult vjpReshape(step::ReshapeOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  if (isFloatTensor(op.getInput().getType())) gx[0] = g.reshape(gy[0], shapeOf(op.getInput()));
  return success();
}

LogicalResult vjpTranspose(step::TransposeOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  if (!isFloatTensor(op.getInput().getType())) return success();
  llvm::SmallVector<int64_t> perm = step::toI64Vector(op.getPerm()), inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = i;
  gx[0] = g.transpose(gy[0], inverse);
  return success();
}

LogicalResult vjpBroadcast(step::BroadcastOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  if (isFloatTensor(op.getInput().getType()))
    gx[0] = g.reduceToShape(gy[0], op.getInput().getType());
  return success();
}

LogicalResult vjpSlice(step::SliceOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  if (!isFloatTensor(op.getInput().getType())) return success();
  if (auto strides = op.getStrides())
    if (llvm::any_of(step::toI64Vector(*strides), [](int64_t s) { return s != 1; }))
      return op.emitOpError() << "has no gradient rule for strides other than 1";
  llvm::SmallVector<int64_t> low = step::toI64Vector(op.getStart()), high;
  for (auto [limit, dim] : llvm::zip(step::toI64Vector(op.getLimit()), shapeOf(op.getInput())))
    high.push_back(dim - limit);
  gx[0] = g.one<step::PadOp>({gy[0]}, {g.arrayAttr("low", low), g.arrayAttr("high", high)});
  return success();
}

LogicalResult vjpPad(step::PadOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  if (!isFloatTensor(op.getInput().getType())) return success();
  llvm::SmallVector<int64_t> start = step::toI64Vector(op.getLow()), limit;
  for (auto [s, dim] : llvm::zip(start, shapeOf(op.getInput()))) limit.push_back(s + dim);
  gx[0] = g.one<step::SliceOp>({gy[0]}, {g.arrayAttr("start", start), g.arrayAttr("limit", limit)});
  return success();
}

LogicalResult vjpSplit(step::SplitOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  if (!isFloatTensor(op.getInput().getType())) return success();
  llvm::SmallVector<Value> parts;
  for (auto [result, grad] : llvm::zip(op.getResults(), gy))
    parts.push_back(grad ? grad : g.zerosLike(result.getType()));
  gx[0] = g.one<step::ConcatOp>(parts, {g.attr("axis", op.getAxisAttr())});
  return success();
}

LogicalResult vjpConcat(step::ConcatOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  if (!isFloatTensor(op.getResult().getType())) return success();
  int64_t rank = rankOf(op.getResult());
  int64_t axis = *step::normalizeAxis(op.getAxis(), rank), offset = 0;
  for (auto [i, input] : llvm::enumerate(op.getInputs())) {
    llvm::SmallVector<int64_t> start(rank, 0), limit(shapeOf(op.getResult()));
    start[axis] = offset;
    offset += shapeOf(input)[axis];
    limit[axis] = offset;
    gx[i] = g.one<step::SliceOp>({gy[0]},
                                 {g.arrayAttr("start", start), g.arrayAttr("limit", limit)});
  }
  return success();
}

}  // namespace

void attachElementwiseVjps(mlir::MLIRContext *ctx) {
  attachVjp<step::NegOp, vjpNeg>(ctx);
  attachVjp<step::AbsOp, vjpAbs>(ctx);
  attachVjp<step::ExpOp, vjpExp>(ctx);
  attachVjp<step::LogOp, vjpLog>(ctx);
  attachVjp<step::SqrtOp, vjpSqrt>(ctx);
  attachVjp<step::RsqrtOp, vjpRsqrt>(ctx);
  attachVjp<step::TanhOp, vjpTanh>(ctx);
  attachVjp<step::SigmoidOp, vjpSigmoid>(ctx);
  attachVjp<step::ReluOp, vjpRelu>(ctx);
  attachVjp<step::LeakyReluOp, vjpLeakyRelu>(ctx);
  attachVjp<step::SiluOp, vjpSilu>(ctx);
  attachVjp<step::ErfOp, vjpErf>(ctx);
  attachVjp<step::SinOp, vjpSin>(ctx);
  attachVjp<step::CosOp, vjpCos>(ctx);
  attachVjp<step::GeluOp, vjpGelu>(ctx);
  attachVjp<step::PowOp, vjpPow>(ctx);
  attachVjp<step::DropoutOp, vjpSameDraws<step::DropoutOp>>(ctx);
  attachVjp<step::JitterOp, vjpSameDraws<step::JitterOp>>(ctx);
  attachVjp<step::CastOp, vjpCast>(ctx);
  attachVjp<step::IotaOp, vjpIota>(ctx);
  attachVjp<step::QuantizeOp, vjpQuantize>(ctx);
  attachVjp<step::ExactScaleOp, vjpExactScale>(ctx);
  attachVjp<step::AddOp, vjpAdd>(ctx);
  attachVjp<step::SubOp, vjpSub>(ctx);
  attachVjp<step::MulOp, vjpMul>(ctx);
  attachVjp<step::DivOp, vjpDiv>(ctx);
  attachVjp<step::MaxOp, vjpMax>(ctx);
  attachVjp<step::MinOp, vjpMin>(ctx);
  attachVjp<step::SelectOp, vjpSelect>(ctx);
  attachVjp<step::SumOp, vjpSum>(ctx);
  attachVjp<step::MeanOp, vjpMean>(ctx);
  attachVjp<step::ReduceMaxOp, vjpReduceMax>(ctx);
  attachVjp<step::CumsumOp, vjpCumsum>(ctx);
  attachVjp<step::ReshapeOp, vjpReshape>(ctx);
  attachVjp<step::TransposeOp, vjpTranspose>(ctx);
  attachVjp<step::BroadcastOp, vjpBroadcast>(ctx);
  attachVjp<step::SliceOp, vjpSlice>(ctx);
  attachVjp<step::PadOp, vjpPad>(ctx);
  attachVjp<step::SplitOp, vjpSplit>(ctx);
  attachVjp<step::ConcatOp, vjpConcat>(ctx);
}

}  // namespace stepc::ad
