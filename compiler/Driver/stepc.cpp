//===- stepc.cpp - the stepc compiler driver -----------------------------===//
//
//   stepc check MODEL.mlir                 parse and verify a model
//   stepc compile MODEL.mlir --emit=STAGE  print the IR at a stage
//
// Errors are printed as `file:line:col: error: ...`; the exit code is 1 on any error.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "compiler/Codegen/LLVMCPU/Linker.h"
#include "compiler/Codegen/LLVMCPU/ObjectEmitter.h"
#include "compiler/Codegen/DeviceMemory.h"
#include "compiler/Codegen/MemoryBudget.h"
#include "compiler/Codegen/Pipelines.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/flags/internal/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "compiler/Driver/RunCommand.h"
#include "compiler/Reference/InterpreterProgram.h"
#include "runtime/harness/Main.h"
#include "compiler/Autodiff/Autodiff.h"
#include "compiler/Autodiff/Vjp.h"
#include "compiler/Model/ModelLoader.h"
#include "compiler/Training/Passes.h"
#include "compiler/Training/TrainConfig.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "absl/flags/internal/program_name.h"
#include "absl/strings/match.h"

ABSL_FLAG(std::string, emit, "",
          "stage to print with `compile` (see the stage list below); without it, `compile` "
          "builds a training executable");
ABSL_FLAG(std::string, o, "",
          "output of `compile`: the executable (default: the model's name), or with --emit the "
          "IR ('-' or default: stdout)");
ABSL_FLAG(std::string, cpu, "native",
          "`compile`: the CPU to generate code for (native, or an LLVM CPU name like x86-64-v3)");
ABSL_FLAG(std::string, target, "cpu",
          "`compile`: cpu (a native executable), cuda (an executable with a CUDA step and the "
          "CPU step it falls back to; --emit=gpu, --emit=ptx and --emit=llvm show its stages) or "
          "cuda-emulated (a CPU executable running the CUDA kernels' blocks and threads one "
          "after another: checks the GPU mapping's numbers without a GPU)");
ABSL_FLAG(std::string, gpu_arch, "sm_90", "`compile --target=cuda`: the NVIDIA architecture");
ABSL_FLAG(bool, keep_object, false,
          "`compile`: also keep the object files: OUTPUT.o, and OUTPUT.o.1, ... when the "
          "backend ran on several threads (--backend-threads)");
ABSL_FLAG(int32_t, backend_threads, 0,
          "`compile`: threads for LLVM's backend, each compiling a part of the optimised module "
          "to its own object file (0: one per CPU, at most 8; the code is the same)");
ABSL_FLAG(bool, export_grads, false,
          "the step also returns every parameter's gradient (before clipping), which `NAME train "
          "--save-grads F` writes; for comparing gradients with another framework");
ABSL_FLAG(bool, rebuild_error, false,
          "`compile`, `interpret`: the step also reports `rebuild_error`, how far the inputs "
          "that each reversible repeat's backward rebuilds are from the forward's (max|r - x| / "
          "max|x|; 0 means bit for bit); keeps the forward's until the backward ends");
ABSL_FLAG(bool, data_parallel, false,
          "`compile`: the step averages its loss and gradients over the ranks of `mpirun -np N "
          "NAME train` (a fixed-order tree on the CPU, so N ranks give one process's bits; "
          "NCCL's on CUDA)");
ABSL_FLAG(bool, overlap_reductions, true,
          "`compile --data-parallel`: start each layer's gradient reduction inside the "
          "backward, on a thread of its own on the CPU, on a stream of its own on CUDA (false: "
          "every reduction after the backward, one at a time; the same bits, for comparison; "
          "also with --device-memory)");
ABSL_FLAG(int64_t, shard_optimizer, 0,
          "`compile --data-parallel`: split the optimizer state and its update over this many "
          "ranks (ZeRO stage 1): each rank keeps and updates its block of each parameter's "
          "first axis and the ranks gather the parameters; the executable then runs under "
          "`mpirun -np` exactly this many, with the bits of one process; 0: off");
ABSL_FLAG(std::string, test_only_flip_vjp, "",
          "tests only: negate the gradient of every op of this name (e.g. step.gelu), a broken "
          "VJP the PyTorch parity test must catch");
ABSL_FLAG(bool, debug_nan, false,
          "`compile`: after every kernel and GEMM the CPU step checks its outputs; the first NaN "
          "or Inf stops the run naming the model op it came from (file:line:col: op 'step.x'). "
          "Slower: for finding where a NaN starts");
ABSL_FLAG(std::string, conv_algorithm, "auto",
          "`compile` (CPU): how convolutions are computed: direct (GEMMs over the window), "
          "winograd (Winograd's F(m, K): fewer multiplications, ~1e-5 relative error in f32) or "
          "auto (Winograd where both channel counts are at least 128, else direct)");
ABSL_FLAG(int64_t, winograd_tile, 4,
          "`compile`: outputs per Winograd tile, m of F(m, K) (larger saves more, loses digits)");
ABSL_FLAG(bool, test_only_perturb_winograd, false,
          "tests only: Winograd's G with one coefficient 1% off, a wrong transform the numeric "
          "tests must catch");
ABSL_FLAG(int64_t, test_only_drop_offload_wait, 0,
          "tests only: with --device-memory, leave out the N-th wait for a prefetch (1-based), "
          "a plan bug the cuda-emulated executable's race check must catch");
ABSL_FLAG(std::string, memory_budget, "",
          "`compile`, `interpret`: the most memory the training step may plan (bytes, or with "
          "K, M, G: KiB, MiB, GiB); per step.repeat the compiler then chooses what the backward "
          "keeps (reversible, recompute, or each layer's input and its GEMM outputs) for the "
          "least recompute that fits, and says so in `--emit=plan` and `NAME info`; a budget "
          "nothing fits is an error with the breakdown. Without it the model's marks decide: "
          "reversible repeats rebuild, the others keep each layer's input and every GEMM output "
          "worth keeping (the least recompute)");
ABSL_FLAG(std::string, device_memory, "",
          "`compile`: the device's memory (bytes, or with K, M, G); when the step's planned peak "
          "exceeds it, stacked layers' optimizer state and then parameters live in host memory "
          "and stream through the device layer by layer (on the CPU target the host tier is a "
          "file and the cap is on RAM); `info` and `--emit=plan` say what was chosen");
ABSL_FLAG(std::string, link_bandwidth, "",
          "`compile --device-memory --target=cuda`: the host link's rate in GB/s for the "
          "predicted transfer and exposed times `info` prints (default: the GPU's, e.g. 50 for "
          "sm_90 on PCIe 5 x16)");
ABSL_FLAG(std::string, offload, "planned",
          "`compile --device-memory`: planned (double-buffered, the next layer's transfer "
          "overlapping this layer's work) or sync (copied in when used, back after: the baseline)");
ABSL_FLAG(std::string, dump_phases_to, "",
          "also write every stage up to --emit into DIR as NN.STAGE.mlir");
ABSL_FLAG(int64_t, batch, 0,
          "override the leading (batch) dimension of every input (0: keep); a model whose "
          "inputs lead with its dim B gets --dim=B=N");
ABSL_FLAG(int64_t, global_batch, 0,
          "set the step's batch to this many rows, each micro-batch keeping the model's own "
          "size: --global-batch=N*B on a model of batch B trains N micro-batches of B (one per "
          "rank under `mpirun -np N` with --data-parallel); --micro-batches still overrides "
          "the count; not with --batch");
ABSL_FLAG(std::string, config, "",
          "apply the model's configuration NAME (step.model ... configs(NAME = (dims...))), e.g. "
          "--config=tiny; --dim overrides on top of it");
ABSL_FLAG(std::vector<std::string>, dim, {},
          "override named dims declared in the model's dims(...), e.g. --dim=depth=64,F=512");
ABSL_FLAG(std::string, optimizer, "", "override the model's optimizer: sgd, adam or adamw");
ABSL_FLAG(double, lr, 0.0, "override the peak learning rate");
ABSL_FLAG(double, sam_rho, 0.0, "override SAM's rho; 0 turns SAM off");
ABSL_FLAG(int64_t, micro_batches, 0,
          "override gradient accumulation over this many micro-batches (0: keep)");
ABSL_FLAG(std::string, clip, "", "override gradient clipping: none, global_norm or agc");
ABSL_FLAG(int64_t, steps, 10, "`run`: training steps in the interpreter (0: the loss at init)");
ABSL_FLAG(uint64_t, seed, 0, "`run`: seed of the initialisers and the built-in data");
ABSL_FLAG(std::string, init_from, "", "`run`: parameters by name from a safetensors file");
ABSL_FLAG(std::string, save_params, "", "`run`: write the parameters after the run (safetensors)");
ABSL_FLAG(std::string, data, "",
          "`run`: token file for token_stream inputs: raw bytes, or an llm.c .bin shard");
ABSL_FLAG(std::string, precision, "",
          "compile: f32 (default) or bf16 (bf16 matmuls and convolutions, f32 master weights, "
          "optimizer state and precision-sensitive ops); run / interpret: f64 (default) computes "
          "every op in float64, declared rounds each result to its dtype, bf16 is the bf16 "
          "program run with declared rounding");

namespace {

constexpr const char *kUsage = R"(stepc: an ahead-of-time compiler for whole training steps.

Usage:
  stepc check MODEL.mlir [--config=NAME] [--batch=N | --global-batch=G] [--dim=NAME=VALUE,...]
      Parse and verify a model; print a summary. Exit 0 when it is valid, 1 otherwise.
  stepc compile MODEL.mlir [-o NAME] [--cpu=native|CPU] [training flags] [--batch=N] [--dim=...]
      Compile the model's training step to a native, standalone training executable NAME
      (default: the model's name). Run `NAME --help`: NAME train / eval / info.
  stepc compile MODEL.mlir --emit=STAGE [-o FILE] [--dump-phases-to=DIR] [training flags] ...
      Print the IR at STAGE instead. Every printed stage parses back in (stepc-opt FILE).
  stepc compile MODEL.mlir --target=cuda --emit=gpu|ptx|llvm [--gpu-arch=sm_90] [-o FILE] ...
      The CUDA mapping of the same kernels: the `gpu` stage (gpu.func kernels launched by the
      host plan), the kernels' PTX, or the CUDA step's host module in LLVM dialect (the
      kernels embedded as cubin and PTX). Without --emit, --target=cuda builds an executable with a
      CUDA step (and the CPU step: `NAME train --device=auto` uses the GPU when there is one);
      --target=cuda-emulated builds a CPU executable that runs the CUDA kernels' blocks and
      threads one after another, to check their numbers without a GPU.
  Training flags: [--optimizer=sgd|adam|adamw] [--lr=X] [--sam-rho=X] [--micro-batches=K]
                  [--clip=none|global_norm|agc] override the model's step.config.
                  [--global-batch=G]: G rows a step in micro-batches of the model's size
                  (G = N x its batch: one micro-batch per rank on `mpirun -np N`).
                  [--precision=bf16] (compile): matmuls and convolutions in bf16, norms,
                  softmax, losses and sums in f32, f32 master weights and optimizer state.
                  [--memory-budget=BYTES] (compile, interpret; e.g. 512M): per repeat, what
                  the backward keeps (reversible, each layer's input, its GEMM outputs) is
                  chosen for the least recompute whose memory plan fits; --emit=plan and
                  `NAME info` say what was chosen and why; a budget nothing fits is an error.
                  [--device-memory=BYTES [--offload=planned|sync]] (compile): what does not
                  fit stays in host memory (a file on the CPU target, pinned memory on
                  CUDA) and streams through the device layer by layer, its transfers
                  overlapped with the work; cuda-emulated checks every command against the
                  transfers in flight and stops the run at the first race. On CUDA `info`
                  predicts the transfers' time and the part the step waits for at
                  [--link-bandwidth=GB/s] (default: the GPU's host link).
                  [--rebuild-error] (compile, interpret): the step reports metric
                  rebuild_error, the distance of each reversible repeat's rebuilt inputs
                  from the forward's (0: bit for bit).
                  [--conv-algorithm=auto|direct|winograd [--winograd-tile=M]] (compile,
                  CPU): convolutions as GEMMs over their window, or by Winograd's F(M, K)
                  (α = M + K - 1 GEMMs instead of K: 2.8x fewer multiplications for F(4, 7),
                  ~1e-5 relative error in f32); auto takes Winograd where both channel
                  counts are at least 128 (byte_lm's default configuration).
                  [--debug-nan] (compile): the CPU step checks every kernel's and GEMM's
                  outputs; the first NaN or Inf stops the run naming the model op it came
                  from ("model.mlir:12:8: op 'step.rsqrt' ... produced +Inf"). Slower.
  stepc run MODEL.mlir [--steps=N] [--seed=S] [--precision=f64|declared|bf16] [--data=FILE]
                [--init-from=P.safetensors] [--save-params=P.safetensors] [training flags]
      Train N steps in the executables' training loop with the reference interpreter as the
      step (each step in float64; parameters kept in f32 between steps, as an executable
      keeps them) on the built-in data or FILE, printing the metrics of each step as a line;
      --steps=0 prints the loss of the starting parameters on step 0's batch.
  stepc interpret MODEL.mlir [--precision=f64|declared|bf16] [training flags] -- ARGS...
      Run the training executable's command line ARGS (train / eval / info, see
      `NAME --help`) with the reference interpreter as its step: the same initialisation,
      data, checkpoints and metrics as the compiled executable, for comparing the two.

Examples:
  stepc check models/byte_lm.mlir
  stepc compile models/byte_lm.mlir --config=small -o byte_lm_small && ./byte_lm_small train --steps=200
  stepc compile models/byte_lm.mlir --emit=model --dim=depth=64
  stepc compile models/mlp.mlir --emit=model --batch=8 -o /tmp/mlp.model.mlir
  stepc compile models/byte_lm.mlir --emit=train --sam-rho=0.05 --optimizer=adamw
  stepc run models/byte_lm.mlir --config=tiny --steps=30
  stepc interpret models/mlp.mlir --config=tiny -- train --steps=3 --metrics=m.jsonl
  stepc compile models/byte_lm.mlir --target=cuda -o byte_lm && ./byte_lm train --device=auto
  stepc compile models/mlp.mlir --config=tiny --emit=ptx --gpu-arch=sm_90
  stepc compile models/gpt2_124m.mlir --target=cuda --precision=bf16 -o gpt2

Errors are reported as file:line:col: error: message.
)";

std::string stageHelp() {
  return "\nStages (--emit), in pipeline order:\n" + stepc::codegen::describeStages() +
         "Each target has the stages that name it (all: the others). --dump-phases-to writes "
         "every stage up to --emit as NN.STAGE.mlir (views: .txt, .ptx).\n";
}

int fail(const std::string &message) {
  std::fprintf(stderr, "stepc: error: %s\n", message.c_str());
  return 1;
}

// Parses --dim entries "NAME=VALUE".
bool parseDimFlags(const std::vector<std::string> &entries, std::map<std::string, int64_t> &dims,
                   std::string &error) {
  for (const std::string &entry : entries) {
    std::vector<std::string> parts = absl::StrSplit(entry, absl::MaxSplits('=', 1));
    int64_t value;
    if (parts.size() != 2 || parts[0].empty() || !absl::SimpleAtoi(parts[1], &value)) {
      error = "--dim expects NAME=INTEGER entries, found '" + entry + "'";
      return false;
    }
    dims[parts[0]] = value;
  }
  return true;
}

void printSummary(stepc::step::ModelOp model, llvm::raw_ostream &os) {
  int64_t paramCount = 0, paramTensors = 0, ops = 0;
  model.getBody().walk([&](mlir::Operation *op) {
    ++ops;
    if (auto param = llvm::dyn_cast<stepc::step::ParamOp>(op)) {
      ++paramTensors;
      paramCount += param.getStoredType().getNumElements();
    }
  });
  os << "model @" << model.getSymName() << ": " << paramTensors << " parameter tensors, "
     << paramCount << " parameters, " << ops << " ops; loss "
     << model.getLossOp().getLoss().getType() << "\n";
}

// Flags written on the command line (names normalised to underscores).
std::set<std::string> specifiedFlags;

// Abseil flag names are C identifiers; users write --dump-phases-to. Map dashes in a flag's
// name (not its value) to underscores before parsing.
//
// Repeated --dim flags accumulate (Abseil keeps only a list flag's last occurrence): every
// `--dim=A=1` / `--dim A=1` becomes one `--dim=A=1,B=2` where the first one stood.
std::vector<std::string> normalizeFlagNames(int argc, char **argv) {
  std::vector<std::string> args(argv, argv + argc);
  std::vector<std::string> out;
  std::string dims;
  size_t dimsAt = std::string::npos;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (i > 0 && arg == "--") {  // the executable's own command line follows, untouched
      out.insert(out.end(), args.begin() + static_cast<long>(i), args.end());
      break;
    }
    if (i == 0 || arg.size() < 3 || arg[0] != '-' || arg[1] != '-') {
      out.push_back(arg);
      continue;
    }
    size_t end = std::min(arg.find('='), arg.size());
    for (size_t j = 2; j < end; ++j)
      if (arg[j] == '-') arg[j] = '_';
    std::string name = arg.substr(2, end - 2);
    specifiedFlags.insert(name);
    if (name == "dim") {
      std::string value;
      if (end < arg.size()) value = arg.substr(end + 1);
      else if (i + 1 < args.size()) value = args[++i];
      dims += (dims.empty() ? "" : ",") + value;
      if (dimsAt == std::string::npos) {
        dimsAt = out.size();
        out.push_back("");
      }
      continue;
    }
    out.push_back(arg);
  }
  if (dimsAt != std::string::npos) out[dimsAt] = "--dim=" + dims;
  return out;
}

bool isSpecified(const std::string &flag) { return specifiedFlags.count(flag) > 0; }

// The `train` stage's overrides of the model's step.config: only flags given on the command
// line override (NaN means unset).
stepc::train::BuildTrainStepOptions trainOverrides() {
  stepc::train::BuildTrainStepOptions options;
  options.optimizer = absl::GetFlag(FLAGS_optimizer);
  if (isSpecified("lr")) options.lr = absl::GetFlag(FLAGS_lr);
  if (isSpecified("sam_rho")) options.samRho = absl::GetFlag(FLAGS_sam_rho);
  options.microBatches = absl::GetFlag(FLAGS_micro_batches);
  options.clip = absl::GetFlag(FLAGS_clip);
  options.exportGrads = absl::GetFlag(FLAGS_export_grads);
  options.rebuildError = absl::GetFlag(FLAGS_rebuild_error);
  options.dataParallel = absl::GetFlag(FLAGS_data_parallel);
  options.shardOptimizer = absl::GetFlag(FLAGS_shard_optimizer);
  // With --device-memory the offload's transfers could stream the buffers the reductions'
  // thread is still summing in: the reductions then run after the backward.
  options.overlapReductions =
      absl::GetFlag(FLAGS_overlap_reductions) && !isSpecified("device_memory");
  return options;
}

// Advances `module` through the `train` stage (the interpreter's commands need no more).
mlir::LogicalResult runTrainStage(mlir::ModuleOp module,
                                  const stepc::codegen::StageOptions &options) {
  return stepc::codegen::runStage(*stepc::codegen::findStage(options.target, "train"), module,
                                  options);
}

bool writeText(const std::string &text, llvm::StringRef path) {
  std::string error;
  auto out = mlir::openOutputFile(path, &error);
  if (!out) {
    fail("cannot write '" + path.str() + "': " + error);
    return false;
  }
  out->os() << text;
  out->keep();
  return true;
}

bool writeModule(mlir::ModuleOp module, llvm::StringRef path) {
  std::string error;
  auto out = mlir::openOutputFile(path, &error);
  if (!out) {
    fail("cannot write '" + path.str() + "': " + error);
    return false;
  }
  module.print(out->os());
  out->os() << "\n";
  out->keep();
  return true;
}

// The CPU step's `llvm` stage to an object file, linked with the runtime into the executable
// -o NAME. `cuda`: the CUDA step's `llvm` stage, linked next to the CPU step (which
// --device=auto falls back to).
int buildTrainingExecutable(mlir::ModuleOp module, const std::string &modelName, const char *argv0,
                            mlir::ModuleOp cuda, const std::string &gpuArch) {
  std::string output = absl::GetFlag(FLAGS_o);
  if (output.empty()) output = modelName;
  if (output == "-") return fail("-o -: an executable cannot go to stdout (use --emit=STAGE)");
  llvm::StringRef outputDir = llvm::sys::path::parent_path(output);
  if (!outputDir.empty() && !llvm::sys::fs::is_directory(outputDir))
    return fail("cannot write '" + output + "': there is no directory '" + outputDir.str() + "'");
  std::string searched;
  std::string archive = stepc::codegen::findRuntimeArchive(argv0, searched);
  if (archive.empty())
    return fail("cannot find the runtime archive libstepc_rt.a (looked in " + searched +
                "); build //runtime:stepc_rt or set STEPC_RUNTIME_ARCHIVE");
  std::string object = output + ".o";
  llvm::SmallString<128> temporary;
  if (!absl::GetFlag(FLAGS_keep_object)) {
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile("stepc", "o", temporary))
      return fail("cannot create a temporary file: " + ec.message());
    object = temporary.str().str();
  }
  if (auto memory = module->getAttrOfType<mlir::DictionaryAttr>("step.memory")) {
    auto get = [&](llvm::StringRef key) {
      auto v = llvm::dyn_cast_or_null<mlir::IntegerAttr>(memory.get(key));
      return v ? static_cast<double>(v.getInt()) / (1 << 20) : 0.0;
    };
    std::fprintf(stderr, "stepc: planned peak memory %.1f MiB (arena %.1f MiB for the step's "
                 "temporaries, plus params, optimizer state (updated in place) and the batch)\n",
                 get("peak_bytes"), get("arena_bytes"));
  }
  if (auto kernels = module->getAttrOfType<mlir::DictionaryAttr>("step.kernels")) {
    auto calls = llvm::dyn_cast_or_null<mlir::IntegerAttr>(kernels.get("calls"));
    auto distinct = llvm::dyn_cast_or_null<mlir::IntegerAttr>(kernels.get("distinct"));
    if (calls && distinct)
      std::fprintf(stderr, "stepc: %lld kernel calls (%lld distinct kernels)\n",
                   static_cast<long long>(calls.getInt()), static_cast<long long>(distinct.getInt()));
  }
  stepc::codegen::ObjectOptions options;
  options.cpu = absl::GetFlag(FLAGS_cpu);
  options.threads = absl::GetFlag(FLAGS_backend_threads);
  std::vector<std::string> objects, cudaObjects;
  auto removeAll = [&] {
    for (const std::string &o : objects) llvm::sys::fs::remove(o);
    for (const std::string &o : cudaObjects) llvm::sys::fs::remove(o);
  };
  if (failed(stepc::codegen::emitObject(module, object, options, objects))) {
    llvm::sys::fs::remove(temporary);
    removeAll();
    return 1;
  }
  llvm::SmallString<128> cudaTemporary;
  if (cuda) {
    std::string cudaObject = output + ".cuda.o";
    if (!absl::GetFlag(FLAGS_keep_object)) {
      if (std::error_code ec = llvm::sys::fs::createTemporaryFile("stepc-cuda", "o", cudaTemporary))
        return fail("cannot create a temporary file: " + ec.message());
      cudaObject = cudaTemporary.str().str();
    }
    if (failed(stepc::codegen::emitObject(cuda, cudaObject, options, cudaObjects))) {
      llvm::sys::fs::remove(temporary);
      llvm::sys::fs::remove(cudaTemporary);
      removeAll();
      return 1;
    }
    std::fprintf(stderr, "stepc: CUDA step for %s (cubin and PTX embedded)\n", gpuArch.c_str());
  }
  std::vector<std::string> all(objects);
  all.insert(all.end(), cudaObjects.begin(), cudaObjects.end());
  std::string error = stepc::codegen::linkExecutable(all, archive, output);
  if (!absl::GetFlag(FLAGS_keep_object)) removeAll();
  if (!error.empty()) return fail(error);
  std::fprintf(stderr, "stepc: wrote %s (run `%s --help`)\n", output.c_str(), output.c_str());
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  // Help is printed before the command line is parsed: name the program for it.
  absl::flags_internal::SetProgramInvocationName("stepc");
  // Abseil's help prefixes the usage with "stepc: ", which kUsage starts with already.
  absl::SetProgramUsageMessage(std::string(kUsage).substr(std::strlen("stepc: ")) + stageHelp());
  absl::FlagsUsageConfig usageConfig;
  usageConfig.contains_helpshort_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "stepc.cpp");
  };
  usageConfig.contains_help_flags = usageConfig.contains_helpshort_flags;
  absl::SetFlagsUsageConfig(usageConfig);
  std::vector<std::string> args = normalizeFlagNames(argc, argv);
  // Asking for help is not an error: print it and exit 0 (Abseil's own --help exits 1).
  for (const std::string &arg : llvm::ArrayRef(args).drop_front())
    if (arg == "--help" || arg == "-h" || arg == "-help") {
      absl::flags_internal::FlagsHelp(std::cout, "stepc.",
                                      absl::flags_internal::HelpFormat::kHumanReadable,
                                      absl::ProgramUsageMessage());
      std::cout << "\nFlag names accept dashes or underscores (--dump-phases-to).\n";
      return 0;
    }
  std::vector<char *> argPointers;
  for (std::string &arg : args) argPointers.push_back(arg.data());
  std::vector<char *> positional =
      absl::ParseCommandLine(static_cast<int>(argPointers.size()), argPointers.data());
  if (positional.size() < 2) {
    std::fprintf(stderr, "%s%s\nRun `stepc --help` for the flags.\n", kUsage, stageHelp().c_str());
    return 1;
  }
  std::string command = positional[1];
  if (command != "check" && command != "compile" && command != "run" && command != "interpret")
    return fail("unknown command '" + command +
                "'; expected 'check', 'compile', 'run' or 'interpret' (see --help)");
  if (command == "interpret" ? positional.size() < 3 : positional.size() != 3)
    return fail("'" + command + "' expects exactly one model file, found " +
                std::to_string(positional.size() - 2));
  std::string path = positional[2];

  stepc::ModelOverrides overrides;
  if (int64_t batch = absl::GetFlag(FLAGS_batch)) overrides.batch = batch;
  // --precision: the program's arithmetic (compile: f32 | bf16) or the interpreter's (run,
  // interpret: f64 | declared, or bf16 = the bf16 program with declared rounding).
  std::string precision = absl::GetFlag(FLAGS_precision);
  bool interpreting = command == "run" || command == "interpret";
  if (interpreting ? precision != "" && precision != "f64" && precision != "declared" &&
                         precision != "bf16"
                   : precision != "" && precision != "f32" && precision != "bf16")
    return fail("--precision expects " +
                std::string(interpreting ? "f64, declared or bf16" : "f32 or bf16") +
                " for '" + command + "', found '" + precision + "'");
  overrides.autocastBf16 = precision == "bf16";
  stepc::interp::Precision interpPrecision = precision == "" || precision == "f64"
                                                 ? stepc::interp::Precision::F64
                                                 : stepc::interp::Precision::Declared;
  if (absl::GetFlag(FLAGS_batch) < 0) return fail("--batch must be positive");
  std::string error;
  if (!parseDimFlags(absl::GetFlag(FLAGS_dim), overrides.dims, error)) return fail(error);
  overrides.config = absl::GetFlag(FLAGS_config);
  // The stage table (compiler/Codegen/Pipelines.h) drives --emit for every target. A stage that
  // only another target has (gpu, ptx, emulated) picks that target when --target is not given.
  namespace cg = stepc::codegen;
  cg::StageOptions stageOptions;
  stageOptions.gpuArch = absl::GetFlag(FLAGS_gpu_arch);
  stageOptions.train = trainOverrides();
  stageOptions.debugNan = absl::GetFlag(FLAGS_debug_nan);
  stageOptions.convAlgorithm = absl::GetFlag(FLAGS_conv_algorithm);
  stageOptions.winogradTile = absl::GetFlag(FLAGS_winograd_tile);
  stageOptions.testOnlyPerturbWinograd = absl::GetFlag(FLAGS_test_only_perturb_winograd);
  if (std::string text = absl::GetFlag(FLAGS_link_bandwidth); !text.empty()) {
    double link = 0;
    if (!absl::SimpleAtod(text, &link) || !(link > 0) || !std::isfinite(link))
      return fail("--link-bandwidth expects a positive rate in GB/s, e.g. 50; found '" + text + "'");
    stageOptions.linkBandwidth = link * 1e9;
  }
  stepc::ad::setFlippedVjpForTesting(absl::GetFlag(FLAGS_test_only_flip_vjp));
  std::string emitName = absl::GetFlag(FLAGS_emit);
  std::optional<cg::Target> target = cg::parseTarget(absl::GetFlag(FLAGS_target), error);
  if (!target) return fail(error);
  if (!emitName.empty() && !isSpecified("target") && !cg::findStage(*target, emitName))
    if (std::optional<cg::Target> other = cg::firstTargetWith(emitName)) target = other;
  stageOptions.target = *target;
  if (stageOptions.train.exportGrads && *target == cg::Target::CUDA)
    return fail("--export-grads: the CPU target only (the CUDA step returns no gradients)");
  if (stageOptions.train.shardOptimizer != 0 && isSpecified("device_memory"))
    return fail("--shard-optimizer with --device-memory: offloading a rank's block of the "
                "state is not built; use one or the other");
  if (stageOptions.train.shardOptimizer != 0 && command != "compile" && command != "check")
    return fail("--shard-optimizer: `compile` only; `" + command +
                "` runs one process, and a sharded step needs its ranks (leave the flag out: "
                "the sharded step computes the same numbers)");
  if (std::string invalid = stageOptions.validate(); !invalid.empty()) return fail(invalid);
  bool buildExecutable = command == "compile" && emitName.empty();
  const cg::Stage *emit = cg::findStage(*target, emitName.empty() ? "llvm" : emitName);
  if (!emit) {
    std::string known = cg::targetInfo(*target).name;
    return fail("unknown stage '" + emitName + "' for --emit; expected one of " +
                cg::stageNames(*target) + " (--target=" + known + ")");
  }

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path);
  if (!buffer) return fail("cannot read '" + path + "': " + buffer.getError().message());
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  mlir::DialectRegistry registry;
  stepc::ad::registerVjpModels(registry);
  stepc::codegen::registerCodegenDialects(registry);
  mlir::MLIRContext context(registry);
  // Errors point at the user's file; a dump of the failing op would bury them.
  context.printOpOnDiagnostic(false);
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  if (isSpecified("global_batch")) {
    // The model's batch (with --config and --dim) stays each micro-batch's size times its
    // own micro-batch count: what changes is how many micro-batches make the step.
    int64_t global = absl::GetFlag(FLAGS_global_batch);
    if (global < 1) return fail("--global-batch must be positive, found " + std::to_string(global));
    if (isSpecified("batch"))
      return fail("--global-batch and --batch set the same dim: give one (--global-batch keeps "
                  "each micro-batch the model's size, --batch resizes the model)");
    mlir::OwningOpRef<mlir::ModuleOp> probe = stepc::loadModel(sourceMgr, context, overrides);
    if (!probe) return 1;
    stepc::step::ModelOp model = stepc::getSingleModel(*probe);
    if (!model) return 1;
    mlir::FailureOr<int64_t> batch = stepc::inputsBatch(model);
    mlir::FailureOr<stepc::train::TrainConfig> config = stepc::train::resolveTrainConfig(model, {});
    if (failed(batch) || failed(config)) return 1;
    if (global % *batch)
      return fail("--global-batch=" + std::to_string(global) + " is not a multiple of " +
                  model.getSymName().str() + "'s batch of " + std::to_string(*batch) +
                  " rows (the leading dim of its inputs)");
    if (stageOptions.train.microBatches == 0)
      stageOptions.train.microBatches = config->microBatches * (global / *batch);
    overrides.batch = global;
  }
  mlir::OwningOpRef<mlir::ModuleOp> module = stepc::loadModel(sourceMgr, context, overrides);
  if (!module) return 1;
  stepc::step::ModelOp model = stepc::getSingleModel(*module);
  if (!model) return 1;

  if (command == "check") {
    printSummary(model, llvm::outs());
    return 0;
  }
  {
    // A model whose shapes follow its dim B (an MoE's N = B * S) gets an instance at B / K for
    // the micro-batch forward (ModelLoader.h).
    int64_t k = stageOptions.train.microBatches;
    if (k == 0) {
      mlir::FailureOr<stepc::train::TrainConfig> config = stepc::train::resolveTrainConfig(model, {});
      if (failed(config)) return 1;
      k = config->microBatches;
    }
    if (failed(stepc::addMicroBatchInstance(sourceMgr, context, overrides, *module, k))) return 1;
  }
  if (std::string budget = absl::GetFlag(FLAGS_memory_budget); !budget.empty() || isSpecified("memory_budget")) {
    std::optional<int64_t> bytes = cg::parseByteSize(budget);
    if (!bytes)
      return fail("--memory-budget expects a positive size in bytes, or with K, M or G (KiB, "
                  "MiB, GiB), e.g. 512M; found '" + budget + "'");
    if (failed(cg::applyMemoryBudget(*module, stageOptions, *bytes))) return 1;
  }
  if (std::string device = absl::GetFlag(FLAGS_device_memory); !device.empty() || isSpecified("device_memory")) {
    std::optional<int64_t> bytes = cg::parseByteSize(device);
    if (!bytes)
      return fail("--device-memory expects a positive size in bytes, or with K, M or G (KiB, "
                  "MiB, GiB), e.g. 512M; found '" + device + "'");
    std::string mode = absl::GetFlag(FLAGS_offload);
    if (mode != "planned" && mode != "sync")
      return fail("--offload expects planned or sync, found '" + mode + "'");
    if (command != "compile") return fail("--device-memory: `compile` only");
    if (failed(cg::applyDeviceMemory(*module, stageOptions, *bytes, mode))) return 1;
    if (int64_t drop = absl::GetFlag(FLAGS_test_only_drop_offload_wait); drop > 0) {
      // The pass reads it from the request (compiler/Codegen/Common/OffloadBuffers.cpp).
      auto request = (*module)->getAttrOfType<mlir::DictionaryAttr>("step.offload");
      if (!request) return fail("--test-only-drop-offload-wait: the budget offloads nothing");
      mlir::NamedAttrList entries(request);
      mlir::Builder builder(module->getContext());
      entries.set("test_drop_wait", builder.getI64IntegerAttr(drop));
      (*module)->setAttr("step.offload", entries.getDictionary(module->getContext()));
    }
  } else if (isSpecified("offload")) {
    return fail("--offload needs --device-memory (what must fit on the device)");
  }
  if (command == "interpret") {
    // The training executable's command line, after `--`, on the interpreter.
    stepc::interp::Options options;
    options.precision = interpPrecision;
    if (failed(runTrainStage(*module, stageOptions)) ||
        failed(cg::describeProgram(*module)))
      return 1;
    auto program = stepc::ref::InterpreterProgram::create(*module, options);
    if (failed(program)) return 1;
    std::vector<const char *> programArgs = {path.c_str()};
    for (size_t i = 3; i < positional.size(); ++i) programArgs.push_back(positional[i]);
    return stepc::rt::trainingMain(static_cast<int>(programArgs.size()), programArgs.data(),
                                   **program);
  }
  if (command == "run") {
    stepc::RunOptions run;
    run.steps = absl::GetFlag(FLAGS_steps);
    run.seed = absl::GetFlag(FLAGS_seed);
    run.initFrom = absl::GetFlag(FLAGS_init_from);
    run.saveParams = absl::GetFlag(FLAGS_save_params);
    run.data = absl::GetFlag(FLAGS_data);
    if (run.steps < 0) return fail("--steps must be >= 0");
    run.precision = interpPrecision;
    if (failed(runTrainStage(*module, stageOptions)) || failed(cg::describeProgram(*module)))
      return 1;
    return stepc::runInInterpreter(*module, run, llvm::outs());
  }
  // Every stage of the target up to --emit, in order; views print from the module as it is.
  // A CUDA executable also carries the CPU step, compiled from the shared `kernels` stage (from
  // `buffers` on, the tiling is each target's own).
  std::string dumpDir = absl::GetFlag(FLAGS_dump_phases_to);
  std::string output = absl::GetFlag(FLAGS_o);
  // The executable's default name; the stages drop the model op (step-drop-model).
  std::string modelName = model.getSymName().str();
  mlir::OwningOpRef<mlir::ModuleOp> cpuStep;
  std::string view;
  auto stages = cg::stagesOf(*target);
  for (size_t index = 0; index < stages.size(); ++index) {
    const cg::Stage &stage = *stages[index];
    bool wanted = &stage == emit || !dumpDir.empty();
    if (stage.kind == cg::StageKind::View && !wanted) continue;
    view.clear();
    if (llvm::StringRef(stage.name) == "buffers" && buildExecutable &&
        cg::targetInfo(*target).embedsCpuStep)
      cpuStep = mlir::OwningOpRef<mlir::ModuleOp>(module->clone());
    if (failed(cg::runStage(stage, *module, stageOptions, &view))) return 1;
    // The executable's description (read from the CPU step) carries the CUDA step's predicted
    // time, which the CUDA `buffers` stage adds.
    if (llvm::StringRef(stage.name) == "buffers" && cpuStep)
      if (mlir::Attribute description = (*module)->getAttr("step.program"))
        (*cpuStep)->setAttr("step.program", description);
    if (!dumpDir.empty()) {
      if (std::error_code ec = llvm::sys::fs::create_directories(dumpDir))
        return fail("cannot create '" + dumpDir + "': " + ec.message());
      llvm::SmallString<256> file(dumpDir);
      char name[64];
      std::snprintf(name, sizeof(name), "%02d.%s.%s", static_cast<int>(index), stage.name,
                    stage.extension);
      llvm::sys::path::append(file, name);
      if (stage.kind == cg::StageKind::View ? !writeText(view, file) : !writeModule(*module, file))
        return 1;
    }
    if (&stage == emit) break;
  }
  if (buildExecutable) {
    if (!cpuStep)
      return buildTrainingExecutable(*module, modelName, argv[0], mlir::ModuleOp(),
                                     stageOptions.gpuArch);
    cg::StageOptions cpuOptions = stageOptions;
    cpuOptions.target = cg::Target::CPU;
    for (const char *name : {"buffers", "llvm"})
      if (failed(cg::runStage(*cg::findStage(cg::Target::CPU, name), *cpuStep, cpuOptions)))
        return 1;
    return buildTrainingExecutable(*cpuStep, modelName, argv[0], *module, stageOptions.gpuArch);
  }
  if (emit->kind == cg::StageKind::View) return writeText(view, output.empty() ? "-" : output) ? 0 : 1;
  return writeModule(*module, output.empty() ? "-" : output) ? 0 : 1;
}
