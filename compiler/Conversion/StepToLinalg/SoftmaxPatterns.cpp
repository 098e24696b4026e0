//===- SoftmaxPatterns.cpp - softmax / log_softmax / cross_entropy → linalg ===//
//
// Along one axis, as the interpreter computes them: m = max (a reduction generic, -inf
// start), then exp(x - m), its sum (a reduction generic), and a last elementwise generic:
// softmax = exp(x - m) / sum, log_softmax = (x - m) - log(sum). The reduced values are
// expanded back to size 1 on the axis so the elementwise generics broadcast them.
// cross_entropy builds on log_softmax (see CrossEntropyLowering). These patterns take f32 and
// f64; on bf16/f16 the op computes in f32 between casts (LowPrecisionPatterns.cpp).
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/StepToLinalg/LoweringUtils.h"
#include "compiler/Conversion/StepToLinalg/Patterns.h"
#include "dialects/step/IR/ShapeRules.h"
#include "dialects/step/IR/StepDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace stepc::lowering {
namespace {

using mlir::Value;

// softmax (or log_softmax) of `x` along `axis`.
Value softmaxOf(mlir::PatternRewriter &rw, mlir::Location loc, Value x, int64_t axis, bool log) {
  auto type = llvm::cast<mlir::RankedTensorType>(x.getType());
  Value m = reduceAxisKeepdim(rw, loc, x, axis, /*max=*/true);
  Value shifted = elementwise(rw, loc, type, mlir::ValueRange{x, m},
      [&](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange a) -> Value {
        return b.create<mlir::arith::SubFOp>(l, a[0], a[1]);
      });
  Value e = elementwise(rw, loc, type, shifted,
      [&](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange a) -> Value {
        return b.create<mlir::math::ExpOp>(l, a[0]);
      });
  Value s = reduceAxisKeepdim(rw, loc, e, axis, /*max=*/false);
  return elementwise(rw, loc, type, mlir::ValueRange{log ? shifted : e, s},
      [&](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange a) -> Value {
        if (log)
          return b.create<mlir::arith::SubFOp>(l, a[0], b.create<mlir::math::LogOp>(l, a[1]));
        return b.create<mlir::arith::DivFOp>(l, a[0], a[1]);
      });
}

template <typename OpTy, bool log>
struct SoftmaxLowering : mlir::OpRewritePattern<OpTy> {
  using mlir::OpRewritePattern<OpTy>::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(OpTy op, mlir::PatternRewriter &rw) const override {
    auto type = llvm::cast<mlir::RankedTensorType>(op.getType());
    if (type.getElementType().getIntOrFloatBitWidth() < 32) return mlir::failure();
    std::optional<int64_t> axis = step::normalizeAxis(op.getAxis(), type.getRank());
    if (!axis) return mlir::failure();
    rw.replaceOp(op, softmaxOf(rw, op.getLoc(), op.getInput(), *axis, log));
    return mlir::success();
  }
};

// cross_entropy: log_softmax over the last axis, the negated entry of each position's target
// (a generic over the targets reading it with tensor.extract), then the sum or the mean over
// all positions unless `reduction = "none"`. Targets are clamped to the classes (clampedIndex).
struct CrossEntropyLowering : mlir::OpRewritePattern<step::CrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::CrossEntropyOp op,
                                      mlir::PatternRewriter &rw) const override {
    auto logitsType = llvm::cast<mlir::RankedTensorType>(op.getLogits().getType());
    auto targetsType = llvm::cast<mlir::RankedTensorType>(op.getTargets().getType());
    auto resultType = llvm::cast<mlir::RankedTensorType>(op.getType());
    mlir::Type element = logitsType.getElementType();
    if (element.getIntOrFloatBitWidth() < 32) return mlir::failure();
    mlir::Location loc = op.getLoc();
    int64_t rank = logitsType.getRank();
    Value lsm = softmaxOf(rw, loc, op.getLogits(), rank - 1, /*log=*/true);
    auto lossType = mlir::RankedTensorType::get(targetsType.getShape(), element);
    Value losses = elementwise(rw, loc, lossType, op.getTargets(),
        [&](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange a) -> Value {
          llvm::SmallVector<Value> indices;
          for (int64_t d = 0; d < rank - 1; ++d)
            indices.push_back(b.create<mlir::linalg::IndexOp>(l, d));
          indices.push_back(clampedIndex(b, l, a[0], logitsType.getShape().back()));
          Value v = b.create<mlir::tensor::ExtractOp>(l, lsm, indices);
          return b.create<mlir::arith::NegFOp>(l, v);
        });
    llvm::StringRef reduction = op.getReduction();
    if (reduction == "none") {
      rw.replaceOp(op, losses);
      return mlir::success();
    }
    int64_t positions = targetsType.getNumElements();
    Value acc = filledTensor(rw, loc, resultType, 0.0);
    llvm::SmallVector<mlir::utils::IteratorType> iterators(targetsType.getRank(),
                                                           mlir::utils::IteratorType::reduction);
    llvm::SmallVector<mlir::AffineMap> maps = {
        rw.getMultiDimIdentityMap(targetsType.getRank()),
        mlir::AffineMap::get(targetsType.getRank(), 0, {}, rw.getContext())};
    bool mean = reduction == "mean";
    Value total =
        rw.create<mlir::linalg::GenericOp>(
              loc, mlir::TypeRange{resultType}, mlir::ValueRange{losses}, mlir::ValueRange{acc},
              maps, iterators,
              [&](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange args) {
                b.create<mlir::linalg::YieldOp>(
                    l, Value(b.create<mlir::arith::AddFOp>(l, args[1], args[0])));
              })
            .getResult(0);
    if (mean)
      total = elementwise(rw, loc, resultType, total,
          [&](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange a) -> Value {
            return b.create<mlir::arith::DivFOp>(
                l, a[0], scalarConstant(b, l, element, static_cast<double>(positions)));
          });
    rw.replaceOp(op, total);
    return mlir::success();
  }
};

}  // namespace

void populateSoftmaxPatterns(mlir::RewritePatternSet &patterns) {
  patterns.add<SoftmaxLowering<step::SoftmaxOp, false>, SoftmaxLowering<step::LogSoftmaxOp, true>,
               CrossEntropyLowering>(patterns.getContext());
}

}  // namespace stepc::lowering
