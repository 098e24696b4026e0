//===- ContractionPatterns.cpp - matmul / batch_matmul / embedding → linalg ===//
//
// Plain cases use named ops: a 2-D step.matmul is linalg.matmul (an N-D lhs without
// transpose_lhs is collapsed to 2-D first and the result expanded back), a rank-3
// step.batch_matmul is linalg.batch_matmul. Transposed operands and higher-rank batches become
// one linalg.generic contraction whose indexing maps do the transposes. The accumulator is a
// linalg.fill of zero in the element type; for bf16 / f16 operands it is f32, and the result
// is rounded once at the end (--precision=bf16's GEMMs: bf16 in, f32 accumulation). embedding (a gather of table rows) lives here too.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/StepToLinalg/LoweringUtils.h"
#include "compiler/Conversion/StepToLinalg/Patterns.h"
#include "dialects/step/IR/StepDialect.h"

namespace stepc::lowering {
namespace {

using mlir::Value;

// bf16 / f16 contractions accumulate in f32 (the operands are extended in the body, exactly, as
// tensor cores do) and round the result once: the accumulator's type, and the rounding.
mlir::RankedTensorType accumulatorType(mlir::RankedTensorType result) {
  mlir::Type element = result.getElementType();
  if (llvm::isa<mlir::FloatType>(element) && element.getIntOrFloatBitWidth() < 32)
    return mlir::RankedTensorType::get(result.getShape(),
                                       mlir::Float32Type::get(result.getContext()));
  return result;
}

Value roundTo(mlir::PatternRewriter &rw, mlir::Location loc, Value acc,
              mlir::RankedTensorType resultType) {
  if (acc.getType() == resultType) return acc;
  mlir::Type element = resultType.getElementType();
  return elementwise(rw, loc, resultType, {acc},
                     [&](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange v) -> Value {
                       return b.create<mlir::arith::TruncFOp>(l, element, v[0]);
                     });
}

// out[b..., m, n] += lhs[b..., m, k] * rhs[(b...,) k, n], with either operand's last two axes
// swapped when transposed. `rhsBatched`: rhs has the batch axes (batch_matmul).
Value genericContraction(mlir::PatternRewriter &rw, mlir::Location loc, Value lhs, Value rhs,
                         bool transposeLhs, bool transposeRhs, bool rhsBatched,
                         mlir::RankedTensorType resultType) {
  mlir::MLIRContext *ctx = rw.getContext();
  int64_t batch = resultType.getRank() - 2, loops = batch + 3;
  auto d = [&](int64_t i) { return mlir::getAffineDimExpr(i, ctx); };
  mlir::AffineExpr m = d(batch), n = d(batch + 1), k = d(batch + 2);
  llvm::SmallVector<mlir::AffineExpr> lhsExprs, rhsExprs, outExprs;
  for (int64_t i = 0; i < batch; ++i) {
    lhsExprs.push_back(d(i));
    outExprs.push_back(d(i));
    if (rhsBatched) rhsExprs.push_back(d(i));
  }
  lhsExprs.append(transposeLhs ? llvm::SmallVector<mlir::AffineExpr>{k, m}
                               : llvm::SmallVector<mlir::AffineExpr>{m, k});
  rhsExprs.append(transposeRhs ? llvm::SmallVector<mlir::AffineExpr>{n, k}
                               : llvm::SmallVector<mlir::AffineExpr>{k, n});
  outExprs.append({m, n});
  llvm::SmallVector<mlir::AffineMap> maps = {mlir::AffineMap::get(loops, 0, lhsExprs, ctx),
                                             mlir::AffineMap::get(loops, 0, rhsExprs, ctx),
                                             mlir::AffineMap::get(loops, 0, outExprs, ctx)};
  llvm::SmallVector<mlir::utils::IteratorType> iterators(loops - 1,
                                                         mlir::utils::IteratorType::parallel);
  iterators.push_back(mlir::utils::IteratorType::reduction);
  mlir::RankedTensorType accType = accumulatorType(resultType);
  mlir::Type accElement = accType.getElementType();
  Value acc = filledTensor(rw, loc, accType, 0.0);
  auto generic = rw.create<mlir::linalg::GenericOp>(
      loc, mlir::TypeRange{accType}, mlir::ValueRange{lhs, rhs}, mlir::ValueRange{acc}, maps,
      iterators, [&](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange args) {
        auto widen = [&](Value v) -> Value {
          return v.getType() == accElement ? v : b.create<mlir::arith::ExtFOp>(l, accElement, v);
        };
        Value product = b.create<mlir::arith::MulFOp>(l, widen(args[0]), widen(args[1]));
        Value sum = b.create<mlir::arith::AddFOp>(l, args[2], product);
        b.create<mlir::linalg::YieldOp>(l, sum);
      });
  return roundTo(rw, loc, generic.getResult(0), resultType);
}

struct MatmulLowering : mlir::OpRewritePattern<step::MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::MatmulOp op,
                                      mlir::PatternRewriter &rw) const override {
    mlir::Location loc = op.getLoc();
    auto resultType = llvm::cast<mlir::RankedTensorType>(op.getType());
    auto lhsType = llvm::cast<mlir::RankedTensorType>(op.getLhs().getType());
    auto rhsType = llvm::cast<mlir::RankedTensorType>(op.getRhs().getType());
    if (lhsType.getRank() < 2 || rhsType.getRank() != 2) return mlir::failure();
    Value result;
    if (op.getTransposeLhs() || op.getTransposeRhs()) {
      result = genericContraction(rw, loc, op.getLhs(), op.getRhs(), op.getTransposeLhs(),
                                  op.getTransposeRhs(), /*rhsBatched=*/false, resultType);
    } else {
      // [..., M, K] → [(...·M), K], one linalg.matmul, and back.
      int64_t k = lhsType.getShape().back(), n = rhsType.getDimSize(1);
      int64_t rows = lhsType.getNumElements() / k;
      mlir::RankedTensorType accType = accumulatorType(resultType);
      Value lhs = op.getLhs();
      if (lhsType.getRank() > 2) {
        llvm::SmallVector<mlir::ReassociationIndices> groups(2);
        for (int64_t i = 0; i < lhsType.getRank() - 1; ++i) groups[0].push_back(i);
        groups[1].push_back(lhsType.getRank() - 1);
        lhs = rw.create<mlir::tensor::CollapseShapeOp>(
            loc, mlir::RankedTensorType::get({rows, k}, lhsType.getElementType()), lhs, groups);
      }
      // A bf16 linalg.matmul into an f32 accumulator extends its operands (named-op casts).
      auto flatType = mlir::RankedTensorType::get({rows, n}, accType.getElementType());
      Value acc = filledTensor(rw, loc, flatType, 0.0);
      Value flat = rw.create<mlir::linalg::MatmulOp>(loc, mlir::ValueRange{lhs, op.getRhs()},
                                                     mlir::ValueRange{acc})
                       .getResult(0);
      if (lhsType.getRank() == 2) {
        result = flat;
      } else {
        llvm::SmallVector<mlir::ReassociationIndices> groups(2);
        for (int64_t i = 0; i < resultType.getRank() - 1; ++i) groups[0].push_back(i);
        groups[1].push_back(resultType.getRank() - 1);
        result = rw.create<mlir::tensor::ExpandShapeOp>(loc, accType, flat, groups);
      }
      result = roundTo(rw, loc, result, resultType);
    }
    rw.replaceOp(op, result);
    return mlir::success();
  }
};

struct BatchMatmulLowering : mlir::OpRewritePattern<step::BatchMatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::BatchMatmulOp op,
                                      mlir::PatternRewriter &rw) const override {
    mlir::Location loc = op.getLoc();
    auto resultType = llvm::cast<mlir::RankedTensorType>(op.getType());
    if (resultType.getRank() < 3) return mlir::failure();
    Value result;
    if (resultType.getRank() == 3 && !op.getTransposeLhs() && !op.getTransposeRhs()) {
      Value acc = filledTensor(rw, loc, accumulatorType(resultType), 0.0);
      result = rw.create<mlir::linalg::BatchMatmulOp>(
                     loc, mlir::ValueRange{op.getLhs(), op.getRhs()}, mlir::ValueRange{acc})
                   .getResult(0);
      result = roundTo(rw, loc, result, resultType);
    } else {
      result = genericContraction(rw, loc, op.getLhs(), op.getRhs(), op.getTransposeLhs(),
                                  op.getTransposeRhs(), /*rhsBatched=*/true, resultType);
    }
    rw.replaceOp(op, result);
    return mlir::success();
  }
};

// embedding: a gather of table rows by id (gatherRows), the id clamped to the table.
struct EmbeddingLowering : mlir::OpRewritePattern<step::EmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::EmbeddingOp op,
                                      mlir::PatternRewriter &rw) const override {
    auto resultType = llvm::cast<mlir::RankedTensorType>(op.getType());
    rw.replaceOp(op, gatherRows(rw, op.getLoc(), op.getTable(), op.getIds(), resultType,
                                /*group=*/1, /*zeroForNegative=*/false));
    return mlir::success();
  }
};

}  // namespace

void populateContractionPatterns(mlir::RewritePatternSet &patterns) {
  patterns.add<MatmulLowering, BatchMatmulLowering, EmbeddingLowering>(patterns.getContext());
}

}  // namespace stepc::lowering
