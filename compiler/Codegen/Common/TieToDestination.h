//===- TieToDestination.h - write a value straight into a destination -*- C++ -*-===//
//
// Shared by --step-update-in-place (a param's update into its argument) and
// --step-carry-in-place (a layer's new value into its loop-carried buffer): ties `value` to
// `dest` with `bufferization.materialize_in_destination`, after giving the kernel computing
// `value` a tensor.empty output of its own. --eliminate-empty-tensors then makes `dest` that
// kernel's output; a tensor.empty shared with other kernels would be replaced for all of them
// (upstream's elimination rewrites the value, not the use).
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_COMMON_TIETODESTINATION_H
#define STEPC_COMPILER_CODEGEN_COMMON_TIETODESTINATION_H

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace stepc::codegen {

/// Gives the kernel computing `value` a tensor.empty output of its own, if its output is a
/// shared one: what --eliminate-empty-tensors then replaces is this kernel's output alone.
inline void untieOutput(mlir::Value value) {
  if (auto producer = value.getDefiningOp<mlir::DestinationStyleOpInterface>()) {
    mlir::OpOperand *init = producer.getTiedOpOperand(llvm::cast<mlir::OpResult>(value));
    auto empty = init ? init->get().getDefiningOp<mlir::tensor::EmptyOp>() : nullptr;
    if (empty && !empty->hasOneUse()) {
      mlir::OpBuilder eb(producer);
      init->set(eb.clone(*empty)->getResult(0));
    }
  }
}

/// Returns the tied value (materialize_in_destination's result), created at `b`.
inline mlir::Value tieToDestination(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                                    mlir::Value dest) {
  untieOutput(value);
  return b.create<mlir::bufferization::MaterializeInDestinationOp>(loc, value, dest).getResult();
}

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_COMMON_TIETODESTINATION_H
