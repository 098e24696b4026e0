//===- SoftmaxPatterns.cpp - softmax / log_softmax → linalg --------------===//
//
// Along one axis, as the interpreter computes them: m = max (a reduction generic, -inf
// start), then exp(x - m), its sum (a reduction generic), and a last elementwise generic:
// softmax = exp(x - m) / sum, log_softmax = (x - m) - log(sum). The reduced values are
// expanded back to size 1 on the axis so the elementwise generics broadcast them. f32 and f64
// only: bf16/f16 softmax stays a step op for now.
//
//===----------------------------------------------------------------------===//
#include <limits>

#include "compiler/Lowering/LoweringUtils.h"
#include "compiler/Lowering/Patterns.h"
#include "dialects/step/IR/ShapeRules.h"
#include "dialects/step/IR/StepDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace stepc::lowering {
namespace {

using mlir::Value;

// Reduces `input` along `axis` by max or sum; the result keeps the axis as size 1.
Value reduceAxisKeepdim(mlir::PatternRewriter &rw, mlir::Location loc, Value input, int64_t axis,
                        bool max) {
  auto type = llvm::cast<mlir::RankedTensorType>(input.getType());
  mlir::Type element = type.getElementType();
  int64_t rank = type.getRank();
  llvm::SmallVector<int64_t> accShape;
  llvm::SmallVector<mlir::AffineExpr> accExprs;
  llvm::SmallVector<mlir::utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == axis) {
      iterators.push_back(mlir::utils::IteratorType::reduction);
      continue;
    }
    accShape.push_back(type.getDimSize(d));
    accExprs.push_back(rw.getAffineDimExpr(d));
    iterators.push_back(mlir::utils::IteratorType::parallel);
  }
  auto accType = mlir::RankedTensorType::get(accShape, element);
  Value acc = filledTensor(rw, loc, accType,
                           max ? -std::numeric_limits<double>::infinity() : 0.0);
  llvm::SmallVector<mlir::AffineMap> maps = {
      rw.getMultiDimIdentityMap(rank), mlir::AffineMap::get(rank, 0, accExprs, rw.getContext())};
  Value reduced =
      rw.create<mlir::linalg::GenericOp>(
            loc, mlir::TypeRange{accType}, mlir::ValueRange{input}, mlir::ValueRange{acc}, maps,
            iterators,
            [&](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange args) {
              Value r = max ? Value(b.create<mlir::arith::MaximumFOp>(l, args[1], args[0]))
                            : Value(b.create<mlir::arith::AddFOp>(l, args[1], args[0]));
              b.create<mlir::linalg::YieldOp>(l, r);
            })
          .getResult(0);
  llvm::SmallVector<int64_t> keepShape(type.getShape());
  keepShape[axis] = 1;
  return reshapeTo(rw, loc, reduced, mlir::RankedTensorType::get(keepShape, element));
}

template <typename OpTy, bool log>
struct SoftmaxLowering : mlir::OpRewritePattern<OpTy> {
  using mlir::OpRewritePattern<OpTy>::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(OpTy op, mlir::PatternRewriter &rw) const override {
    auto type = llvm::cast<mlir::RankedTensorType>(op.getType());
    if (type.getElementType().getIntOrFloatBitWidth() < 32) return mlir::failure();
    std::optional<int64_t> axis = step::normalizeAxis(op.getAxis(), type.getRank());
    if (!axis) return mlir::failure();
    mlir::Location loc = op.getLoc();
    Value x = op.getInput();
    Value m = reduceAxisKeepdim(rw, loc, x, *axis, /*max=*/true);
    Value shifted = elementwise(rw, loc, type, mlir::ValueRange{x, m},
        [&](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange a) -> Value {
          return b.create<mlir::arith::SubFOp>(l, a[0], a[1]);
        });
    Value e = elementwise(rw, loc, type, shifted,
        [&](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange a) -> Value {
          return b.create<mlir::math::ExpOp>(l, a[0]);
        });
    Value s = reduceAxisKeepdim(rw, loc, e, *axis, /*max=*/false);
    Value result = elementwise(rw, loc, type, mlir::ValueRange{log ? shifted : e, s},
        [&](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange a) -> Value {
          if (log) return b.create<mlir::arith::SubFOp>(l, a[0], b.create<mlir::math::LogOp>(l, a[1]));
          return b.create<mlir::arith::DivFOp>(l, a[0], a[1]);
        });
    rw.replaceOp(op, result);
    return mlir::success();
  }
};

}  // namespace

void populateSoftmaxPatterns(mlir::RewritePatternSet &patterns) {
  patterns.add<SoftmaxLowering<step::SoftmaxOp, false>, SoftmaxLowering<step::LogSoftmaxOp, true>>(
      patterns.getContext());
}

}  // namespace stepc::lowering
