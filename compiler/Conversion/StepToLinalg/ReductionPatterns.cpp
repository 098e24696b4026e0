//===- ReductionPatterns.cpp - sum / mean / reduce_max → linalg.generic --===//
//
// A reduction is a linalg.generic with "reduction" iterators on the reduced axes into a
// linalg.fill'ed accumulator of the reduced shape without those axes; `keepdim` re-inserts
// them as size 1 with tensor.expand_shape, and mean divides by the reduced count in a second
// elementwise generic (integer mean truncates, as in the interpreter). Float reduce_max starts
// at -inf and propagates NaN (arith.maximumf).
//
//===----------------------------------------------------------------------===//
#include <limits>

#include "compiler/Conversion/StepToLinalg/LoweringUtils.h"
#include "compiler/Conversion/StepToLinalg/Patterns.h"
#include "dialects/step/IR/ShapeRules.h"
#include "dialects/step/IR/StepDialect.h"

namespace stepc::lowering {
namespace {

using mlir::Value;

enum class Kind { Sum, Mean, Max };

template <typename OpTy, Kind kind>
struct ReductionLowering : mlir::OpRewritePattern<OpTy> {
  using mlir::OpRewritePattern<OpTy>::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(OpTy op, mlir::PatternRewriter &rw) const override {
    mlir::Location loc = op.getLoc();
    auto inType = llvm::cast<mlir::RankedTensorType>(op.getInput().getType());
    auto resultType = llvm::cast<mlir::RankedTensorType>(op.getType());
    mlir::Type element = inType.getElementType();
    int64_t rank = inType.getRank();
    llvm::SmallVector<bool> reduced(rank, false);
    for (int64_t axis : step::toI64Vector(op.getAxes())) {
      std::optional<int64_t> a = step::normalizeAxis(axis, rank);
      if (!a) return mlir::failure();
      reduced[*a] = true;
    }
    // The accumulator: the input shape without the reduced axes.
    llvm::SmallVector<int64_t> accShape;
    llvm::SmallVector<mlir::AffineExpr> accExprs;
    llvm::SmallVector<mlir::utils::IteratorType> iterators;
    int64_t count = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (reduced[d]) {
        count *= inType.getDimSize(d);
        iterators.push_back(mlir::utils::IteratorType::reduction);
        continue;
      }
      accShape.push_back(inType.getDimSize(d));
      accExprs.push_back(rw.getAffineDimExpr(d));
      iterators.push_back(mlir::utils::IteratorType::parallel);
    }
    auto accType = mlir::RankedTensorType::get(accShape, element);
    bool f = isFloat(element);
    double init = 0.0;
    Value initScalar;
    if (kind == Kind::Max) {
      if (f) {
        initScalar = scalarConstant(rw, loc, element, -std::numeric_limits<double>::infinity());
      } else {
        initScalar = rw.create<mlir::arith::ConstantOp>(
            loc, rw.getIntegerAttr(element, llvm::APInt::getSignedMinValue(
                                                element.getIntOrFloatBitWidth())));
      }
    } else {
      initScalar = scalarConstant(rw, loc, element, init);
    }
    Value acc = filledTensor(rw, loc, accType, initScalar);
    llvm::SmallVector<mlir::AffineMap> maps = {
        rw.getMultiDimIdentityMap(rank),
        mlir::AffineMap::get(rank, 0, accExprs, rw.getContext())};
    auto generic = rw.create<mlir::linalg::GenericOp>(
        loc, mlir::TypeRange{accType}, mlir::ValueRange{op.getInput()}, mlir::ValueRange{acc},
        maps, iterators, [&](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange args) {
          Value x = args[0], a = args[1], r;
          if (kind == Kind::Max)
            r = f ? Value(b.create<mlir::arith::MaximumFOp>(l, a, x))
                  : Value(b.create<mlir::arith::MaxSIOp>(l, a, x));
          else
            r = f ? Value(b.create<mlir::arith::AddFOp>(l, a, x))
                  : Value(b.create<mlir::arith::AddIOp>(l, a, x));
          b.create<mlir::linalg::YieldOp>(l, r);
        });
    Value result = generic.getResult(0);
    if (kind == Kind::Mean) {
      result = elementwise(rw, loc, accType, result,
          [&](mlir::OpBuilder &b, mlir::Location l, mlir::ValueRange args) -> Value {
            Value n = scalarConstant(b, l, element, static_cast<double>(count));
            if (f) return b.create<mlir::arith::DivFOp>(l, args[0], n);
            return b.create<mlir::arith::DivSIOp>(l, args[0], n);
          });
    }
    // keepdim: size-1 axes put back, each grouped with the kept axis before it (or, before the
    // first kept axis, with the one after it).
    if (resultType != accType) {
      llvm::SmallVector<mlir::ReassociationIndices> groups;
      mlir::ReassociationIndices pending;
      for (int64_t d = 0; d < rank; ++d) {
        if (!reduced[d]) {
          pending.push_back(d);
          groups.push_back(pending);
          pending.clear();
        } else if (groups.empty()) {
          pending.push_back(d);
        } else {
          groups.back().push_back(d);
        }
      }
      result = rw.create<mlir::tensor::ExpandShapeOp>(loc, resultType, result, groups);
    }
    rw.replaceOp(op, result);
    return mlir::success();
  }
};

}  // namespace

void populateReductionPatterns(mlir::RewritePatternSet &patterns) {
  patterns.add<ReductionLowering<step::SumOp, Kind::Sum>,
               ReductionLowering<step::MeanOp, Kind::Mean>,
               ReductionLowering<step::ReduceMaxOp, Kind::Max>>(patterns.getContext());
}

}  // namespace stepc::lowering
