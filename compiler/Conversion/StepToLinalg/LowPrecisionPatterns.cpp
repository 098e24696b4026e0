//===- LowPrecisionPatterns.cpp - bf16/f16 ops that compute in f32 -------===//
//
// Normalisations, softmax, cross-entropy, sums, cumsums and convolutions (conv1d and its
// gradients) on bf16 or f16 tensors compute in f32: their inputs are cast up, the op runs in
// f32 (lowered by its own pattern on the next sweep), and its result is cast back down.
// (matmul and batch_matmul keep their narrow operands and accumulate in f32 themselves:
// ContractionPatterns.cpp.) This is the usual mixed-precision rule: sums of squares, running
// maxima, log-sum-exp and long dot products lose too much in a 8- or 11-bit mantissa, while the
// element-wise work around them stays in the narrow type. For a convolution it is exactly a
// bf16 GEMM with f32 accumulation (a product of two bf16 values is exact in f32); a convolution
// the GEMM path takes (one group, bf16 operands: ConvolutionPatterns.cpp, a higher benefit) is
// lowered to bf16 GEMMs directly, the same numbers without the widened copies. The interpreter computes these ops in
// double and rounds the result to the op's type, which f32 matches to well within bf16 / f16
// rounding.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/StepToLinalg/LoweringUtils.h"
#include "compiler/Conversion/StepToLinalg/Patterns.h"
#include "dialects/step/IR/StepDialect.h"
#include "mlir/IR/IRMapping.h"

namespace stepc::lowering {
namespace {

bool isNarrowFloat(mlir::Type type) {
  auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
  return tensor && llvm::isa<mlir::FloatType>(tensor.getElementType()) &&
         tensor.getElementType().getIntOrFloatBitWidth() < 32;
}

mlir::Type widened(mlir::Type type) {
  if (!isNarrowFloat(type)) return type;
  auto tensor = llvm::cast<mlir::RankedTensorType>(type);
  return mlir::RankedTensorType::get(tensor.getShape(),
                                     mlir::Float32Type::get(type.getContext()));
}

template <typename OpTy>
struct WidenToF32 : mlir::OpRewritePattern<OpTy> {
  using mlir::OpRewritePattern<OpTy>::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(OpTy op, mlir::PatternRewriter &rw) const override {
    mlir::Operation *operation = op.getOperation();
    bool narrow = llvm::any_of(operation->getOperandTypes(), isNarrowFloat) ||
                  llvm::any_of(operation->getResultTypes(), isNarrowFloat);
    if (!narrow) return mlir::failure();
    mlir::Location loc = op.getLoc();
    auto f32 = mlir::TypeAttr::get(rw.getF32Type());
    // Casts up first, then the op cloned onto them; every change goes through the rewriter (the
    // lowering is a dialect conversion, which must see each one).
    mlir::IRMapping casts;
    for (mlir::Value operand : operation->getOperands())
      if (isNarrowFloat(operand.getType()) && !casts.contains(operand))
        casts.map(operand, rw.create<step::CastOp>(loc, widened(operand.getType()), operand, f32));
    mlir::Operation *wide = rw.clone(*operation, casts);
    llvm::SmallVector<mlir::Type> originals(wide->getResultTypes());
    rw.modifyOpInPlace(wide, [&] {
      for (mlir::OpResult r : wide->getResults()) r.setType(widened(r.getType()));
    });
    llvm::SmallVector<mlir::Value> results;
    for (auto [r, original] : llvm::zip(wide->getResults(), originals)) {
      if (original == r.getType()) {
        results.push_back(r);
        continue;
      }
      auto element = llvm::cast<mlir::RankedTensorType>(original).getElementType();
      results.push_back(rw.create<step::CastOp>(loc, original, r, mlir::TypeAttr::get(element)));
    }
    rw.replaceOp(op, results);
    return mlir::success();
  }
};

}  // namespace

void populateLowPrecisionPatterns(mlir::RewritePatternSet &patterns) {
  patterns.add<WidenToF32<step::LayerNormOp>, WidenToF32<step::RmsNormOp>,
               WidenToF32<step::SoftmaxOp>, WidenToF32<step::LogSoftmaxOp>,
               WidenToF32<step::CrossEntropyOp>, WidenToF32<step::SumOp>,
               WidenToF32<step::MeanOp>, WidenToF32<step::CumsumOp>, WidenToF32<step::Conv1dOp>,
               WidenToF32<step::Conv1dGradInputOp>, WidenToF32<step::Conv1dGradWeightOp>>(
      patterns.getContext());
}

}  // namespace stepc::lowering
