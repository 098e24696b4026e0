//===- Passes.td - the codegen passes every target shares -*- tablegen -*-===//
//
// Declarations only; each pass lives in its own file (named after it) with a header comment
// saying what it does and why, and has its lit test under tests/lit/compiler/Codegen/Common/.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_CODEGEN_COMMON_PASSES_TD
#define STEPC_CODEGEN_COMMON_PASSES_TD

include "mlir/Pass/PassBase.td"

def DescribeProgram : Pass<"step-describe-program", "mlir::ModuleOp"> {
  let summary = "Records the buffer bindings of @train_step and @eval_loss as `step.program`";
  let dependentDialects = ["::mlir::func::FuncDialect", "::stepc::step::StepDialect"];
}

def DropModel : Pass<"step-drop-model", "mlir::ModuleOp"> {
  let summary = "Erases step.model and step.func once the program functions are lowered";
}

def StridedCopiesToLinalg : Pass<"step-strided-copies-to-linalg", "mlir::ModuleOp"> {
  let summary = "Rewrites memref.copy between strided buffers as linalg.copy (loops, no runtime call)";
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
  let options = [
    Option<"parallelBytes", "parallel-bytes", "int64_t", "0",
           "Also rewrite contiguous copies of at least this many bytes (0: none), so that they become kernels the threads share">,
  ];
}

def OutlineKernels : Pass<"step-outline-kernels", "mlir::ModuleOp"> {
  let summary = "Moves each linalg op of the step functions into its own kernel function";
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::LLVM::LLVMDialect", "::mlir::arith::ArithDialect"];
}

def FuseElementwise : Pass<"step-fuse-elementwise", "mlir::ModuleOp"> {
  let summary = "Fuses elementwise producers into consumers, never into contractions or broadcasts";
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def FoldUnitCollapse : Pass<"step-fold-unit-collapse", "mlir::ModuleOp"> {
  let summary = "Makes a gather read only through a collapse_shape of unit dims compute the collapsed tensor (so that it fuses with its consumer)";
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect", "::mlir::arith::ArithDialect"];
}

def UnitReductions : Pass<"step-unit-reductions", "mlir::ModuleOp"> {
  let summary = "Rewrites a reduction over loops of extent 1 into a fill as the elementwise op it is (so that it fuses both ways)";
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect", "::mlir::arith::ArithDialect"];
}

def FuseIntoGathers : Pass<"step-fuse-into-gathers", "mlir::ModuleOp"> {
  let summary = "Computes a cheap elementwise producer read only by tensor.extract in other kernels (gathers; directly or through a collapse_shape) at each read, so its tensor is never written";
  let dependentDialects = ["::mlir::tensor::TensorDialect", "::mlir::arith::ArithDialect"];
}

def UnrollReductions : Pass<"step-unroll-reductions", "mlir::ModuleOp"> {
  let summary = "Rewrites a reduction over loops of 2 to 4 points into a fill as an elementwise op applying its payload once per point, in order, and splits the producers it reads through fixed slices into one producer per slice (so that the chain fuses)";
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect", "::mlir::arith::ArithDialect"];
}

def WriteIntoSlots : Pass<"step-write-into-slots", "mlir::ModuleOp"> {
  let summary = "Computes a value that is reshaped and inserted into a larger tensor straight into its slot (the empty tensor its kernels start from becomes the slot)";
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def MergeSlices : Pass<"step-merge-slices", "mlir::ModuleOp"> {
  let summary = "Replaces an extract_slice by an identical one that dominates it, so that an elementwise update of a stacked layer reading and writing that layer's slice is one value and bufferizes in place";
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def CloneFills : Pass<"step-clone-fills", "mlir::ModuleOp"> {
  let summary = "Gives every linalg op that accumulates into a fill made outside its block a fill (and empty tensor) of its own, just before it";
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"];
}

def SinkFills : Pass<"step-sink-fills", "mlir::ModuleOp"> {
  let summary = "Moves each fill of a local buffer down to just before the first op that touches the buffer";
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def ContractionsToLibrary : Pass<"step-contractions-to-library", "mlir::ModuleOp"> {
  let summary = "Replaces bufferized f32 contractions by calls to the GEMM interface (runtime/hal/Gemm.h)";
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect"];
}

def CollectivesToRuntime : Pass<"step-collectives-to-runtime", "mlir::ModuleOp"> {
  let summary = "Replaces the bufferized collectives (marked copies) by calls to the runtime's "
                "all-reduce (runtime/hal/cpu/Collectives.h)";
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect"];
  let options = [
    Option<"deferGathers", "defer-gathers", "bool", "false",
           "In a step whose reductions overlap the backward, start --shard-optimizer's gathers "
           "of the parameters at the step's end and let the next step wait where it reads them "
           "(the CPU's; --step-await-gathers places the waits)">,
  ];
}

def AwaitGathers : Pass<"step-await-gathers", "mlir::ModuleOp"> {
  let summary = "Waits for the deferred gathers of the parameters (stepc_all_gather_start_f32) "
                "before each command that reads or writes one";
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def OffloadBuffers : Pass<"step-offload-buffers", "mlir::ModuleOp"> {
  let summary = "Streams the buffers named by the module's step.offload through arena slots, "
                "layer by layer, with the runtime's transfers (runtime/hal/cpu/Offload.h)";
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"];
}

def KernelNoAlias : Pass<"step-kernel-noalias", "mlir::ModuleOp"> {
  let summary = "Marks the kernel arguments that share memory with no other argument at any call (step.noalias_args)";
}

def PlanMemory : Pass<"step-plan-memory", "mlir::ModuleOp"> {
  let summary = "Places every temporary buffer at a fixed offset of one static arena";
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect"];
}

def UpdateInPlace : Pass<"step-update-in-place", "mlir::ModuleOp"> {
  let summary = "Ties @train_step's param and state results to their arguments, for in-place updates";
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect", "::mlir::tensor::TensorDialect"];
}

def CarryInPlace : Pass<"step-carry-in-place", "mlir::ModuleOp"> {
  let summary = "Writes a repeat's carried values into their loop-carried buffers instead of copying them there";
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect", "::mlir::tensor::TensorDialect"];
}

def TileKernels : Pass<"step-tile-kernels", "mlir::ModuleOp"> {
  let summary = "Tiles each kernel's leading parallel dimensions to an scf.forall";
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::affine::AffineDialect", "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect"];
  let options = [
    Option<"targetTiles", "target-tiles", "int64_t", "64",
           "About how many forall iterations a kernel is split into">,
    Option<"minWork", "min-work", "int64_t", "32768",
           "Kernels with fewer loop iterations than this stay whole">,
    Option<"minTileWork", "min-tile-work", "int64_t", "0",
           "At least this many loop iterations per tile (0: no bound); a GPU block's threads">,
    Option<"atLeast", "at-least", "bool", "false",
           "target-tiles is a floor, not an estimate: a divisor chunk is only taken below the "
           "even chunk (the GPU's two waves must hold)">,
  ];
}

def GemmEpilogues : Pass<"step-gemm-epilogues", "mlir::ModuleOp"> {
  let summary = "Folds a bias add (and a residual add) after a library GEMM into the GEMM's epilogue";
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect"];
  let options = [
    Option<"gelu", "gelu", "bool", /*default=*/"true",
           "also fold GELU (gelu(C + bias)) and its backward (C · gelu'(X)); the CPU passes false: "
           "its generated kernels are parallel and vectorised, the runtime's epilogue is not">
  ];
}

#endif  // STEPC_CODEGEN_COMMON_PASSES_TD
