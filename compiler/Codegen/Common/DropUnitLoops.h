//===- DropUnitLoops.h - a linalg.generic without some of its unit loops -*- C++ -*-===//
//
// What --step-unit-reductions, --step-fold-unit-collapse and --step-unroll-reductions do once
// they have chosen which loops to drop (of extent 1, or fixed at an index: a slice).
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_COMMON_DROPUNITLOOPS_H
#define STEPC_COMPILER_CODEGEN_COMMON_DROPUNITLOOPS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace stepc::codegen {

/// `op` (one result) rebuilt just before it over the loops not marked in `drop`, all of them
/// parallel. A dropped loop d is fixed at index `at[d]` (0 where `at` is empty: a loop of
/// extent 1): every operand reads it there and linalg.index of it becomes that constant; the
/// other loops are renumbered. The result has `resultType` and leaves out the dims that only
/// dropped loops indexed (so it is the slice of the old result at those indices). The
/// payload's accumulator argument reads `accumulator` where one is given (a reduction's fill
/// value), and the new op's own init otherwise. `op` is left to the caller.
mlir::linalg::GenericOp rebuildWithoutLoops(mlir::linalg::GenericOp op, llvm::ArrayRef<bool> drop,
                                            mlir::RankedTensorType resultType,
                                            mlir::Value accumulator = {},
                                            llvm::ArrayRef<int64_t> at = {});

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_COMMON_DROPUNITLOOPS_H
