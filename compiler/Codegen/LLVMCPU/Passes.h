//===- Passes.h - the CPU target's passes -*- C++ -*-===//
//
// After `buffers`, for the CPU: tiled kernels as range functions the runtime's thread pool runs,
// their dispatch, and the packed entry points of the step (also the CUDA step's host side, which
// is CPU code). ObjectEmitter.h turns the `llvm` stage into x86 object code; Linker.h links it
// with the runtime archive.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_LLVMCPU_PASSES_H
#define STEPC_COMPILER_CODEGEN_LLVMCPU_PASSES_H

#include <memory>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace stepc::codegen {

// Declared in Passes.td: create<Name>() and registerStepCodegenLLVMCPUPasses().
#define GEN_PASS_DECL
#include "compiler/Codegen/LLVMCPU/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "compiler/Codegen/LLVMCPU/Passes.h.inc"

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_LLVMCPU_PASSES_H
