//===- ViewRoot.h - the function argument a buffer is a view of -*- C++ -*-===//
//
// At `buffers`, a step's parameters are its function's arguments and every use goes through
// views of them (subviews, casts, reshapes, memref.view). Passes that act on what a command
// does to a parameter (the deferred gathers' starts and waits) trace an operand back to it,
// and passes that reason about a buffer's contents (GEMM epilogues, the MoE's gathered GEMMs)
// to its allocation.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_COMMON_VIEWROOT_H
#define STEPC_COMPILER_CODEGEN_COMMON_VIEWROOT_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace stepc::codegen {

/// The buffer `v` is a view of: through view-like ops and memref.cast to the value an op that
/// is not a view made (an allocation), or a block argument.
inline mlir::Value viewRoot(mlir::Value v) {
  for (;;) {
    mlir::Operation *def = v.getDefiningOp();
    if (auto view = llvm::dyn_cast_or_null<mlir::ViewLikeOpInterface>(def))
      v = view.getViewSource();
    else if (auto cast = llvm::dyn_cast_or_null<mlir::memref::CastOp>(def))
      v = cast.getSource();
    else
      return v;
  }
}

/// The block argument `v` is a view of (through view-like ops and memref.cast), or null when
/// an op that is not a view made it.
inline mlir::BlockArgument rootArgument(mlir::Value v) {
  return llvm::dyn_cast<mlir::BlockArgument>(viewRoot(v));
}

/// Whether `v` is `root` seen through casts and reshapes only: every element, in the same order.
inline bool isReshapeOf(mlir::Value v, mlir::Value root) {
  while (v != root) {
    mlir::Operation *def = v.getDefiningOp();
    if (!llvm::isa_and_nonnull<mlir::memref::CastOp, mlir::memref::ExpandShapeOp,
                               mlir::memref::CollapseShapeOp>(def))
      return false;
    v = def->getOperand(0);
  }
  return true;
}

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_COMMON_VIEWROOT_H
