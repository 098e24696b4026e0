//===- PtxEmitter.h - the kernels' PTX, and where CUDA lives ----*- C++ -*-===//
//
// The `ptx` stage (Pipelines.h) runs the kernels of the `gpu` stage through NVVM and LLVM's
// NVPTX backend into a gpu.binary holding PTX; this reads the PTX back out of it. The toolkit
// (libdevice for math functions, ptxas/fatbinary for the executable's cubin) is found here too.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_LLVMGPU_PTXEMITTER_H
#define STEPC_COMPILER_CODEGEN_LLVMGPU_PTXEMITTER_H

#include <string>

#include "mlir/IR/BuiltinOps.h"

namespace stepc::codegen {

/// The CUDA toolkit: $CUDA_HOME or $CUDA_PATH, else /usr/local/cuda.
std::string cudaToolkit();

/// Checks that the toolkit's libdevice is there (the kernels' math functions link from it), so a
/// missing toolkit is one clear error instead of unresolved externs in ptxas.
mlir::LogicalResult checkLibdevice(mlir::ModuleOp module);

/// The PTX text of gpu.binary @stepc_kernels (format=isa), without the driver's trailing NUL.
mlir::FailureOr<std::string> extractPtx(mlir::ModuleOp module);

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_LLVMGPU_PTXEMITTER_H
