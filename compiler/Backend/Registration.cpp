//===- Registration.cpp - what the backend's pipelines need registered ===//
//
// Kept apart from Pipelines.cpp: the InitAll headers make this the slowest file to compile,
// and it rarely changes.
//
//===----------------------------------------------------------------------===//
#include "compiler/Backend/Passes.h"
#include "compiler/Lowering/Passes.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

namespace stepc::backend {

void registerBackendPasses() {
  static bool done = [] {
    mlir::registerAllPasses();
    registerStepBackendPasses();
    lowering::registerLoweringPasses();
    return true;
  }();
  (void)done;
}

void registerBackendDialects(mlir::DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  // The CUDA stages serialise gpu.module kernels through NVVM (CudaTarget.h).
  mlir::registerGPUDialectTranslation(registry);
  // gpu.binary / gpu.launch_func in the CUDA step's host code: embed the fatbin, call mgpu*.
  mlir::gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  mlir::registerNVVMDialectTranslation(registry);
}

}  // namespace stepc::backend
