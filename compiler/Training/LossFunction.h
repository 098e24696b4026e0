//===- LossFunction.h - a model's loss as a plain function ------*- C++ -*-===//
//
// `func.func @NAME(params..., inputs...) -> loss`, with arguments named like @train_step's
// (`step.role` = param / input, `step.name`). Used to check the whole-model gradient against
// finite differences and to build hand-unrolled references (SAM) in tests.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_TRAINING_LOSSFUNCTION_H
#define STEPC_COMPILER_TRAINING_LOSSFUNCTION_H

#include "dialects/step/IR/StepDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace stepc::train {

/// Appends the loss function of `model` to `module`; with `differentiate`, it is marked
/// `step.differentiate` so --step-differentiate appends the parameter gradients.
mlir::FailureOr<mlir::func::FuncOp> buildLossFunction(mlir::ModuleOp module, step::ModelOp model,
                                                      llvm::StringRef name, bool differentiate);

}  // namespace stepc::train

#endif  // STEPC_COMPILER_TRAINING_LOSSFUNCTION_H
