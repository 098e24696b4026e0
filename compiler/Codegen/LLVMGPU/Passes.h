//===- Passes.h - the CUDA target's passes -*- C++ -*-===//
//
// After `buffers`, for CUDA: kernels to gpu.func (blocks and threads, block reductions and
// scans), block-wide reductions to warp shuffles and shared memory, and the host plan readied for
// device memory. PtxEmitter.h takes the kernels to PTX; GpuTargets.h holds each --gpu-arch's
// properties.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_LLVMGPU_PASSES_H
#define STEPC_COMPILER_CODEGEN_LLVMGPU_PASSES_H

#include <memory>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace stepc::codegen {

// Declared in Passes.td: create<Name>() and registerStepCodegenLLVMGPUPasses().
#define GEN_PASS_DECL
#include "compiler/Codegen/LLVMGPU/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "compiler/Codegen/LLVMGPU/Passes.h.inc"

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_LLVMGPU_PASSES_H
