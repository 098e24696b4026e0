//===- Passes.h - lowering passes -------------------------------*- C++ -*-===//
#ifndef STEPC_COMPILER_CONVERSION_STEPTOLINALG_PASSES_H
#define STEPC_COMPILER_CONVERSION_STEPTOLINALG_PASSES_H

#include "dialects/step/IR/StepDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace stepc::lowering {

#define GEN_PASS_DECL
#include "compiler/Conversion/StepToLinalg/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Conversion/StepToLinalg/Passes.h.inc"

}  // namespace stepc::lowering

#endif  // STEPC_COMPILER_CONVERSION_STEPTOLINALG_PASSES_H
