//===- Plan.h - the host plan of a bufferized step program ------*- C++ -*-===//
#ifndef STEPC_COMPILER_CODEGEN_PLAN_H
#define STEPC_COMPILER_CODEGEN_PLAN_H

#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/BuiltinOps.h"

namespace stepc::codegen {

/// Prints the host plan of each step function at the `buffers` stage: the ordered commands the
/// executable runs (kernel calls, library GEMMs, copies, loops), with every buffer named by
/// where it lives: a function argument (param / state / batch / output, by name), an arena
/// offset, or a view of one of those. A readable summary of the IR, not an IR stage itself.
/// `nccl`: the collectives are NCCL's on the step's stream (the CUDA target), not the CPU
/// runtime's fixed tree on its own thread.
mlir::LogicalResult printPlan(mlir::ModuleOp module, llvm::raw_ostream &os, bool nccl = false);

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_PLAN_H
