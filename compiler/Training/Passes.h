//===- Passes.h - training-step passes --------------------------*- C++ -*-===//
#ifndef STEPC_COMPILER_TRAINING_PASSES_H
#define STEPC_COMPILER_TRAINING_PASSES_H

#include "dialects/step/IR/StepDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include <limits>

namespace stepc::train {

#define GEN_PASS_DECL
#include "compiler/Training/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Training/Passes.h.inc"

}  // namespace stepc::train

#endif  // STEPC_COMPILER_TRAINING_PASSES_H
