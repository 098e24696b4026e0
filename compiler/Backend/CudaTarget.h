//===- CudaTarget.h - the CUDA stages after `buffers` -----------*- C++ -*-===//
//
// `stepc compile --target=cuda` shares every stage up to `buffers` with the CPU backend (the
// same fused, tiled kernels and the same host plan), then:
//
//   gpu   --step-kernels-to-gpu: the kernels as gpu.func in gpu.module @stepc_kernels (tiles
//         to blocks, elements to threads), their calls as gpu.launch_func
//   ptx   (a view, not IR) the kernels through NVVM and LLVM's NVPTX backend: PTX for
//         --gpu-arch (default sm_90), which ptxas assembles to cubin
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_BACKEND_CUDATARGET_H
#define STEPC_COMPILER_BACKEND_CUDATARGET_H

#include <string>

#include "mlir/IR/BuiltinOps.h"

namespace stepc::backend {

/// From `buffers` to `gpu`.
llvm::StringRef gpuPipeline();
/// The pipeline from `gpu` to a gpu.binary holding PTX for `chip` (e.g. "sm_90").
std::string ptxPipeline(llvm::StringRef chip);

/// From `gpu` to the LLVM dialect of a CUDA executable's step: the kernels as an embedded
/// fatbin (cubin for `chip` and its PTX), the host plan calling them through MLIR's GPU runtime
/// ABI (runtime/cuda), entry points stepc_cuda_train_step / stepc_cuda_eval_loss.
std::string cudaExecutablePipeline(llvm::StringRef chip);

/// Runs ptxPipeline on a module at the `gpu` stage and returns the PTX of @stepc_kernels.
mlir::FailureOr<std::string> emitPtx(mlir::ModuleOp module, llvm::StringRef chip);

}  // namespace stepc::backend

#endif  // STEPC_COMPILER_BACKEND_CUDATARGET_H
