//===- DropUnitLoops.cpp - a linalg.generic without some of its unit loops -===//
#include "compiler/Codegen/Common/DropUnitLoops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace stepc::codegen {

mlir::linalg::GenericOp rebuildWithoutLoops(mlir::linalg::GenericOp op, llvm::ArrayRef<bool> drop,
                                            mlir::RankedTensorType resultType,
                                            mlir::Value accumulator,
                                            llvm::ArrayRef<int64_t> at) {
  mlir::MLIRContext *context = op.getContext();
  // Old loop d -> the new loop's expression, or the index a dropped loop is fixed at.
  auto fixedAt = [&](size_t d) { return at.empty() ? int64_t{0} : at[d]; };
  llvm::SmallVector<mlir::AffineExpr> replacement;
  llvm::SmallVector<int64_t> newIndex;
  unsigned kept = 0;
  for (auto [d, dropped] : llvm::enumerate(drop)) {
    newIndex.push_back(dropped ? -1 : static_cast<int64_t>(kept));
    replacement.push_back(dropped ? mlir::getAffineConstantExpr(fixedAt(d), context)
                                  : mlir::getAffineDimExpr(kept++, context));
  }
  llvm::SmallVector<mlir::AffineMap> maps;
  for (mlir::OpOperand *input : op.getDpsInputOperands()) {
    mlir::AffineMap map = op.getMatchingIndexingMap(input);
    maps.push_back(map.replaceDimsAndSymbols(replacement, {}, kept, map.getNumSymbols()));
  }
  llvm::SmallVector<mlir::AffineExpr> outputs;
  for (mlir::AffineExpr expr : op.getMatchingIndexingMap(op.getDpsInitOperand(0)).getResults())
    if (mlir::AffineExpr e = expr.replaceDimsAndSymbols(replacement, {});
        !llvm::isa<mlir::AffineConstantExpr>(e))
      outputs.push_back(e);
  maps.push_back(mlir::AffineMap::get(kept, 0, outputs, context));

  mlir::OpBuilder b(op);
  mlir::Value empty = b.create<mlir::tensor::EmptyOp>(op.getLoc(), resultType.getShape(),
                                                      resultType.getElementType());
  llvm::SmallVector<mlir::utils::IteratorType> parallel(kept, mlir::utils::IteratorType::parallel);
  auto generic = b.create<mlir::linalg::GenericOp>(
      op.getLoc(), mlir::TypeRange{resultType}, op.getDpsInputs(), mlir::ValueRange{empty}, maps,
      parallel, [&](mlir::OpBuilder &nb, mlir::Location loc, mlir::ValueRange args) {
        mlir::Block &body = op.getRegion().front();
        mlir::IRMapping mapping;
        for (unsigned i = 0; i < body.getNumArguments(); ++i)
          mapping.map(body.getArgument(i), args[i]);
        if (accumulator) mapping.map(body.getArguments().back(), accumulator);
        for (mlir::Operation &inner : body.without_terminator()) {
          if (auto index = llvm::dyn_cast<mlir::linalg::IndexOp>(inner)) {
            int64_t to = newIndex[index.getDim()];
            mlir::Value v = to < 0 ? nb.create<mlir::arith::ConstantIndexOp>(loc, fixedAt(index.getDim()))
                                         .getResult()
                                   : nb.create<mlir::linalg::IndexOp>(loc, to).getResult();
            mapping.map(index.getResult(), v);
            continue;
          }
          nb.clone(inner, mapping);
        }
        llvm::SmallVector<mlir::Value> yielded;
        for (mlir::Value v : body.getTerminator()->getOperands())
          yielded.push_back(mapping.lookupOrDefault(v));
        nb.create<mlir::linalg::YieldOp>(loc, yielded);
      });
  generic->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  return generic;
}

}  // namespace stepc::codegen
