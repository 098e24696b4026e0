//===- DropUnitLoops.h - a linalg.generic without some of its unit loops -*- C++ -*-===//
//
// What --step-unit-reductions and --step-fold-unit-collapse both do once they have chosen
// which loops of extent 1 to drop.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_COMMON_DROPUNITLOOPS_H
#define STEPC_COMPILER_CODEGEN_COMMON_DROPUNITLOOPS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace stepc::codegen {

/// `op` (one result) rebuilt just before it over the loops not marked in `drop`, each of which
/// must have extent 1, and all of them parallel. Every operand reads a dropped loop at index
/// 0. linalg.index of a dropped loop becomes 0, and the other loops are renumbered. The result
/// has `resultType` and leaves out the dims that only dropped loops indexed. The payload's
/// accumulator argument reads `accumulator` where one is given (a reduction's fill value),
/// and the new op's own init otherwise. `op` is left to the caller.
mlir::linalg::GenericOp rebuildWithoutLoops(mlir::linalg::GenericOp op, llvm::ArrayRef<bool> drop,
                                            mlir::RankedTensorType resultType,
                                            mlir::Value accumulator = {});

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_COMMON_DROPUNITLOOPS_H
