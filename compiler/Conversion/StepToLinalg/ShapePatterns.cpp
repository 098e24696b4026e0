//===- ShapePatterns.cpp - shape step ops → tensor / linalg ops -----------===//
//
// reshape → one tensor.collapse_shape or tensor.expand_shape when the dims group, else both
// through 1-D (nothing when the shape is unchanged),
// transpose → linalg.transpose, broadcast → a broadcasting linalg.generic copy,
// slice → tensor.extract_slice (strided), pad → linalg.fill of the value + tensor.insert_slice,
// concat → tensor.empty + one tensor.insert_slice per operand, split → one tensor.extract_slice
// per part, iota → a generic without inputs computing linalg.index (+ offset) in the dtype.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/StepToLinalg/LoweringUtils.h"
#include "compiler/Conversion/StepToLinalg/Patterns.h"
#include "dialects/step/IR/ShapeRules.h"
#include "dialects/step/IR/StepDialect.h"

namespace stepc::lowering {
namespace {

using mlir::Value;

llvm::SmallVector<mlir::OpFoldResult> indexAttrs(mlir::OpBuilder &b,
                                                 llvm::ArrayRef<int64_t> values) {
  llvm::SmallVector<mlir::OpFoldResult> out;
  for (int64_t v : values) out.push_back(b.getIndexAttr(v));
  return out;
}

struct ReshapeLowering : mlir::OpRewritePattern<step::ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::ReshapeOp op,
                                      mlir::PatternRewriter &rw) const override {
    auto type = llvm::cast<mlir::RankedTensorType>(op.getType());
    rw.replaceOp(op, reshapeTo(rw, op.getLoc(), op.getInput(), type));
    return mlir::success();
  }
};

struct TransposeLowering : mlir::OpRewritePattern<step::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::TransposeOp op,
                                      mlir::PatternRewriter &rw) const override {
    auto type = llvm::cast<mlir::RankedTensorType>(op.getType());
    llvm::SmallVector<int64_t> perm = step::toI64Vector(op.getPerm());
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
    if (identity) {
      rw.replaceOp(op, op.getInput());
      return mlir::success();
    }
    Value init = emptyTensor(rw, op.getLoc(), type);
    auto transpose = rw.create<mlir::linalg::TransposeOp>(op.getLoc(), op.getInput(), init, perm);
    rw.replaceOp(op, transpose->getResult(0));
    return mlir::success();
  }
};

struct BroadcastLowering : mlir::OpRewritePattern<step::BroadcastOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::BroadcastOp op,
                                      mlir::PatternRewriter &rw) const override {
    auto type = llvm::cast<mlir::RankedTensorType>(op.getType());
    if (op.getInput().getType() == type) {
      rw.replaceOp(op, op.getInput());
      return mlir::success();
    }
    Value result = elementwise(rw, op.getLoc(), type, op.getInput(),
        [](mlir::OpBuilder &, mlir::Location, mlir::ValueRange args) { return args[0]; });
    rw.replaceOp(op, result);
    return mlir::success();
  }
};

struct SliceLowering : mlir::OpRewritePattern<step::SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::SliceOp op, mlir::PatternRewriter &rw) const override {
    auto type = llvm::cast<mlir::RankedTensorType>(op.getType());
    llvm::SmallVector<int64_t> start = step::toI64Vector(op.getStart());
    llvm::SmallVector<int64_t> strides =
        op.getStrides() ? step::toI64Vector(*op.getStrides())
                        : llvm::SmallVector<int64_t>(type.getRank(), 1);
    rw.replaceOpWithNewOp<mlir::tensor::ExtractSliceOp>(
        op, type, op.getInput(), indexAttrs(rw, start), indexAttrs(rw, type.getShape()),
        indexAttrs(rw, strides));
    return mlir::success();
  }
};

struct PadLowering : mlir::OpRewritePattern<step::PadOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::PadOp op, mlir::PatternRewriter &rw) const override {
    auto type = llvm::cast<mlir::RankedTensorType>(op.getType());
    auto inType = llvm::cast<mlir::RankedTensorType>(op.getInput().getType());
    Value filled = filledTensor(rw, op.getLoc(), type, op.getValue().convertToDouble());
    llvm::SmallVector<int64_t> low = step::toI64Vector(op.getLow());
    rw.replaceOpWithNewOp<mlir::tensor::InsertSliceOp>(
        op, op.getInput(), filled, indexAttrs(rw, low), indexAttrs(rw, inType.getShape()),
        indexAttrs(rw, llvm::SmallVector<int64_t>(type.getRank(), 1)));
    return mlir::success();
  }
};

struct ConcatLowering : mlir::OpRewritePattern<step::ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::ConcatOp op,
                                      mlir::PatternRewriter &rw) const override {
    auto type = llvm::cast<mlir::RankedTensorType>(op.getType());
    std::optional<int64_t> axis = step::normalizeAxis(op.getAxis(), type.getRank());
    if (!axis) return mlir::failure();
    if (op.getInputs().size() == 1) {
      rw.replaceOp(op, op.getInputs().front());
      return mlir::success();
    }
    Value result = emptyTensor(rw, op.getLoc(), type);
    llvm::SmallVector<int64_t> offsets(type.getRank(), 0);
    llvm::SmallVector<int64_t> ones(type.getRank(), 1);
    for (Value in : op.getInputs()) {
      auto inType = llvm::cast<mlir::RankedTensorType>(in.getType());
      result = rw.create<mlir::tensor::InsertSliceOp>(op.getLoc(), in, result,
                                                      indexAttrs(rw, offsets),
                                                      indexAttrs(rw, inType.getShape()),
                                                      indexAttrs(rw, ones));
      offsets[*axis] += inType.getDimSize(*axis);
    }
    rw.replaceOp(op, result);
    return mlir::success();
  }
};

struct SplitLowering : mlir::OpRewritePattern<step::SplitOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::SplitOp op, mlir::PatternRewriter &rw) const override {
    auto inType = llvm::cast<mlir::RankedTensorType>(op.getInput().getType());
    std::optional<int64_t> axis = step::normalizeAxis(op.getAxis(), inType.getRank());
    if (!axis) return mlir::failure();
    llvm::SmallVector<Value> parts;
    llvm::SmallVector<int64_t> offsets(inType.getRank(), 0);
    llvm::SmallVector<int64_t> ones(inType.getRank(), 1);
    for (mlir::OpResult r : op->getResults()) {
      auto type = llvm::cast<mlir::RankedTensorType>(r.getType());
      parts.push_back(rw.create<mlir::tensor::ExtractSliceOp>(
          op.getLoc(), type, op.getInput(), indexAttrs(rw, offsets),
          indexAttrs(rw, type.getShape()), indexAttrs(rw, ones)));
      offsets[*axis] += type.getDimSize(*axis);
    }
    rw.replaceOp(op, parts);
    return mlir::success();
  }
};

struct IotaLowering : mlir::OpRewritePattern<step::IotaOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::IotaOp op, mlir::PatternRewriter &rw) const override {
    auto type = llvm::cast<mlir::RankedTensorType>(op.getType());
    std::optional<int64_t> axis = step::normalizeAxis(op.getAxis(), type.getRank());
    if (!axis) return mlir::failure();
    mlir::Type element = type.getElementType();
    int64_t offset = op.getOffset();
    Value result = elementwise(rw, op.getLoc(), type, mlir::ValueRange{},
        [&](mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange) -> Value {
          namespace ar = mlir::arith;
          Value i = b.create<mlir::linalg::IndexOp>(loc, *axis);
          Value v = b.create<ar::IndexCastOp>(loc, b.getI64Type(), i);
          v = b.create<ar::AddIOp>(loc, v, scalarConstant(b, loc, b.getI64Type(), offset));
          if (isFloat(element)) return b.create<ar::SIToFPOp>(loc, element, v);
          if (element.isInteger(1))
            return b.create<ar::CmpIOp>(loc, ar::CmpIPredicate::ne, v,
                                        scalarConstant(b, loc, b.getI64Type(), 0));
          if (element.getIntOrFloatBitWidth() < 64) return b.create<ar::TruncIOp>(loc, element, v);
          return v;
        });
    rw.replaceOp(op, result);
    return mlir::success();
  }
};

}  // namespace

void populateShapePatterns(mlir::RewritePatternSet &patterns) {
  patterns.add<ReshapeLowering, TransposeLowering, BroadcastLowering, SliceLowering, PadLowering,
               ConcatLowering, SplitLowering, IotaLowering>(patterns.getContext());
}

}  // namespace stepc::lowering
