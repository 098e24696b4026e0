//===- Pipelines.cpp - every stage of every target, defined once ---------===//
//
// The only file that spells out pass pipelines. Each stage's pipeline is registered under its
// name, and stepc builds the stages with the same builders, so what stepc-opt runs by name is
// what stepc runs.
//
// Compile time: the InitAll headers make this the slowest file to compile; it rarely changes.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Pipelines.h"

#include "compiler/Codegen/Common/Passes.h"
#include "compiler/Codegen/Common/Plan.h"
#include "compiler/Codegen/Emulation/Passes.h"
#include "compiler/Codegen/LLVMCPU/Passes.h"
#include "compiler/Codegen/LLVMGPU/GpuTargets.h"
#include "compiler/Codegen/LLVMGPU/Passes.h"
#include "compiler/Codegen/LLVMGPU/PtxEmitter.h"
#include "compiler/Conversion/StepToLinalg/Passes.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "llvm/ADT/STLExtras.h"

namespace stepc::codegen {
namespace {

constexpr unsigned kCpu = 1u << static_cast<unsigned>(Target::CPU);
constexpr unsigned kCuda = 1u << static_cast<unsigned>(Target::CUDA);
constexpr unsigned kEmulated = 1u << static_cast<unsigned>(Target::CUDAEmulated);
constexpr unsigned kAll = kCpu | kCuda | kEmulated;

const TargetInfo kTargets[] = {
    {Target::CPU, "cpu", "a native executable", false},
    {Target::CUDA, "cuda",
     "an executable with a CUDA step and the CPU step it falls back to", true},
    {Target::CUDAEmulated, "cuda-emulated",
     "a CPU executable running the CUDA kernels' blocks and threads one after another: checks "
     "the GPU mapping's numbers without a GPU",
     false},
};


// ---- The pipelines. Each builder appends one stage's passes, from the stage before it.

void addPipeline(mlir::OpPassManager &pm, llvm::StringRef text) {
  // The text is this file's own; a parse error is a bug here, reported where it shows.
  if (failed(mlir::parsePassPipeline(text, pm, llvm::errs())))
    llvm::report_fatal_error("stepc: internal error: bad pass pipeline '" + text + "'");
}

// @eval_loss (Training) and the step.program description first: both read the step.model,
// which the lowering keeps until `buffers` drops it. Each layer's update then moves into the
// backward repeat that computes its gradient, so that no stacked gradient is materialized.
// Convolutions wide enough are then marked for Winograd's F(m, K) (`convAlgorithm`: direct,
// auto or winograd; see step-choose-conv-algorithm) before everything is lowered. A GPU
// target's routing is lowered to parallel kernels (`parallelRouting`): a loop over the choices,
// the CPU's fastest form, would run in one GPU thread.
void buildLinalg(mlir::OpPassManager &pm, llvm::StringRef convAlgorithm, int64_t winogradTile,
                 bool perturbWinograd = false, bool parallelRouting = false) {
  addPipeline(pm, ("step-build-eval-loss,step-build-sample-logits,step-build-sample-step,"
                   "step-describe-program,step-sink-layer-updates,"
                   "step-choose-conv-algorithm{algorithm=" + convAlgorithm +
                   " tile=" + llvm::Twine(winogradTile) +
                   (perturbWinograd ? " test-only-perturb" : "") + "},"
                   "step-lower-to-linalg{parallel-routing=" +
                   (parallelRouting ? "true" : "false") + "},canonicalize,cse").str());
}

// Elementwise producers fuse into their consumers (elementwise ops or reductions) when they
// have no other use, so no work is recomputed; each linalg op left is one kernel. A reduction
// over loops of extent 1 is elementwise first, so that it fuses with its consumers too, as is
// one over 2 to 4 points (unrolled, its producers split per slice: an MoE's sum over k), a
// producer read through a reshape that drops unit dims computes the reshaped tensor, and a
// cheap one read only by gathers is computed at each read.
void buildKernels(mlir::OpPassManager &pm) {
  addPipeline(pm,
              "step-unit-reductions,step-unroll-reductions,step-fold-unit-collapse,"
              "step-fuse-elementwise,step-fuse-into-gathers,canonicalize,cse");
}

// Params and state are updated in place (their results tied to their arguments, then dropped
// as equivalent; an update stacked layer by layer over its argument in a loop is the loop's
// result, which canonicalization folds to the argument once bufferized; the layer's slice it
// reads and the one it writes are made one value first, or one-shot bufferization copies the
// layer out of the stack before updating it). Function arguments
// bufferize to identity-layout memrefs so that the bare-pointer calling convention applies; the other results become out-parameters the caller
// owns, and statically shaped result allocations are replaced by the out-parameter itself (no
// copy at the end). Fills sink to their first use so a GEMM overwrites instead of
// accumulating; kernels are outlined, the buffers the module's step.offload names are
// streamed through slots (--device-memory), the kernels tiled to scf.forall, and every
// temporary placed in the arena.
// A convolution's K GEMMs over shifted windows are one GEMM over the overlapping window on the
// CPU only (cuBLASLt takes no overlapping leading dimension), and an MoE's dispatch gather is
// packed by the experts' GEMMs from the token rows there (the runtime's own kernels). On the CPU a copy of 1 MiB or more
// is a kernel, so both threads copy.
// GELU epilogues are folded into GEMMs for CUDA only (cuBLASLt computes them in the GEMM); on
// the CPU the runtime would run them as a single-threaded scalar pass after the GEMM, where
// the kernel they stay in is parallel and vectorised.
// The kernels' tiling is the target's: about 64 tiles for the CPU's threads, two waves of the
// SMs of `gpuArch` (non-empty: a CUDA target) for its blocks. Once every buffer has its place,
// kernel arguments that share memory with no other argument at any call are marked for LLVM's
// `noalias` (the CPU's object emitter applies it). `debugNan` (the CPU's only: the
// checks run on the host) checks every kernel's outputs for NaN and Inf.
void buildBuffers(mlir::OpPassManager &pm, llvm::StringRef gpuArch, bool debugNan,
                  double linkBandwidth = 0) {
  std::string tiling = "step-tile-kernels";
  std::string error;
  if (!gpuArch.empty())
    if (const GpuTarget *gpu = lookupGpuTarget(gpuArch, error))
      tiling += "{target-tiles=" + std::to_string(gpuTargetTiles(*gpu)) +
                " min-tile-work=" + std::to_string(kGpuBlockThreads) + " at-least}";
  // A CUDA target's plan carries its roofline prediction (the `plan` view and `info` print it).
  std::string predict =
      gpuArch.empty() ? ""
                      : (",step-predict-step-time{gpu-arch=" + gpuArch + " link-bandwidth=" +
                         std::to_string(linkBandwidth) + "}")
                            .str();
  addPipeline(pm,
              std::string("step-drop-model,step-clone-fills,step-update-in-place,"
              "step-carry-in-place,step-write-into-slots,eliminate-empty-tensors,step-merge-slices,"
              "one-shot-bufferize{bufferize-function-boundaries "
              "function-boundary-type-conversion=identity-layout-map},"
              // Before any canonicalization: a collective's marked copy that bufferized in
              // place (input and output one buffer) is a self-copy the canonicalizer erases.
              "step-collectives-to-runtime") +
                  // The CPU's gathers of the parameters overlap the next step's forward.
                  (gpuArch.empty() ? "{defer-gathers}" : "") + ",canonicalize,"
              "drop-equivalent-buffer-results,buffer-results-to-out-params{hoist-static-allocs},"
              "buffer-deallocation-pipeline,canonicalize,cse,step-strided-copies-to-linalg" +
                  (gpuArch.empty() ? "{parallel-bytes=1048576}" : "") +
                  ",step-sink-fills,step-contractions-to-library," +
                  (gpuArch.empty() ? "step-windowed-gemms,step-gathered-gemms," : "") +
                  "step-gemm-epilogues" +
                  (gpuArch.empty() ? "{gelu=false}" : "") + ",canonicalize,"
              "step-outline-kernels," + (gpuArch.empty() ? "step-await-gathers," : "") +
                  "step-offload-buffers," + tiling + ",step-plan-memory," +
                  "step-kernel-noalias" + predict +
                  (debugNan && gpuArch.empty() ? ",step-check-finite" : ""));
}

// Host code of either target: loops, views to pointer arithmetic, the LLVM dialect with
// bare-pointer calls. `gpuToLLVM` adds the launches' lowering (the CUDA host module).
std::string hostToLLVM(bool gpuToLLVM) {
  return std::string("convert-linalg-to-loops,expand-strided-metadata,lower-affine,"
                     "convert-scf-to-cf,canonicalize,finalize-memref-to-llvm,"
                     "convert-math-to-llvm,convert-math-to-libm,convert-arith-to-llvm,"
                     "convert-index-to-llvm,") +
         (gpuToLLVM ? "gpu-to-llvm," : "") +
         "convert-func-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts";
}

// Reductions may keep per-lane partial sums; tiled kernels become range functions the
// runtime's threads share (CPU only).
void buildCpuLLVM(mlir::OpPassManager &pm) {
  addPipeline(pm, "step-reassociate-reductions,step-parallelize-kernels," + hostToLLVM(false) +
                      ",step-dispatch-parallel-kernels,step-pack-entry-points");
}

void buildGpu(mlir::OpPassManager &pm, llvm::StringRef gpuArch) {
  addPipeline(pm, ("step-kernels-to-gpu{gpu-arch=" + gpuArch + "},canonicalize,cse").str());
}

// Inside the kernels: views to pointer arithmetic, loops to branches, then NVVM; the object is
// LLVM's NVPTX backend at O3 (`isa`: PTX text; `fatbin`: ptxas's cubin and the PTX). Math
// functions (tanh, exp, erf, ...) become calls into CUDA's libdevice, linked from the toolkit.
std::string kernelsToBinary(llvm::StringRef gpuArch, llvm::StringRef format) {
  return ("step-lower-gpu-reductions,nvvm-attach-target{chip=" + gpuArch +
          " O=3},gpu.module(expand-strided-metadata,lower-affine,convert-scf-to-cf,"
          "convert-gpu-to-nvvm,canonicalize,cse,reconcile-unrealized-casts),"
          "gpu-module-to-binary{format=" + format + " toolkit=" + cudaToolkit() + "}")
      .str();
}

void buildPtx(mlir::OpPassManager &pm, llvm::StringRef gpuArch) {
  addPipeline(pm, kernelsToBinary(gpuArch, "isa"));
}

void buildCudaLLVM(mlir::OpPassManager &pm, llvm::StringRef gpuArch) {
  addPipeline(pm, "step-cuda-host," + kernelsToBinary(gpuArch, "fatbin") + "," +
                      hostToLLVM(true) + ",step-pack-entry-points{prefix=stepc_cuda_}");
}

void buildEmulated(mlir::OpPassManager &pm) {
  addPipeline(pm, "step-lower-gpu-reductions,step-check-offload-access,step-emulate-gpu");
}

// Not a stage: what the lit tests that run lowered code use to reach mlir-cpu-runner (linalg
// on tensors, bufferized at function boundaries, to the LLVM dialect).
void buildRunnerLLVM(mlir::OpPassManager &pm) {
  addPipeline(pm, "one-shot-bufferize{bufferize-function-boundaries},convert-linalg-to-loops,"
                  "convert-scf-to-cf,expand-strided-metadata,lower-affine,"
                  "finalize-memref-to-llvm,convert-math-to-llvm,convert-math-to-libm,"
                  "convert-arith-to-llvm,convert-func-to-llvm,convert-cf-to-llvm,"
                  "reconcile-unrealized-casts");
}

struct GpuArchOptions : mlir::PassPipelineOptions<GpuArchOptions> {
  Option<std::string> gpuArch{*this, "gpu-arch",
                              llvm::cl::desc("the NVIDIA architecture (GpuTargets.h)"),
                              llvm::cl::init("sm_90")};
};
struct TrainOptions : mlir::PassPipelineOptions<TrainOptions> {
  Option<bool> columnNorms{*this, "column-norms",
                           llvm::cl::desc("the CPU's norms by columns (false: a GPU target's)"),
                           llvm::cl::init(true)};
};

struct LinalgOptions : mlir::PassPipelineOptions<LinalgOptions> {
  Option<std::string> convAlgorithm{
      *this, "conv-algorithm",
      llvm::cl::desc("direct, auto (the CPU's: Winograd for wide convolutions) or winograd"),
      llvm::cl::init("auto")};
  Option<int64_t> winogradTile{*this, "winograd-tile",
                               llvm::cl::desc("outputs per Winograd tile, m of F(m, K)"),
                               llvm::cl::init(4)};
  Option<bool> parallelRouting{
      *this, "parallel-routing",
      llvm::cl::desc("routing as parallel kernels (a GPU target's) instead of loops"),
      llvm::cl::init(false)};
};

struct BuffersOptions : mlir::PassPipelineOptions<BuffersOptions> {
  Option<std::string> gpuArch{*this, "gpu-arch",
                              llvm::cl::desc("tile for this NVIDIA architecture's SMs (a CUDA "
                                             "target); empty: for the CPU"),
                              llvm::cl::init("")};
  Option<bool> debugNan{*this, "debug-nan",
                        llvm::cl::desc("check every kernel's outputs for NaN and Inf (CPU)"),
                        llvm::cl::init(false)};
};

// The table's builders: a stage's pipeline from the options it reads.
// The CPU sums gradient norms by columns first (BuildTrainStep's column-norms); a GPU target
// (and its emulation, which must run the GPU's program) splits whole sums over the grid.
void stageTrain(mlir::OpPassManager &pm, const StageOptions &options) {
  train::BuildTrainStepOptions train = options.train;
  train.columnNorms = options.target == Target::CPU;
  // The reductions overlap the backward on every target: on a thread of their own on the CPU
  // (runtime/hal/cpu/BackgroundReductions.h), on NCCL's stream on CUDA (runtime/hal/cuda/Nccl.h).
  pm.addPass(train::createBuildTrainStep(train));
}
template <void (*Build)(mlir::OpPassManager &)>
void stage(mlir::OpPassManager &pm, const StageOptions &) {
  Build(pm);
}
template <void (*Build)(mlir::OpPassManager &, llvm::StringRef)>
void stageForArch(mlir::OpPassManager &pm, const StageOptions &options) {
  Build(pm, options.gpuArch);
}
// Winograd convolutions are the CPU's only: a GPU target keeps the direct GEMMs (cuBLASLt's
// rate is not measured against it yet), whatever --conv-algorithm says (validate() refuses).
void stageLinalg(mlir::OpPassManager &pm, const StageOptions &options) {
  buildLinalg(pm, options.target == Target::CPU ? options.convAlgorithm : "direct",
              options.winogradTile, options.testOnlyPerturbWinograd,
              /*parallelRouting=*/options.target != Target::CPU);
}
void stageBuffers(mlir::OpPassManager &pm, const StageOptions &options) {
  buildBuffers(pm, options.target == Target::CPU ? "" : options.gpuArch, options.debugNan,
               options.linkBandwidth);
}

const Stage kStages[] = {
    {"model", "the user's graph: step ops on static-shaped tensors with declarations, loss and "
              "config",
     kAll, StageKind::IR, "", "mlir", nullptr},
    {"train", "+ func @train_step(params, optimizer state, batch, step) -> (params', state', "
              "metrics): forward, backward, SAM, clipping, LR schedule and optimizer in one "
              "function",
     kAll, StageKind::IR, "stepc-train", "mlir", stageTrain},
    {"linalg", "+ func @eval_loss and the step.program description (what each buffer is); both "
               "functions lowered to linalg/tensor/arith/math/scf",
     kAll, StageKind::IR, "stepc-linalg", "mlir", stageLinalg},
    {"kernels", "elementwise ops fused into their consumers (elementwise ops and reductions); "
                "each linalg op left is one kernel",
     kAll, StageKind::IR, "stepc-kernels", "mlir", stage<buildKernels>},
    {"buffers", "bufferized: memrefs, results written to caller-owned out-parameters, every "
                "temporary at a fixed offset of one arena; each kernel outlined into a "
                "@kernel_N function, so @train_step is the host plan",
     kAll, StageKind::IR, "stepc-buffers", "mlir", stageBuffers},
    {"plan", "(a view) the host plan at `buffers`: the ordered kernel calls, GEMMs, copies and "
             "loops, each buffer named by where it lives",
     kAll, StageKind::View, "", "txt", nullptr},
    {"gpu", "(cuda, cuda-emulated) the kernels as gpu.func in gpu.module @stepc_kernels, tiles "
            "to blocks and elements to threads; calls as gpu.launch_func",
     kCuda | kEmulated, StageKind::IR, "stepc-gpu", "mlir", stageForArch<buildGpu>},
    {"ptx", "(cuda; a view) the kernels' PTX for --gpu-arch, through NVVM and LLVM's NVPTX "
            "backend",
     kCuda, StageKind::View, "stepc-ptx", "ptx", stageForArch<buildPtx>},
    {"emulated", "(cuda-emulated) block reductions lowered to shuffles and barriers as for the "
                 "GPU, an offloading plan's commands checked against the transfers in flight, "
                 "then each launch a loop over blocks and lock-step threads on the CPU",
     kEmulated, StageKind::IR, "stepc-emulated", "mlir", stage<buildEmulated>},
    {"llvm", "the LLVM dialect: loops, bare-pointer calls, packed entry points stepc_train_step / "
             "stepc_eval_loss and the embedded @stepc_program_description",
     kCpu | kEmulated, StageKind::IR, "stepc-cpu-llvm", "mlir", stage<buildCpuLLVM>},
    {"llvm", "(cuda) the CUDA step's host module in the LLVM dialect: the kernels embedded as "
             "cubin and PTX, launched through MLIR's GPU runtime ABI, entry points "
             "stepc_cuda_train_step / stepc_cuda_eval_loss",
     kCuda, StageKind::IR, "stepc-cuda-llvm", "mlir", stageForArch<buildCudaLLVM>},
};

bool has(const Stage &stage, Target target) {
  return stage.targets & (1u << static_cast<unsigned>(target));
}

}  // namespace

llvm::ArrayRef<TargetInfo> allTargets() { return kTargets; }

const TargetInfo &targetInfo(Target target) {
  return *llvm::find_if(kTargets, [&](const TargetInfo &t) { return t.target == target; });
}

std::optional<Target> parseTarget(llvm::StringRef name, std::string &error) {
  for (const TargetInfo &info : kTargets)
    if (name == info.name) return info.target;
  error = "--target expects cpu, cuda or cuda-emulated, found '" + name.str() + "'";
  return std::nullopt;
}

std::string StageOptions::validate() const {
  std::string error;
  if (target != Target::CPU && !lookupGpuTarget(gpuArch, error)) return error;
  if (convAlgorithm != "direct" && convAlgorithm != "auto" && convAlgorithm != "winograd")
    return "--conv-algorithm expects direct, auto or winograd, found '" + convAlgorithm + "'";
  if (convAlgorithm == "winograd" && target != Target::CPU)
    return "--conv-algorithm=winograd is for --target=cpu only (a GPU target computes its "
           "convolutions as direct GEMMs)";
  if (winogradTile < 1 || winogradTile > 12)
    return "--winograd-tile expects 1 to 12 outputs per tile, found " +
           std::to_string(winogradTile);
  return "";
}

llvm::SmallVector<const Stage *> stagesOf(Target target) {
  llvm::SmallVector<const Stage *> stages;
  for (const Stage &stage : kStages)
    if (has(stage, target)) stages.push_back(&stage);
  return stages;
}

const Stage *findStage(Target target, llvm::StringRef name) {
  for (const Stage &stage : kStages)
    if (has(stage, target) && name == stage.name) return &stage;
  return nullptr;
}

std::optional<Target> firstTargetWith(llvm::StringRef name) {
  for (const TargetInfo &info : kTargets)
    if (findStage(info.target, name)) return info.target;
  return std::nullopt;
}

std::string stageNames(Target target) {
  std::string out;
  for (const Stage *stage : stagesOf(target))
    out += (out.empty() ? "" : ", ") + std::string(stage->name);
  return out;
}

std::string describeStages() {
  std::string out;
  for (const Stage &stage : kStages)
    out += "  " + std::string(stage.name) + ": " + stage.description + "\n";
  return out;
}

mlir::LogicalResult runStage(const Stage &stage, mlir::ModuleOp module,
                             const StageOptions &options, std::string *view) {
  llvm::StringRef name = stage.name;
  if (!stage.build) {
    if (stage.kind == StageKind::IR) return mlir::success();  // `model`: nothing to run
    llvm::raw_string_ostream os(*view);                       // `plan`: a printer, no passes
    return printPlan(module, os, options.target == Target::CUDA);
  }
  if (name == "ptx" || (name == "llvm" && options.target == Target::CUDA))
    if (failed(checkLibdevice(module))) return mlir::failure();
  mlir::OwningOpRef<mlir::ModuleOp> copy;
  mlir::ModuleOp target = module;
  if (stage.kind == StageKind::View) {
    copy = module.clone();
    target = *copy;
  }
  registerCodegenPipelines();
  mlir::PassManager pm(module.getContext());
  stage.build(pm, options);
  if (failed(pm.run(target))) return mlir::failure();
  if (name != "ptx") return mlir::success();
  mlir::FailureOr<std::string> ptx = extractPtx(target);
  if (failed(ptx)) return mlir::failure();
  *view = std::move(*ptx);
  return mlir::success();
}

mlir::LogicalResult describeProgram(mlir::ModuleOp module) {
  mlir::PassManager pm(module.getContext());
  pm.addPass(train::createBuildEvalLoss());
  pm.addPass(createDescribeProgram());
  return pm.run(module);
}

void registerCodegenPipelines() {
  static bool done = [] {
    mlir::registerAllPasses();
    registerStepCodegenCommonPasses();
    registerStepCodegenLLVMCPUPasses();
    registerStepCodegenLLVMGPUPasses();
    registerStepCodegenEmulationPasses();
    lowering::registerLoweringPasses();
    train::registerTrainingPasses();
    mlir::PassPipelineRegistration<TrainOptions>(
        "stepc-train", "stage `train`: the model's train step, its step.config as written",
        [](mlir::OpPassManager &pm, const TrainOptions &o) {
          StageOptions stage;
          stage.target = o.columnNorms ? Target::CPU : Target::CUDA;
          stage.train.overlapReductions = true;  // stepc compile's default
          stageTrain(pm, stage);
        });
    mlir::PassPipelineRegistration<LinalgOptions>(
        "stepc-linalg", "stage `linalg`: @eval_loss, step.program, step ops to linalg",
        [](mlir::OpPassManager &pm, const LinalgOptions &o) {
          buildLinalg(pm, o.convAlgorithm, o.winogradTile, /*perturbWinograd=*/false,
                      o.parallelRouting);
        });
    mlir::PassPipelineRegistration<>("stepc-kernels", "stage `kernels`: elementwise fusion",
                                     buildKernels);
    mlir::PassPipelineRegistration<BuffersOptions>(
        "stepc-buffers", "stage `buffers`: bufferized, outlined, tiled, memory planned",
        [](mlir::OpPassManager &pm, const BuffersOptions &o) {
          buildBuffers(pm, o.gpuArch, o.debugNan);
        });
    mlir::PassPipelineRegistration<>("stepc-cpu-llvm", "stage `llvm` of --target=cpu",
                                     buildCpuLLVM);
    mlir::PassPipelineRegistration<GpuArchOptions>(
        "stepc-gpu", "stage `gpu`: kernels to gpu.func",
        [](mlir::OpPassManager &pm, const GpuArchOptions &o) { buildGpu(pm, o.gpuArch); });
    mlir::PassPipelineRegistration<GpuArchOptions>(
        "stepc-ptx", "stage `ptx` (from `gpu`): the kernels as a gpu.binary of PTX",
        [](mlir::OpPassManager &pm, const GpuArchOptions &o) { buildPtx(pm, o.gpuArch); });
    mlir::PassPipelineRegistration<GpuArchOptions>(
        "stepc-cuda-llvm", "stage `llvm` of --target=cuda (from `gpu`)",
        [](mlir::OpPassManager &pm, const GpuArchOptions &o) { buildCudaLLVM(pm, o.gpuArch); });
    mlir::PassPipelineRegistration<>("stepc-emulated",
                                     "stage `emulated` of --target=cuda-emulated (from `gpu`)",
                                     buildEmulated);
    mlir::PassPipelineRegistration<>(
        "stepc-runner-llvm",
        "tests: linalg on tensors to the LLVM dialect, for mlir-cpu-runner", buildRunnerLLVM);
    return true;
  }();
  (void)done;
}

void registerCodegenDialects(mlir::DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  // The CUDA stages serialise gpu.module kernels through NVVM.
  mlir::registerGPUDialectTranslation(registry);
  // gpu.binary / gpu.launch_func in the CUDA step's host code: embed the fatbin, call mgpu*.
  mlir::gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  mlir::registerNVVMDialectTranslation(registry);
}

}  // namespace stepc::codegen
