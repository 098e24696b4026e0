//===- SinkFills.cpp - --step-sink-fills ----------------------------------===//
//
// Moves each linalg.fill of a local buffer (a memref.alloc, possibly through views) down to
// just before the first op that touches that buffer. Bufferization leaves some fills far from
// their readers: CSE merges equal zero fills on the tensors (the forward GEMM's accumulator
// and a weight gradient's in the backward are one value), and the fill then sits where the
// first of them was. Far from its reader, a fill
//   - keeps the buffer live across everything in between (the memory plan is larger), and
//   - is not next to the GEMM that accumulates into it, so --step-contractions-to-library
//     cannot fold it into the GEMM (beta = 0): the GEMM reads the zeros back (`+=`).
// Moving is safe when no op in between can touch the buffer: every memref those ops use (in
// their regions too) must come from another allocation or a function argument (the step's
// arguments never alias its allocations). A memref of unknown origin stops the fill there.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_SINKFILLS
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

// The allocation or function argument `v` views, or null when its origin is unknown.
mlir::Value rootOf(mlir::Value v) {
  while (true) {
    // A function's argument; an argument of a later block may be any buffer (a branch's).
    if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(v))
      return arg.getOwner()->isEntryBlock() &&
                     llvm::isa<mlir::FunctionOpInterface>(arg.getOwner()->getParentOp())
                 ? v
                 : nullptr;
    mlir::Operation *def = v.getDefiningOp();
    if (llvm::isa<mlir::memref::AllocOp, mlir::memref::AllocaOp>(def)) return v;
    auto view = llvm::dyn_cast<mlir::ViewLikeOpInterface>(def);
    if (!view) return nullptr;
    v = view.getViewSource();
  }
}

// Whether `op` (or an op inside it) may touch the buffer `root`.
bool mayTouch(mlir::Operation *op, mlir::Value root) {
  bool touches = false;
  op->walk([&](mlir::Operation *inner) {
    for (mlir::Value operand : inner->getOperands()) {
      if (!llvm::isa<mlir::BaseMemRefType>(operand.getType())) continue;
      mlir::Value r = rootOf(operand);
      if (!r || r == root) {
        touches = true;
        return mlir::WalkResult::interrupt();
      }
    }
    return mlir::WalkResult::advance();
  });
  return touches;
}

// Whether every use of `buffer` (through views) is an op that takes it as a memref operand
// where mayTouch sees it: no pointer or tensor escapes (extract_aligned_pointer_as_index,
// to_tensor) whose later uses would not show as the buffer's.
bool usesAreVisible(mlir::Value buffer) {
  for (mlir::Operation *user : buffer.getUsers()) {
    if (auto view = llvm::dyn_cast<mlir::ViewLikeOpInterface>(user)) {
      if (view.getViewSource() == buffer &&
          !llvm::all_of(user->getResults(), [](mlir::Value r) { return usesAreVisible(r); }))
        return false;
      continue;
    }
    if (!llvm::isa<mlir::linalg::LinalgOp, mlir::memref::LoadOp, mlir::memref::StoreOp,
                   mlir::memref::CopyOp, mlir::memref::DeallocOp, mlir::func::CallOp>(user))
      return false;
  }
  return true;
}

struct SinkFillsPass : impl::SinkFillsBase<SinkFillsPass> {
  void runOnOperation() override {
    llvm::SmallVector<mlir::linalg::FillOp> fills;
    getOperation().walk([&](mlir::linalg::FillOp fill) {
      if (fill.hasPureBufferSemantics()) fills.push_back(fill);
    });
    for (mlir::linalg::FillOp fill : fills) {
      mlir::Value root = rootOf(fill.getOutputs().front());
      if (!root || llvm::isa<mlir::BlockArgument>(root) || !usesAreVisible(root))
        continue;  // only local buffers whose every use shows
      // (The value filled, a constant or an argument, dominates every later position.)
      mlir::Operation *next = fill->getNextNode();
      mlir::Operation *first = next;
      while (first && !first->hasTrait<mlir::OpTrait::IsTerminator>() && !mayTouch(first, root))
        first = first->getNextNode();
      if (!first || first == next || first->hasTrait<mlir::OpTrait::IsTerminator>()) continue;
      fill->moveBefore(first);
    }
  }
};

}  // namespace

}  // namespace stepc::codegen
