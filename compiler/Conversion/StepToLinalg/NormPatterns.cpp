//===- NormPatterns.cpp - layer_norm / rms_norm → linalg -----------------===//
//
// Over the last dimension C, as the interpreter computes them: layer_norm takes the mean (a sum
// reduction kept as size 1, divided by C), the biased variance of the centred values, and
// (x - mean) * (1 / sqrt(var + eps)) * gamma + beta in one elementwise generic; rms_norm is
// x * (1 / sqrt(mean(x²) + eps)) * gamma. These patterns take f32 and f64; on bf16/f16 the op
// computes in f32 between casts (LowPrecisionPatterns.cpp).
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/StepToLinalg/LoweringUtils.h"
#include "compiler/Conversion/StepToLinalg/Patterns.h"
#include "dialects/step/IR/StepDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace stepc::lowering {
namespace {

using mlir::Value;

// x * (1 / sqrt(sumSquares / c + eps)) * gamma (+ beta), elementwise with broadcasting.
Value scaleRows(mlir::PatternRewriter &rw, mlir::Location loc, mlir::RankedTensorType type,
                Value x, Value sumSquares, Value gamma, Value beta, double eps) {
  int64_t c = type.getShape().back();
  mlir::Type element = type.getElementType();
  llvm::SmallVector<Value> inputs = {x, sumSquares, gamma};
  if (beta) inputs.push_back(beta);
  return elementwise(rw, loc, type, inputs,
      [&](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange a) -> Value {
        namespace ar = mlir::arith;
        Value meanSquare =
            b.create<ar::DivFOp>(l, a[1], scalarConstant(b, l, element, static_cast<double>(c)));
        Value root = b.create<mlir::math::SqrtOp>(
            l, b.create<ar::AddFOp>(l, meanSquare, scalarConstant(b, l, element, eps)));
        Value scale = b.create<ar::DivFOp>(l, scalarConstant(b, l, element, 1.0), root);
        Value y = b.create<ar::MulFOp>(l, b.create<ar::MulFOp>(l, a[0], scale), a[2]);
        if (a.size() > 3) y = b.create<ar::AddFOp>(l, y, a[3]);
        return y;
      });
}

Value squares(mlir::PatternRewriter &rw, mlir::Location loc, mlir::RankedTensorType type,
              Value x) {
  return elementwise(rw, loc, type, x,
      [](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange a) -> Value {
        return b.create<mlir::arith::MulFOp>(l, a[0], a[0]);
      });
}

struct LayerNormLowering : mlir::OpRewritePattern<step::LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::LayerNormOp op,
                                      mlir::PatternRewriter &rw) const override {
    auto type = llvm::cast<mlir::RankedTensorType>(op.getType());
    mlir::Type element = type.getElementType();
    if (element.getIntOrFloatBitWidth() < 32 || type.getRank() < 1) return mlir::failure();
    mlir::Location loc = op.getLoc();
    int64_t last = type.getRank() - 1, c = type.getShape().back();
    Value sum = reduceAxisKeepdim(rw, loc, op.getInput(), last, /*max=*/false);
    Value centred = elementwise(rw, loc, type, mlir::ValueRange{op.getInput(), sum},
        [&](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange a) -> Value {
          Value mean = b.create<mlir::arith::DivFOp>(
              l, a[1], scalarConstant(b, l, element, static_cast<double>(c)));
          return b.create<mlir::arith::SubFOp>(l, a[0], mean);
        });
    Value sumSquares = reduceAxisKeepdim(rw, loc, squares(rw, loc, type, centred), last, false);
    rw.replaceOp(op, scaleRows(rw, loc, type, centred, sumSquares, op.getGamma(), op.getBeta(),
                               op.getEps().convertToDouble()));
    return mlir::success();
  }
};

struct RmsNormLowering : mlir::OpRewritePattern<step::RmsNormOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::RmsNormOp op,
                                      mlir::PatternRewriter &rw) const override {
    auto type = llvm::cast<mlir::RankedTensorType>(op.getType());
    if (type.getElementType().getIntOrFloatBitWidth() < 32 || type.getRank() < 1)
      return mlir::failure();
    mlir::Location loc = op.getLoc();
    Value sumSquares = reduceAxisKeepdim(rw, loc, squares(rw, loc, type, op.getInput()),
                                         type.getRank() - 1, /*max=*/false);
    rw.replaceOp(op, scaleRows(rw, loc, type, op.getInput(), sumSquares, op.getGamma(), Value(),
                               op.getEps().convertToDouble()));
    return mlir::success();
  }
};

}  // namespace

void populateNormPatterns(mlir::RewritePatternSet &patterns) {
  patterns.add<LayerNormLowering, RmsNormLowering>(patterns.getContext());
}

}  // namespace stepc::lowering
