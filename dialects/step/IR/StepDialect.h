//===- StepDialect.h - the `step` dialect -----------------------*- C++ -*-===//
//
// Declarations of the `step` dialect, its interfaces and ops (generated from the .td files).
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_DIALECTS_STEP_IR_STEPDIALECT_H
#define STEPC_DIALECTS_STEP_IR_STEPDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/step/IR/StepDialect.h.inc"
#include "dialects/step/IR/StepInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialects/step/IR/StepOps.h.inc"

namespace stepc::step {

/// Whether `region` holds an op drawing per-step random numbers (dropout, jitter), directly
/// or in a function it calls: the train step then threads its step counter to them.
bool drawsRandomNumbers(mlir::Region &region);

}  // namespace stepc::step

#endif  // STEPC_DIALECTS_STEP_IR_STEPDIALECT_H
