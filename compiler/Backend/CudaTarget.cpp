//===- CudaTarget.cpp - the CUDA stages after `buffers` -------------------===//
#include "compiler/Backend/CudaTarget.h"

#include <cstdlib>

#include "compiler/Backend/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/Support/FileSystem.h"

namespace stepc::backend {

llvm::StringRef gpuPipeline() { return "step-kernels-to-gpu,canonicalize,cse"; }

// Inside the kernels: views to pointer arithmetic, loops to branches, then NVVM. The PTX is
// LLVM's NVPTX backend at O3; ptxas makes the cubin (and checks it).
//
// Math functions (tanh, exp, erf, ...) become calls to CUDA's libdevice, linked in from the
// toolkit: $CUDA_HOME or $CUDA_PATH, else /usr/local/cuda. Without it they would stay
// unresolved externs that ptxas rejects.
std::string cudaToolkit() {
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *dir = std::getenv(var); dir && *dir) return dir;
  return "/usr/local/cuda";
}

std::string ptxPipeline(llvm::StringRef chip) {
  return ("step-lower-gpu-reductions,nvvm-attach-target{chip=" + chip +
          " O=3},gpu.module(expand-strided-metadata,lower-affine,convert-scf-to-cf,"
          "convert-gpu-to-nvvm,canonicalize,cse,reconcile-unrealized-casts),"
          "gpu-module-to-binary{format=isa toolkit=" + cudaToolkit() + "}")
      .str();
}

std::string cudaExecutablePipeline(llvm::StringRef chip) {
  return ("step-cuda-host,step-lower-gpu-reductions,nvvm-attach-target{chip=" + chip +
          " O=3},gpu.module(expand-strided-metadata,lower-affine,convert-scf-to-cf,"
          "convert-gpu-to-nvvm,canonicalize,cse,reconcile-unrealized-casts),"
          "gpu-module-to-binary{format=fatbin toolkit=" + cudaToolkit() +
          "},convert-linalg-to-loops,expand-strided-metadata,lower-affine,convert-scf-to-cf,"
          "canonicalize,finalize-memref-to-llvm,convert-math-to-llvm,convert-math-to-libm,"
          "convert-arith-to-llvm,convert-index-to-llvm,gpu-to-llvm,convert-func-to-llvm,"
          "convert-cf-to-llvm,reconcile-unrealized-casts,"
          "step-pack-entry-points{prefix=stepc_cuda_}")
      .str();
}

mlir::FailureOr<std::string> emitPtx(mlir::ModuleOp module, llvm::StringRef chip) {
  if (!chip.starts_with("sm_"))
    return module.emitError("--gpu-arch expects an NVIDIA architecture like sm_90, found '")
           << chip << "'";
  std::string libdevice = cudaToolkit() + "/nvvm/libdevice/libdevice.10.bc";
  if (!llvm::sys::fs::exists(libdevice))
    return module.emitError("CUDA's libdevice is not at '")
           << libdevice << "': set CUDA_HOME to the CUDA toolkit (math functions link from it)";
  if (failed(runPipeline(module, ptxPipeline(chip)))) return mlir::failure();
  auto binary = module.lookupSymbol<mlir::gpu::BinaryOp>("stepc_kernels");
  if (!binary || binary.getObjects().size() != 1)
    return module.emitError("expected one gpu.binary @stepc_kernels after serialisation");
  auto object = llvm::cast<mlir::gpu::ObjectAttr>(binary.getObjects()[0]);
  std::string ptx = object.getObject().getValue().str();
  // MLIR's PTX string ends with the NUL the driver API wants; text tools do not.
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  return ptx;
}

}  // namespace stepc::backend
