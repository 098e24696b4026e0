//===- ViewRoot.h - the function argument a buffer is a view of -*- C++ -*-===//
//
// At `buffers`, a step's parameters are its function's arguments and every use goes through
// views of them (subviews, casts, reshapes, memref.view). Passes that act on what a command
// does to a parameter (the deferred gathers' starts and waits) trace an operand back to it.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_COMMON_VIEWROOT_H
#define STEPC_COMPILER_CODEGEN_COMMON_VIEWROOT_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace stepc::codegen {

/// The block argument `v` is a view of (through view-like ops and memref.cast), or null when
/// an op that is not a view made it.
inline mlir::BlockArgument rootArgument(mlir::Value v) {
  for (;;) {
    if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(v)) return arg;
    mlir::Operation *def = v.getDefiningOp();
    if (auto view = llvm::dyn_cast_or_null<mlir::ViewLikeOpInterface>(def))
      v = view.getViewSource();
    else if (auto cast = llvm::dyn_cast_or_null<mlir::memref::CastOp>(def))
      v = cast.getSource();
    else
      return {};
  }
}

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_COMMON_VIEWROOT_H
