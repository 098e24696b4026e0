//===- ForwardClone.h - the model's forward graph as plain values -*- C++ -*-===//
//
// Emits a model's forward computation at a builder's insertion point, with parameters and
// inputs given as values: parameter declarations become uses of those values (a repeat's
// per-layer parameters become stacked `over` operands), calls are inlined, and the op marked
// by step.loss gives the result. The train step calls it once per forward pass it needs.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_TRAINING_FORWARDCLONE_H
#define STEPC_COMPILER_TRAINING_FORWARDCLONE_H

#include "dialects/step/IR/StepDialect.h"
#include "llvm/ADT/DenseMap.h"
#include "mlir/IR/Builders.h"

namespace stepc::train {

struct ForwardValues {
  /// The stored (stacked) value of every parameter declaration.
  llvm::DenseMap<mlir::Operation *, mlir::Value> params;
  /// The value of every step.input result.
  llvm::DenseMap<mlir::Value, mlir::Value> inputs;
  /// The step counter (tensor<i64>), given to dropout so each step draws a new mask; may be null.
  mlir::Value step;
};

/// Emits the forward graph of `model`; returns the loss and appends the emitted top-level ops
/// (in order) to `emitted`.
mlir::FailureOr<mlir::Value> emitForward(mlir::OpBuilder &builder, step::ModelOp model,
                                         const ForwardValues &values,
                                         llvm::SmallVectorImpl<mlir::Operation *> &emitted);

}  // namespace stepc::train

#endif  // STEPC_COMPILER_TRAINING_FORWARDCLONE_H
