//===- PtxEmitter.cpp - the kernels' PTX, and where CUDA lives ------------===//
#include "compiler/Codegen/LLVMGPU/PtxEmitter.h"

#include <cstdlib>

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/Support/FileSystem.h"

namespace stepc::codegen {

std::string cudaToolkit() {
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *dir = std::getenv(var); dir && *dir) return dir;
  return "/usr/local/cuda";
}

mlir::LogicalResult checkLibdevice(mlir::ModuleOp module) {
  std::string libdevice = cudaToolkit() + "/nvvm/libdevice/libdevice.10.bc";
  if (llvm::sys::fs::exists(libdevice)) return mlir::success();
  return module.emitError("CUDA's libdevice is not at '")
         << libdevice << "': set CUDA_HOME to the CUDA toolkit (math functions link from it)";
}

mlir::FailureOr<std::string> extractPtx(mlir::ModuleOp module) {
  auto binary = module.lookupSymbol<mlir::gpu::BinaryOp>("stepc_kernels");
  if (!binary || binary.getObjects().size() != 1)
    return module.emitError("expected one gpu.binary @stepc_kernels after serialisation");
  auto object = llvm::cast<mlir::gpu::ObjectAttr>(binary.getObjects()[0]);
  std::string ptx = object.getObject().getValue().str();
  // MLIR's PTX string ends with the NUL the driver API wants; text tools do not.
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  return ptx;
}

}  // namespace stepc::codegen
