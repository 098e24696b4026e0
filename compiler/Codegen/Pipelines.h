//===- Pipelines.h - every stage of every target, defined once -*- C++ -*-===//
//
// The one table of compiler stages and the one place their pass pipelines are written. `stepc
// compile --emit=STAGE` and `--dump-phases-to=DIR` walk this table for the chosen --target;
// every pipeline is also registered by name, so `stepc-opt --pass-pipeline=
// 'builtin.module(stepc-buffers)'` advances a dump exactly as stepc does and no test copies a
// pipeline.
//
//   stage     targets          what the module holds afterwards (IR) / what is printed (view)
//   model     all              the user's graph, verified, overrides applied
//   train     all              + func @train_step: forward, backward, SAM, clipping, optimizer
//   linalg    all              + @eval_loss and the step.program description; linalg/tensor/scf
//   kernels   all              elementwise ops fused into consumers: one linalg op = one kernel
//   buffers   all              bufferized, kernels outlined and tiled, the static memory plan
//   plan      all (view)       the host's ordered commands at `buffers`, as text
//   gpu       cuda, emulated   kernels as gpu.func in gpu.module @stepc_kernels, gpu.launch_func
//   ptx       cuda (view)      the kernels' PTX for --gpu-arch
//   emulated  cuda-emulated    the launches as loops over blocks and lock-step threads (CPU)
//   llvm      all              the LLVM dialect with packed entry points (cuda: the CUDA step's
//                              host module, kernels embedded as cubin + PTX)
//
// A view reads the module at the stage before it and leaves it unchanged.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_PIPELINES_H
#define STEPC_COMPILER_CODEGEN_PIPELINES_H

#include <optional>
#include <string>

#include "compiler/Training/Passes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"

namespace mlir {
class OpPassManager;
}

namespace stepc::codegen {

enum class Target { CPU, CUDA, CUDAEmulated };

struct TargetInfo {
  Target target;
  const char *name;  // --target
  const char *description;
  /// The executable also carries the CPU step, compiled from the shared `buffers` stage, that
  /// `--device=auto` falls back to.
  bool embedsCpuStep;
};

llvm::ArrayRef<TargetInfo> allTargets();
const TargetInfo &targetInfo(Target target);
/// Parses --target; reports what was expected in `error`.
std::optional<Target> parseTarget(llvm::StringRef name, std::string &error);

/// What a stage's pipeline depends on besides the module. Checked once, by validate().
struct StageOptions {
  Target target = Target::CPU;
  std::string gpuArch = "sm_90";  // --gpu-arch: GpuTargets.h
  train::BuildTrainStepOptions train;  // the `train` stage: overrides of the step.config
  bool debugNan = false;  // --debug-nan: the CPU step checks every kernel's outputs (CheckFinite)
  std::string convAlgorithm = "auto";  // --conv-algorithm: direct, auto or winograd (CPU)
  int64_t winogradTile = 4;            // --winograd-tile: m of Winograd's F(m, K)
  bool testOnlyPerturbWinograd = false;  // --test-only-perturb-winograd (tests' negative control)
  double linkBandwidth = 0;  // --link-bandwidth (bytes/s; 0: the GPU's): offload predictions
  /// An empty string when the options are valid, else the error to print.
  std::string validate() const;
};

enum class StageKind {
  IR,    // advances the module; its dump is NN.NAME.mlir and parses back in
  View,  // prints text from the module as it is (NN.NAME.EXT); the module is unchanged
};

struct Stage {
  const char *name;         // --emit
  const char *description;  // --help
  unsigned targets;         // bit (1 << Target) for each target that has the stage
  StageKind kind;
  const char *pipeline;     // the registered pipeline; "" for `model` and `plan`
  const char *extension;    // of the dump: "mlir" for IR stages
  /// Appends the stage's passes (null: nothing to run, e.g. `model`, the `plan` view).
  void (*build)(mlir::OpPassManager &, const StageOptions &);
};

/// The stages of `target`, in pipeline order.
llvm::SmallVector<const Stage *> stagesOf(Target target);
/// The stage of `target` called `name`, or null.
const Stage *findStage(Target target, llvm::StringRef name);
/// The first target, in allTargets() order, with a stage called `name`.
std::optional<Target> firstTargetWith(llvm::StringRef name);
/// "model, train, ..." for messages and help.
std::string stageNames(Target target);
/// Every stage of every target with its description, in pipeline order (help text; `llvm`
/// twice: the CPU's and the CUDA step's).
std::string describeStages();

/// Runs `stage` on `module`: an IR stage advances the module; a view stores its text in
/// `view` and leaves the module as it was.
mlir::LogicalResult runStage(const Stage &stage, mlir::ModuleOp module,
                             const StageOptions &options, std::string *view = nullptr);

/// Adds @eval_loss and the step.program description to a module at the `train` stage, without
/// lowering: what the interpreter's StepProgram runs (stepc interpret).
mlir::LogicalResult describeProgram(mlir::ModuleOp module);

/// Registers every stage's pipeline by name (stepc-train, stepc-linalg, stepc-ptx{gpu-arch=sm_90},
/// ...; stepc-train with the model's own step.config, the driver adds its overrides),
/// stepc's own passes and the upstream passes the pipelines name.
void registerCodegenPipelines();
/// The dialects and interface models (bufferization, deallocation, LLVM and NVVM translation)
/// the pipelines need.
void registerCodegenDialects(mlir::DialectRegistry &registry);

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_PIPELINES_H
