//===- Pipelines.cpp - the CPU backend's pass pipelines ----------------===//
#include "compiler/Backend/Passes.h"
#include "compiler/Lowering/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

namespace stepc::backend {

llvm::StringRef linalgPipeline() {
  return "step-describe-program,step-lower-to-linalg,canonicalize,cse";
}

// Elementwise producers fuse into their consumers (elementwise ops or reductions) when they
// have no other use, so no work is recomputed; each linalg op left is one kernel.
llvm::StringRef kernelsPipeline() {
  return "step-fuse-elementwise,canonicalize,cse";
}

// Params and state are updated in place (their results tied to their arguments, then dropped
// as equivalent). Function arguments bufferize to identity-layout memrefs so that the
// bare-pointer calling convention applies; the other results become out-parameters the caller
// owns, and statically shaped result allocations are replaced by the out-parameter itself (no
// copy at the end). Kernels are outlined, then tiled to scf.forall.
llvm::StringRef buffersPipeline() {
  return "step-drop-model,step-update-in-place,eliminate-empty-tensors,"
         "one-shot-bufferize{bufferize-function-boundaries "
         "function-boundary-type-conversion=identity-layout-map},"
         "drop-equivalent-buffer-results,buffer-results-to-out-params{hoist-static-allocs},"
         "buffer-deallocation-pipeline,canonicalize,cse,step-strided-copies-to-linalg,"
         "step-sink-fills,step-contractions-to-library,step-gemm-epilogues,canonicalize,step-outline-kernels,"
         "step-tile-kernels,step-plan-memory";
}

// Tiled kernels become range functions the runtime's threads share (CPU only).
llvm::StringRef llvmPipeline() {
  return "step-parallelize-kernels,convert-linalg-to-loops,expand-strided-metadata,lower-affine,convert-scf-to-cf,"
         "canonicalize,finalize-memref-to-llvm,convert-math-to-llvm,"
         "convert-math-to-libm,convert-arith-to-llvm,convert-index-to-llvm,"
         "convert-func-to-llvm,convert-cf-to-llvm,"
         "reconcile-unrealized-casts,step-dispatch-parallel-kernels,step-pack-entry-points";
}

mlir::LogicalResult runPipeline(mlir::ModuleOp module, llvm::StringRef pipeline) {
  registerBackendPasses();
  mlir::PassManager pm(module.getContext());
  std::string error;
  llvm::raw_string_ostream os(error);
  if (failed(mlir::parsePassPipeline(pipeline, pm, os)))
    return module.emitError("internal error: bad pass pipeline '") << pipeline << "': " << error;
  return pm.run(module);
}

}  // namespace stepc::backend
