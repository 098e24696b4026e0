//===- UnitReductions.cpp - --step-unit-reductions ------------------------===//
//
// A reduction whose every reduction loop has extent 1, accumulating into a fill, sums one
// element into the fill's value: it is elementwise. Rewritten as an all-parallel generic (the
// reduction loops dropped, read at index 0; the payload's accumulator replaced by the fill's
// value, so each element is the same `fill + x` as before, bit for bit), it fuses with its
// producers and its consumers (--step-fuse-elementwise), where a reduction fuses with producers
// only. An MoE with k = 1 sums each token's one expert row over k: its combine (the gathered
// row times the gate) and the residual add become one pass over the rows, with no zero-filled
// [T, D] buffer and no [T, D] sum written and read back.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/DropUnitLoops.h"
#include "compiler/Codegen/Common/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_UNITREDUCTIONS
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

// The fill `op` accumulates into, where every reduction loop has extent 1 and the result is
// one statically shaped tensor; null otherwise.
mlir::linalg::FillOp unitReductionFill(mlir::linalg::GenericOp op) {
  if (op->getNumResults() != 1 || op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return {};
  llvm::SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto iterators = op.getIteratorTypesArray();
  for (auto [range, iterator] : llvm::zip(ranges, iterators))
    if (iterator == mlir::utils::IteratorType::reduction && range != 1) return {};
  auto type = llvm::dyn_cast<mlir::RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.hasStaticShape()) return {};
  mlir::OpOperand *init = op.getDpsInitOperand(0);
  if (!op.getMatchingIndexingMap(init).isProjectedPermutation()) return {};
  return init->get().getDefiningOp<mlir::linalg::FillOp>();
}

void rewrite(mlir::linalg::GenericOp op, mlir::linalg::FillOp fill) {
  llvm::SmallVector<bool> drop;
  for (auto iterator : op.getIteratorTypesArray())
    drop.push_back(iterator == mlir::utils::IteratorType::reduction);
  auto type = llvm::cast<mlir::RankedTensorType>(op->getResult(0).getType());
  mlir::linalg::GenericOp generic = rebuildWithoutLoops(op, drop, type, fill.getInputs().front());
  op->getResult(0).replaceAllUsesWith(generic->getResult(0));
  op->erase();
  if (fill->use_empty()) fill->erase();
}

struct UnitReductionsPass : impl::UnitReductionsBase<UnitReductionsPass> {
  void runOnOperation() override {
    llvm::SmallVector<std::pair<mlir::linalg::GenericOp, mlir::linalg::FillOp>> found;
    getOperation().walk([&](mlir::linalg::GenericOp op) {
      if (mlir::linalg::FillOp fill = unitReductionFill(op)) found.push_back({op, fill});
    });
    for (auto [op, fill] : found) rewrite(op, fill);
  }
};

}  // namespace

}  // namespace stepc::codegen
