//===- FoldUnitCollapse.cpp - --step-fold-unit-collapse -------------------===//
//
// A gather (an all-parallel generic reading a tensor by index) whose result is only read
// through a collapse_shape that drops unit dims ([T, 1, D] -> [T, D]) computes the collapsed
// tensor directly: its loops over those dims
// (extent 1) are dropped, read at index 0. A reshape between a producer and its consumer
// blocks their fusion (--step-fuse-elementwise): the gather that brings an MoE's input
// gradient back to token order ([T, k = 1, D]) was written to memory and read back by the one
// kernel that consumes it. Now it fuses there, like any producer with one consumer.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/DropUnitLoops.h"
#include "compiler/Codegen/Common/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_FOLDUNITCOLLAPSE
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

// Whether `op`'s body reads a tensor by index (a gather).
bool isGather(mlir::linalg::GenericOp op) {
  return op.getRegion()
      .walk([](mlir::tensor::ExtractOp) { return mlir::WalkResult::interrupt(); })
      .wasInterrupted();
}

// The result dims `op`'s collapse_shape users all drop (unit dims merged into a group with
// another dim), or none where the rewrite does not apply. Gathers only: an elementwise
// producer is otherwise reshaped along with its consumer by canonicalization and fuses
// already, and rewriting it changed which kernels the outliner finds identical (one to two
// more distinct kernels in the zoo's plans, one lost fusion in GPT-2's).
llvm::SmallVector<int64_t> droppedDims(mlir::linalg::GenericOp op) {
  if (op->getNumResults() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() || op->use_empty() || !isGather(op))
    return {};
  mlir::OpOperand *init = op.getDpsInitOperand(0);
  if (!op.getMatchingIndexingMap(init).isPermutation() || op.payloadUsesValueFromOperand(init) ||
      !init->get().getDefiningOp<mlir::tensor::EmptyOp>())
    return {};
  auto type = llvm::dyn_cast<mlir::RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.hasStaticShape()) return {};
  std::optional<llvm::SmallVector<mlir::ReassociationIndices, 4>> groups;
  for (mlir::Operation *user : op->getResult(0).getUsers()) {
    auto collapse = llvm::dyn_cast<mlir::tensor::CollapseShapeOp>(user);
    if (!collapse) return {};
    auto mine = collapse.getReassociationIndices();
    if (groups && *groups != mine) return {};
    groups = mine;
  }
  // In each group, one dim stays (the first that is not 1, or the first); the rest must be 1.
  llvm::SmallVector<int64_t> dropped;
  for (const mlir::ReassociationIndices &group : *groups) {
    int64_t kept = group.front();
    for (int64_t d : group)
      if (type.getDimSize(d) != 1) {
        kept = d;
        break;
      }
    for (int64_t d : group) {
      if (d == kept) continue;
      if (type.getDimSize(d) != 1) return {};
      dropped.push_back(d);
    }
  }
  return dropped;
}

void rewrite(mlir::linalg::GenericOp op, llvm::ArrayRef<int64_t> droppedResultDims) {
  mlir::AffineMap resultMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  llvm::SmallVector<bool> drop(op.getNumLoops(), false);
  for (int64_t d : droppedResultDims)
    drop[llvm::cast<mlir::AffineDimExpr>(resultMap.getResult(d)).getPosition()] = true;
  auto collapse = llvm::cast<mlir::tensor::CollapseShapeOp>(*op->getUsers().begin());
  mlir::linalg::GenericOp generic = rebuildWithoutLoops(op, drop, collapse.getResultType());
  for (mlir::Operation *user : llvm::to_vector(op->getResult(0).getUsers())) {
    user->getResult(0).replaceAllUsesWith(generic->getResult(0));
    user->erase();
  }
  op->erase();
}

struct FoldUnitCollapsePass : impl::FoldUnitCollapseBase<FoldUnitCollapsePass> {
  void runOnOperation() override {
    llvm::SmallVector<std::pair<mlir::linalg::GenericOp, llvm::SmallVector<int64_t>>> found;
    getOperation().walk([&](mlir::linalg::GenericOp op) {
      if (llvm::SmallVector<int64_t> dims = droppedDims(op); !dims.empty())
        found.push_back({op, dims});
    });
    for (auto &[op, dims] : found) rewrite(op, dims);
  }
};

}  // namespace

}  // namespace stepc::codegen
