//===- LoweringUtils.h - helpers shared by the linalg patterns --*- C++ -*-===//
#ifndef STEPC_COMPILER_CONVERSION_STEPTOLINALG_LOWERINGUTILS_H
#define STEPC_COMPILER_CONVERSION_STEPTOLINALG_LOWERINGUTILS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace stepc::lowering {

/// A `tensor.empty` of `type`'s static shape.
mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type);

/// A scalar `arith.constant` of `value` in `type` (float or integer, i1 included).
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type, double value);

/// `tensor.empty` of `type` filled with `value` by `linalg.fill`.
mlir::Value filledTensor(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
                         double value);
/// The same with the fill value given as a scalar SSA value.
mlir::Value filledTensor(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
                         mlir::Value scalar);

/// The indexing map reading an operand of `operandShape` broadcast NumPy-style to a result of
/// rank `resultShape.size()`: trailing dims align, a size-1 dim that stretches reads index 0.
mlir::AffineMap broadcastMap(mlir::MLIRContext *ctx, llvm::ArrayRef<int64_t> operandShape,
                             llvm::ArrayRef<int64_t> resultShape);

/// Body of an elementwise generic: receives the scalar operands (not the output) and returns
/// the scalar result.
using ScalarFn = llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                                mlir::ValueRange)>;

/// An all-parallel `linalg.generic` computing `fn` over `inputs` broadcast to `resultType`.
mlir::Value elementwise(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType resultType,
                        mlir::ValueRange inputs, ScalarFn fn);

/// Reshapes a statically shaped tensor to `type` (same element count) with
/// one tensor.collapse_shape or tensor.expand_shape when the dims group, else through 1-D.
mlir::Value reshapeTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                      mlir::RankedTensorType type);

/// Reduces a float `input` along `axis` by max (from -inf, NaN-propagating) or sum (from 0);
/// the result keeps the axis as size 1, so elementwise() broadcasts it back.
mlir::Value reduceAxisKeepdim(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                              int64_t axis, bool max);

bool isFloat(mlir::Type elementType);

/// A call at the builder's point to the runtime function `name` (i64 arguments and one i64
/// result), declared private in `at`'s module on first use: what --data-parallel's loop
/// bounds and --shard-optimizer's rank ask the runtime (runtime/hal/cpu/Collectives.h).
mlir::Value callRuntimeI64(mlir::OpBuilder &b, mlir::Operation *at, llvm::StringRef name,
                           mlir::ValueRange args);

/// An integer id as an index into a dimension of `size`, clamped to [0, size - 1]: compiled
/// code never reads or writes out of bounds. Ids whose range the model fixes (token inputs,
/// labels, iotas) are checked against the size when the model is verified (ShapeRules.cpp);
/// the clamp guards ids computed in the model, which the interpreter reports when out of range.
mlir::Value clampedIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value id, int64_t size);

/// A row gather as a linalg.generic over `resultType` [..., D]: position p reads row
/// ids[p] div `group` of `source` [N, D] with tensor.extract (the id map drops the last loop),
/// the id clamped to the source (no read out of bounds). With `zeroForNegative` a negative id
/// gives a zero row (gather_rows' empty slot). Elementwise fusion folds it into its consumers.
mlir::Value gatherRows(mlir::OpBuilder &b, mlir::Location loc, mlir::Value source, mlir::Value ids,
                       mlir::RankedTensorType resultType, int64_t group, bool zeroForNegative);

}  // namespace stepc::lowering

#endif  // STEPC_COMPILER_CONVERSION_STEPTOLINALG_LOWERINGUTILS_H
