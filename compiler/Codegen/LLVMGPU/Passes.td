//===- Passes.td - the CUDA target's passes -*- tablegen -*-===//
//
// Declarations only; each pass lives in its own file (named after it) with a header comment
// saying what it does and why, and has its lit test under tests/lit/compiler/Codegen/LLVMGPU/.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_CODEGEN_LLVMGPU_PASSES_TD
#define STEPC_CODEGEN_LLVMGPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def KernelsToGpu : Pass<"step-kernels-to-gpu", "mlir::ModuleOp"> {
  let summary = "Maps the tiled kernels to gpu.func (tiles to blocks, elements to threads) and their calls to gpu.launch_func";
  let options = [
    Option<"gpuArch", "gpu-arch", "std::string", "\"sm_90\"",
           "The NVIDIA architecture (GpuTargets.h): its SM count bounds the grids">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect"];
}

def LowerGpuReductions : Pass<"step-lower-gpu-reductions", "mlir::ModuleOp"> {
  let summary = "Lowers block-wide gpu.all_reduce to warp shuffles and shared memory, in scf form";
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect"];
}

def PredictStepTime : Pass<"step-predict-step-time", "mlir::ModuleOp"> {
  let summary = "Annotates the `buffers`-stage plan with a roofline estimate per command and of the whole CUDA step";
  let options = [
    Option<"gpuArch", "gpu-arch", "std::string", "\"sm_90\"",
           "The NVIDIA architecture (GpuTargets.h) whose peaks the estimate uses">,
    Option<"linkBandwidth", "link-bandwidth", "double", "0",
           "An offloading plan's host link in bytes/s (0: the architecture's, GpuTargets.h)">,
  ];
}

def CudaHost : Pass<"step-cuda-host", "mlir::ModuleOp"> {
  let summary = "Readies the gpu-stage host plan for device memory: runtime arena, CUDA GEMMs, device copies";
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::gpu::GPUDialect", "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect"];
}

#endif  // STEPC_CODEGEN_LLVMGPU_PASSES_TD
