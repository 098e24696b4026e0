//===- LoweringUtils.cpp - helpers shared by the linalg patterns ---------===//
#include "compiler/Conversion/StepToLinalg/LoweringUtils.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"

namespace stepc::lowering {

bool isFloat(mlir::Type elementType) { return llvm::isa<mlir::FloatType>(elementType); }

mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type) {
  return b.create<mlir::tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
}

mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type,
                           double value) {
  if (auto f = llvm::dyn_cast<mlir::FloatType>(type))
    return b.create<mlir::arith::ConstantOp>(loc, b.getFloatAttr(f, value));
  return b.create<mlir::arith::ConstantOp>(
      loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

mlir::Value filledTensor(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
                         mlir::Value scalar) {
  mlir::Value empty = emptyTensor(b, loc, type);
  return b.create<mlir::linalg::FillOp>(loc, scalar, empty).getResult(0);
}

mlir::Value filledTensor(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
                         double value) {
  return filledTensor(b, loc, type, scalarConstant(b, loc, type.getElementType(), value));
}

mlir::AffineMap broadcastMap(mlir::MLIRContext *ctx, llvm::ArrayRef<int64_t> operandShape,
                             llvm::ArrayRef<int64_t> resultShape) {
  int64_t rank = resultShape.size(), offset = rank - operandShape.size();
  llvm::SmallVector<mlir::AffineExpr> exprs;
  for (int64_t i = 0; i < static_cast<int64_t>(operandShape.size()); ++i) {
    int64_t d = offset + i;
    if (operandShape[i] == 1 && resultShape[d] != 1)
      exprs.push_back(mlir::getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(mlir::getAffineDimExpr(d, ctx));
  }
  return mlir::AffineMap::get(rank, 0, exprs, ctx);
}

mlir::Value elementwise(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType resultType,
                        mlir::ValueRange inputs, ScalarFn fn) {
  mlir::MLIRContext *ctx = b.getContext();
  llvm::SmallVector<mlir::AffineMap> maps;
  for (mlir::Value in : inputs)
    maps.push_back(broadcastMap(ctx, llvm::cast<mlir::RankedTensorType>(in.getType()).getShape(),
                                resultType.getShape()));
  maps.push_back(b.getMultiDimIdentityMap(resultType.getRank()));
  llvm::SmallVector<mlir::utils::IteratorType> iterators(resultType.getRank(),
                                                         mlir::utils::IteratorType::parallel);
  mlir::Value init = emptyTensor(b, loc, resultType);
  auto generic = b.create<mlir::linalg::GenericOp>(
      loc, mlir::TypeRange{resultType}, inputs, mlir::ValueRange{init}, maps, iterators,
      [&](mlir::OpBuilder &nb, mlir::Location nloc, mlir::ValueRange args) {
        mlir::Value r = fn(nb, nloc, args.drop_back());
        nb.create<mlir::linalg::YieldOp>(nloc, r);
      });
  return generic.getResult(0);
}

mlir::Value reshapeTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                      mlir::RankedTensorType type) {
  auto source = llvm::cast<mlir::RankedTensorType>(value.getType());
  if (source.getShape() == type.getShape()) return value;
  // One collapse or one expand when the dims group (e.g. [2, 3, 4] -> [6, 4]).
  if (source.getRank() > type.getRank() && type.getRank() > 0)
    if (auto groups = mlir::getReassociationIndicesForReshape(source, type))
      return b.create<mlir::tensor::CollapseShapeOp>(loc, type, value, *groups);
  if (source.getRank() < type.getRank() && source.getRank() > 0)
    if (auto groups = mlir::getReassociationIndicesForReshape(type, source))
      return b.create<mlir::tensor::ExpandShapeOp>(loc, type, value, *groups);
  // Otherwise through one dimension of all the elements.
  auto allDims = [](int64_t rank) {
    mlir::ReassociationIndices group(rank);
    std::iota(group.begin(), group.end(), 0);
    return llvm::SmallVector<mlir::ReassociationIndices>{group};
  };
  auto flatType = mlir::RankedTensorType::get({type.getNumElements()}, type.getElementType());
  mlir::Value flat = value;
  if (source.getRank() == 0)
    flat = b.create<mlir::tensor::ExpandShapeOp>(loc, flatType, value,
                                                 llvm::ArrayRef<mlir::ReassociationIndices>{});
  else if (source.getRank() > 1)
    flat = b.create<mlir::tensor::CollapseShapeOp>(loc, flatType, value,
                                                   allDims(source.getRank()));
  // And out to the result's shape.
  if (type.getRank() == 0)
    return b.create<mlir::tensor::CollapseShapeOp>(loc, type, flat,
                                                   llvm::ArrayRef<mlir::ReassociationIndices>{});
  if (type.getRank() == 1) return flat;
  return b.create<mlir::tensor::ExpandShapeOp>(loc, type, flat, allDims(type.getRank()));
}

mlir::Value reduceAxisKeepdim(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                              int64_t axis, bool max) {
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
    accExprs.push_back(b.getAffineDimExpr(d));
    iterators.push_back(mlir::utils::IteratorType::parallel);
  }
  auto accType = mlir::RankedTensorType::get(accShape, element);
  mlir::Value acc =
      filledTensor(b, loc, accType, max ? -std::numeric_limits<double>::infinity() : 0.0);
  llvm::SmallVector<mlir::AffineMap> maps = {
      b.getMultiDimIdentityMap(rank), mlir::AffineMap::get(rank, 0, accExprs, b.getContext())};
  auto generic = b.create<mlir::linalg::GenericOp>(
      loc, mlir::TypeRange{accType}, mlir::ValueRange{input}, mlir::ValueRange{acc}, maps,
      iterators, [&](mlir::OpBuilder &nb, mlir::Location l, mlir::ValueRange args) {
        mlir::Value r;
        if (max)
          r = nb.create<mlir::arith::MaximumFOp>(l, args[1], args[0]);
        else
          r = nb.create<mlir::arith::AddFOp>(l, args[1], args[0]);
        nb.create<mlir::linalg::YieldOp>(l, r);
      });
  llvm::SmallVector<int64_t> keepShape(type.getShape());
  keepShape[axis] = 1;
  return reshapeTo(b, loc, generic.getResult(0), mlir::RankedTensorType::get(keepShape, element));
}

mlir::Value clampedIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value id, int64_t size) {
  mlir::Value index = b.create<mlir::arith::IndexCastOp>(loc, b.getIndexType(), id);
  mlir::Value zero = b.create<mlir::arith::ConstantIndexOp>(loc, 0);
  mlir::Value last = b.create<mlir::arith::ConstantIndexOp>(loc, std::max<int64_t>(size - 1, 0));
  return b.create<mlir::arith::MinSIOp>(loc, b.create<mlir::arith::MaxSIOp>(loc, index, zero),
                                        last);
}

mlir::Value gatherRows(mlir::OpBuilder &b, mlir::Location loc, mlir::Value source, mlir::Value ids,
                       mlir::RankedTensorType resultType, int64_t group, bool zeroForNegative) {
  int64_t rank = resultType.getRank();
  int64_t rows = llvm::cast<mlir::RankedTensorType>(source.getType()).getDimSize(0) * group;
  llvm::SmallVector<mlir::AffineExpr> idExprs;
  for (int64_t d = 0; d < rank - 1; ++d) idExprs.push_back(b.getAffineDimExpr(d));
  llvm::SmallVector<mlir::AffineMap> maps = {
      mlir::AffineMap::get(rank, 0, idExprs, b.getContext()), b.getMultiDimIdentityMap(rank)};
  llvm::SmallVector<mlir::utils::IteratorType> iterators(rank, mlir::utils::IteratorType::parallel);
  auto generic = b.create<mlir::linalg::GenericOp>(
      loc, mlir::TypeRange{resultType}, mlir::ValueRange{ids},
      mlir::ValueRange{emptyTensor(b, loc, resultType)}, maps, iterators,
      [&](mlir::OpBuilder &bb, mlir::Location l, mlir::ValueRange args) {
        mlir::Value q = clampedIndex(bb, l, args[0], rows);
        mlir::Value row =
            group == 1 ? q
                       : bb.create<mlir::arith::DivUIOp>(
                               l, q, bb.create<mlir::arith::ConstantIndexOp>(l, group))
                             .getResult();
        mlir::Value col = bb.create<mlir::linalg::IndexOp>(l, rank - 1);
        mlir::Value v = bb.create<mlir::tensor::ExtractOp>(l, source, mlir::ValueRange{row, col});
        if (zeroForNegative) {
          mlir::Value present = bb.create<mlir::arith::CmpIOp>(
              l, mlir::arith::CmpIPredicate::sge, args[0],
              scalarConstant(bb, l, args[0].getType(), 0.0));
          v = bb.create<mlir::arith::SelectOp>(
              l, present, v, scalarConstant(bb, l, resultType.getElementType(), 0.0));
        }
        bb.create<mlir::linalg::YieldOp>(l, v);
      });
  return generic.getResult(0);
}

mlir::Value callRuntimeI64(mlir::OpBuilder &b, mlir::Operation *at, llvm::StringRef name,
                           mlir::ValueRange args) {
  auto module = at->getParentOfType<mlir::ModuleOp>();
  auto fn = module.lookupSymbol<mlir::func::FuncOp>(name);
  if (!fn) {
    mlir::OpBuilder mb(module.getBodyRegion());
    fn = mb.create<mlir::func::FuncOp>(at->getLoc(), name,
                                       mb.getFunctionType(args.getTypes(), {mb.getI64Type()}));
    fn.setPrivate();
  }
  return b.create<mlir::func::CallOp>(at->getLoc(), fn, args).getResult(0);
}

}  // namespace stepc::lowering
