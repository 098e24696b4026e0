//===- Passes.h - autodiff passes -------------------------------*- C++ -*-===//
#ifndef STEPC_COMPILER_AUTODIFF_PASSES_H
#define STEPC_COMPILER_AUTODIFF_PASSES_H

#include "dialects/step/IR/StepDialect.h"
#include "mlir/Pass/Pass.h"

namespace stepc::ad {

#define GEN_PASS_DECL
#include "compiler/Autodiff/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Autodiff/Passes.h.inc"

}  // namespace stepc::ad

#endif  // STEPC_COMPILER_AUTODIFF_PASSES_H
