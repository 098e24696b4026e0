//===- Passes.td - the CPU target's passes -*- tablegen -*-===//
//
// Declarations only; each pass lives in its own file (named after it) with a header comment
// saying what it does and why, and has its lit test under tests/lit/compiler/Codegen/LLVMCPU/.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_CODEGEN_LLVMCPU_PASSES_TD
#define STEPC_CODEGEN_LLVMCPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def PackEntryPoints : Pass<"step-pack-entry-points", "mlir::ModuleOp"> {
  let summary = "Adds packed entry points for @train_step / @eval_loss and embeds `step.program`";
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
  let options = [
    Option<"prefix", "prefix", "std::string", "\"stepc_\"",
           "Prefix of the entry points and the description (stepc_cuda_ for the CUDA module)">,
  ];
}

def ParallelizeKernels : Pass<"step-parallelize-kernels", "mlir::ModuleOp"> {
  let summary = "Turns tiled kernels into functions of a range of their forall iterations (CPU threads)";
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect"];
}

def ReassociateReductions : Pass<"step-reassociate-reductions", "mlir::ModuleOp"> {
  let summary = "Marks the float add accumulating a reduction kernel's result `reassoc`, so that LLVM vectorizes inner reduction loops with per-lane partial sums (a fixed order: the same bits on every thread count)";
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def DispatchParallelKernels : Pass<"step-dispatch-parallel-kernels", "mlir::ModuleOp"> {
  let summary = "Calls range kernels through the runtime's thread pool (stepc_parallel_for)";
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def CheckFinite : Pass<"step-check-finite", "mlir::ModuleOp"> {
  let summary = "(--debug-nan) After every kernel and GEMM of the host plan, checks its float outputs for NaN and Inf, naming the model op it came from";
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect"];
}

def WindowedGemms : Pass<"step-windowed-gemms", "mlir::ModuleOp"> {
  let summary = "Turns a convolution's K GEMMs over shifted row windows into one GEMM over the overlapping window view (a K*C-deep reduction)";
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect"];
}

def GatheredGemms : Pass<"step-gathered-gemms", "mlir::ModuleOp"> {
  let summary = "Folds an MoE's dispatch gather into the batched GEMMs that read it: the runtime packs their A straight from the token rows (stepc_batch_matmul_gathered_f32)";
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

#endif  // STEPC_CODEGEN_LLVMCPU_PASSES_TD
