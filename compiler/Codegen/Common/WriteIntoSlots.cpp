//===- WriteIntoSlots.cpp - --step-write-into-slots -----------------------===//
//
// A value that is reshaped and then inserted into a larger tensor (a layer's GEMM output,
// [B·S, N] seen as [B, S, N], saved into the repeat's stack of activations for the backward)
// is computed straight into its slot: the tensor.empty its kernels start from becomes the
// slot (an extract_slice of the insert's destination), reshaped back to the kernel's shape.
// Upstream --eliminate-empty-tensors does this only when no reshape is in between and replaces
// the empty tensor for all its users, so it leaves alone an empty tensor that CSE made shared:
// each such value was written to a temporary and copied into place (byte_lm_residual's 1×1
// projection output saved into the stack, [16, 256, 3·I] a layer). Here only the chain's own
// use of the empty tensor is replaced.
// Replacing an empty tensor (undefined contents) by any tensor of its type keeps the program's
// meaning; whether the kernels then write the slot in place is one-shot bufferization's
// decision, as for upstream's elimination. Only where the slot's destination and offsets are
// defined before the empty tensor, or, for a collective's start, before the start.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_WRITEINTOSLOTS
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

// The use of a tensor.empty that `v` is computed into, through the outputs of the linalg ops
// that produce it (a GEMM accumulating into a fill of the empty tensor), or null.
mlir::OpOperand *emptyBehind(mlir::Value v) {
  mlir::OpOperand *use = nullptr;
  while (auto result = llvm::dyn_cast<mlir::OpResult>(v)) {
    if (llvm::isa<mlir::tensor::EmptyOp>(result.getOwner())) return use;
    auto producer = llvm::dyn_cast<mlir::linalg::LinalgOp>(result.getOwner());
    if (!producer) return nullptr;
    use = producer.getDpsInitOperand(result.getResultNumber());
    v = use->get();
  }
  return nullptr;
}

struct WriteIntoSlotsPass : impl::WriteIntoSlotsBase<WriteIntoSlotsPass> {
  void runOnOperation() override {
    llvm::SmallVector<mlir::tensor::InsertSliceOp> inserts;
    getOperation().walk([&](mlir::tensor::InsertSliceOp insert) { inserts.push_back(insert); });
    mlir::DominanceInfo dominance(getOperation());
    for (mlir::tensor::InsertSliceOp insert : inserts) {
      // The reshapes between the inserted value and the kernel computing it, outermost first.
      llvm::SmallVector<mlir::Operation *> reshapes;
      mlir::Value v = insert.getSource();
      while (mlir::Operation *def = v.getDefiningOp()) {
        if (!llvm::isa<mlir::tensor::ExpandShapeOp, mlir::tensor::CollapseShapeOp>(def)) break;
        reshapes.push_back(def);
        v = def->getOperand(0);
      }
      mlir::OpOperand *emptyUse = emptyBehind(v);
      if (!emptyUse) continue;
      auto empty = emptyUse->get().getDefiningOp<mlir::tensor::EmptyOp>();
      if (empty.getType() != v.getType()) continue;
      // (A concatenation's later parts insert into the previous insert's result, defined after
      // their kernels, so they stay copies: taking their slots from the chain's first
      // destination instead made one-shot bufferization copy that part anyway.)
      mlir::Value dest = insert.getDest();
      llvm::SmallVector<mlir::Value> needed{dest};
      llvm::append_range(needed, insert.getOffsets());
      llvm::append_range(needed, insert.getSizes());
      llvm::append_range(needed, insert.getStrides());
      // The slot goes where the empty tensor is; for a started reduction whose empty tensor
      // CSE hoisted out of the layer loop (SAM's second backward at depth 8), right before the
      // start instead: the runtime finds a started reduction by its buffer in the stack, so
      // the start must write its slot, not a temporary copied there before the wait.
      mlir::Operation *at = empty;
      auto dominatesAt = [&](mlir::Operation *point) {
        return llvm::all_of(needed,
                            [&](mlir::Value x) { return dominance.properlyDominates(x, point); });
      };
      if (!dominatesAt(at)) {
        auto start = v.getDefiningOp<mlir::linalg::CopyOp>();
        auto kind = start ? start->getAttrOfType<mlir::StringAttr>("step.collective") : nullptr;
        if (!kind || !kind.getValue().ends_with("_start") || !dominatesAt(emptyUse->getOwner()))
          continue;
        at = emptyUse->getOwner();
      }
      mlir::OpBuilder b(at);
      mlir::Location loc = empty.getLoc();
      mlir::Value slot = b.create<mlir::tensor::ExtractSliceOp>(
          loc, insert.getSourceType(), dest, insert.getMixedOffsets(), insert.getMixedSizes(),
          insert.getMixedStrides());
      // Undo each reshape, from the insert's side back to the kernel's shape.
      for (mlir::Operation *reshape : reshapes) {
        if (auto expand = llvm::dyn_cast<mlir::tensor::ExpandShapeOp>(reshape))
          slot = b.create<mlir::tensor::CollapseShapeOp>(loc, expand.getSrcType(), slot,
                                                         expand.getReassociationIndices());
        else {
          auto collapse = llvm::cast<mlir::tensor::CollapseShapeOp>(reshape);
          slot = b.create<mlir::tensor::ExpandShapeOp>(loc, collapse.getSrcType(), slot,
                                                       collapse.getReassociationIndices());
        }
      }
      // Only this chain's use: CSE merges equal empty tensors, so others may share it.
      emptyUse->set(slot);
      if (empty->use_empty()) empty.erase();
    }
  }
};

}  // namespace

}  // namespace stepc::codegen
