//===- ShapeRules.h - shape arithmetic shared by `step` ops -----*- C++ -*-===//
#ifndef STEPC_DIALECTS_STEP_IR_SHAPERULES_H
#define STEPC_DIALECTS_STEP_IR_SHAPERULES_H

#include <optional>

#include "llvm/ADT/SmallVector.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

namespace stepc::step {

/// NumPy broadcasting of several shapes; nullopt when they do not broadcast.
std::optional<llvm::SmallVector<int64_t>> broadcastShapes(
    llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes);

/// `axis` in [-rank, rank) mapped to [0, rank); nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// The element count of a shape, or nullopt when a size is not positive or the count exceeds
/// kMaxElements (so arithmetic on shapes never overflows).
constexpr int64_t kMaxElements = int64_t{1} << 48;
std::optional<int64_t> checkedNumElements(llvm::ArrayRef<int64_t> shape);

/// Recomputes `op`'s result types from its current operands with its shape rule (ops without
/// InferTypeOpInterface are left alone). Used after operands change shape (--batch,
/// micro-batches); a rule that no longer holds reports at the op and fails.
mlir::LogicalResult reinferResultTypes(mlir::Operation *op);

/// The i64 values of an ArrayAttr of IntegerAttr.
llvm::SmallVector<int64_t> toI64Vector(mlir::ArrayAttr array);

}  // namespace stepc::step

#endif  // STEPC_DIALECTS_STEP_IR_SHAPERULES_H
