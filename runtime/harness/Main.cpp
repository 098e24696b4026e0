//===- Main.cpp - the training executable's main() -----------------------===//
#include "runtime/harness/Main.h"

#include <signal.h>

#include <cinttypes>
#include <cstdio>
#include <string>

#include "runtime/harness/Cli.h"
#include "runtime/harness/Reporter.h"
#include "runtime/harness/TrainingLoop.h"

namespace stepc::rt {
namespace {

std::string baseName(const char *path) {
  std::string name = path && *path ? path : "train";
  size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

std::string formatCount(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.0f", value);
  return text;
}

std::string formatBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  while (bytes >= 1024 && i < 4) {
    bytes /= 1024;
    ++i;
  }
  char text[64];
  std::snprintf(text, sizeof text, i ? "%.1f %s" : "%.0f %s", bytes, units[i]);
  return text;
}

const char *sourceText(const InputSpec &input, std::string &scratch) {
  scratch = input.source == InputSource::kTokenStream
                ? "token_stream(vocab = " + std::to_string(input.vocab) + ")"
                : "classification(classes = " + std::to_string(input.classes) + ")";
  return scratch.c_str();
}

volatile std::sig_atomic_t gInterrupted = 0;

extern "C" void onInterrupt(int) { gInterrupted = 1; }

// While alive, the first SIGINT or SIGTERM sets gInterrupted (training stops after the step
// with a checkpoint); SA_RESETHAND makes a second one end the process at once.
class InterruptHandler {
 public:
  InterruptHandler() {
    gInterrupted = 0;
    struct sigaction action = {};
    action.sa_handler = onInterrupt;
    action.sa_flags = SA_RESETHAND;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &oldInt_);
    ::sigaction(SIGTERM, &action, &oldTerm_);
  }
  ~InterruptHandler() {
    ::sigaction(SIGINT, &oldInt_, nullptr);
    ::sigaction(SIGTERM, &oldTerm_, nullptr);
  }

 private:
  struct sigaction oldInt_ = {}, oldTerm_ = {};
};

}  // namespace

std::string infoText(const StepProgram &program) {
  const ProgramInfo &info = program.info();
  std::string text = "model " + info.name + "\nfingerprint " + info.fingerprint + "\n";
  double total = 0, stateTotal = 0;
  std::string params;
  for (const ParamSpec &p : info.params) {
    uint64_t n = 0;
    (void)countElements(p.shape, n);
    total += static_cast<double>(n);
    params += "  " + p.name + " " + formatShape(p.shape) + " " + dtypeName(p.dtype) + " = " +
              p.init.kind + "\n";
  }
  double stateLocal = 0;  // a rank's, with --shard-optimizer
  for (const StateSpec &s : info.state) {
    uint64_t n = 0;
    (void)countElements(s.shape, n);
    stateTotal += static_cast<double>(n);
    stateLocal += static_cast<double>(n) / static_cast<double>(s.shards);
  }
  text += "parameters " + formatCount(total) + " (" + formatBytes(4 * total) + ")\n" + params;
  text += "optimizer state " + formatCount(stateTotal) + " (" + formatBytes(4 * stateTotal) +
          ") in " + std::to_string(info.state.size()) + " tensors" +
          (info.shardedOver > 0 ? "; each of the " + std::to_string(info.shardedOver) +
                                      " ranks keeps " + formatBytes(4 * stateLocal) +
                                      " of it (--shard-optimizer)"
                                : "") +
          "\n";
  text += "inputs\n";
  std::string scratch;
  for (const InputSpec &in : info.inputs)
    text += "  " + in.name + " " + formatShape(in.shape) + " " + dtypeName(in.dtype) + " = " +
            sourceText(in, scratch) + "\n";
  // Model FLOPs (3 x the forward's contractions: what MFU is taken against), then everything
  // the step executes (SAM's second pass, recomputation and elementwise work included).
  text += "FLOPs per step " +
          (info.flopsPerStep > 0 ? formatCount(info.flopsPerStep) : std::string("unknown")) + "\n";
  if (info.samFlopsPerStep > 0)
    text += "SAM's second pass FLOPs per step " + formatCount(info.samFlopsPerStep) +
            " (beside the model FLOPs; MFU leaves it out)\n";
  if (info.executedFlopsPerStep > 0)
    text += "executed FLOPs per step " + formatCount(info.executedFlopsPerStep) + "\n";
  text += "planned memory " +
          (info.plannedBytes > 0 ? formatBytes(static_cast<double>(info.plannedBytes))
                                 : std::string("unknown")) +
          "\n";
  if (!info.memoryBudget.empty()) text += "memory budget: " + info.memoryBudget + "\n";
  for (const std::string &line : info.repeatMemory) text += "backward: " + line + "\n";
  if (info.sampleTemporaryBytes >= 0)
    text += "sample: a forward-only program (no backward, no optimizer), its temporaries " +
            formatBytes(static_cast<double>(info.sampleTemporaryBytes)) +
            " of the same arena\n";
  if (info.sampleStepTemporaryBytes >= 0)
    text += "sample, incremental: one position per token (no window recomputed), its "
            "temporaries " + formatBytes(static_cast<double>(info.sampleStepTemporaryBytes)) +
            ", its state " + formatBytes(static_cast<double>(std::max<int64_t>(info.sampleStateBytes, 0))) +
            "\n";
  else if (!info.sampleStepUnavailable.empty())
    text += "sample, incremental: none, the whole window is recomputed per token: " +
            info.sampleStepUnavailable + "\n";
  if (info.dataParallelMicroBatches > 0)
    text += "data-parallel: " +
            (info.shardedOver > 0
                 ? "`mpirun -np " + std::to_string(info.shardedOver) +
                       "` (the ranks the optimizer state is split over) splits the " +
                       std::to_string(info.dataParallelMicroBatches) + " micro-batches"
                 : "mpirun -np N splits the " + std::to_string(info.dataParallelMicroBatches) +
                       " micro-batches (N a power of two dividing them)") +
            "; each step all-reduces " +
            std::to_string(info.allReduces) + (info.allReduces == 1 ? " buffer, " : " buffers, ") +
            formatBytes(static_cast<double>(info.allReduceBytes)) +
            (info.reduceScatters > 0
                 ? " and reduce-scatters " + std::to_string(info.reduceScatters) + ", " +
                       formatBytes(static_cast<double>(info.reduceScatterBytes)) +
                       " (each rank receives the sums of its block of rows only)"
                 : "") +
            ", in a fixed tree" +
            (info.overlappedReductions > 0
                 ? ", each started as soon as its sum exists, overlapping the rest of the "
                   "backward"
                 : "") +
            (info.allGathers > 0 ? "; then all-gathers " + std::to_string(info.allGathers) +
                                       " updated parameters, " +
                                       formatBytes(static_cast<double>(info.allGatherBytes)) +
                                       (info.deferredGathers > 0
                                            ? " (left running when the step returns, a layer "
                                              "at a time: the next step waits where it reads "
                                              "each one)"
                                            : "")
                                 : "") +
            (info.normShareGathers > 0
                 ? " and " + std::to_string(info.normShareGathers) +
                       " of the gradient norms' partial sums (a float per rank and parameter, "
                       "per column with AGC)"
                 : "") +
            "\n";
  if (!info.offloadSummary.empty()) text += "device memory: " + info.offloadSummary + "\n";
  if (!info.offload.empty()) {
    // What streaming costs at a few links' bandwidths: the bound the overlap works against.
    double moved = static_cast<double>(info.offloadFetchBytes + info.offloadStoreBytes);
    char line[320];
    std::snprintf(line, sizeof line,
                  "offload: %zu buffers in host memory (%s), %s; each step reads %s and writes %s "
                  "of them, %.1f ms at 2 GB/s (NVMe), %.2f ms at 25 GB/s (PCIe 4 x16), %.2f ms "
                  "at 50 GB/s (PCIe 5 x16)\n",
                  info.offload.size(), formatBytes(static_cast<double>(info.offloadHostBytes)).c_str(),
                  info.offloadMode == "sync" ? "copied in when used and back after (sync)"
                                             : "double-buffered, the next layer's transfer "
                                               "overlapping this layer's work (planned)",
                  formatBytes(static_cast<double>(info.offloadFetchBytes)).c_str(),
                  formatBytes(static_cast<double>(info.offloadStoreBytes)).c_str(),
                  moved / 2e9 * 1e3, moved / 25e9 * 1e3, moved / 50e9 * 1e3);
    text += line;
  }
  text += "kernels " +
          (info.kernelCount > 0 ? std::to_string(info.kernelCount) : std::string("unknown")) +
          "\n";
  // The compiler's roofline of the CUDA step (PredictStepTime.cpp), to judge a GPU run by.
  if (info.predictedStepSeconds > 0) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "predicted CUDA step %.3f ms on %s (roofline at data-sheet peaks; %.3f ms of "
                  "it for %lld launches, each a node of the step's CUDA graph)\n",
                  info.predictedStepSeconds * 1e3, info.predictionDevice.c_str(),
                  info.predictedLaunchSeconds * 1e3,
                  static_cast<long long>(info.predictedLaunches));
    text += line;
  }
  if (info.predictedLinkBytesPerSecond > 0) {
    char line[320];
    std::snprintf(line, sizeof line,
                  "predicted CUDA offload: the transfers take %.3f ms over the host link at "
                  "%.1f GB/s (--link-bandwidth), %.3f ms of them exposed (the step waits), %.1f%% "
                  "of the predicted step\n",
                  info.predictedTransferSeconds * 1e3, info.predictedLinkBytesPerSecond / 1e9,
                  info.predictedExposedSeconds * 1e3,
                  info.predictedStepSeconds > 0
                      ? 100 * info.predictedExposedSeconds / info.predictedStepSeconds
                      : 0.0);
    text += line;
  }
  // What GPU this machine has, through the CUDA driver if there is one (runtime/hal/Device.h).
  text += "gpu " + program.describeGpu() + "\n";
  if (std::string gemm = program.describeGemm(); !gemm.empty()) text += "cpu gemm " + gemm + "\n";
  return text;
}

int trainingMain(int argc, const char *const *argv, StepProgram &program, FILE *out, FILE *err) {
  std::string name = baseName(argc > 0 ? argv[0] : nullptr);
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  CommandLine cl;
  if (Status s = parseCommandLine(args, cl); !s.ok()) {
    std::fprintf(err, "%s: error: %s\nRun '%s --help' for usage.\n", name.c_str(),
                 s.message().c_str(), name.c_str());
    return kUsageExitCode;
  }
  Ranks ranks = program.ranks();
  // Every rank of a data-parallel run says what failed on it, by its rank.
  std::string who = ranks.size > 1 ? " (rank " + std::to_string(ranks.rank) + " of " +
                                         std::to_string(ranks.size) + ")"
                                   : "";
  auto fail = [&](const Status &s) {
    std::fprintf(err, "%s%s: error: %s\n", name.c_str(), who.c_str(), s.message().c_str());
    return kFailureExitCode;
  };
  // Under mpirun, rank 0 alone answers info, eval and sample and reports training (every rank
  // computes the same); the others' errors still print.
  FILE *quiet = ranks.size > 1 && ranks.rank != 0 ? std::fopen("/dev/null", "w") : nullptr;
  if (quiet && cl.command != Command::kTrain) out = quiet;
  struct CloseQuiet {
    FILE *f;
    ~CloseQuiet() {
      if (f) std::fclose(f);
    }
  } closeQuiet{quiet};
  switch (cl.command) {
    case Command::kHelp:
      std::fputs(usageText(name, cl.helpFor).c_str(), out);
      return 0;
    case Command::kInfo: {
      if (Status s = validateProgramInfo(program.info()); !s.ok()) return fail(s);
      std::fputs(infoText(program).c_str(), out);
      return 0;
    }
    case Command::kEval: {
      double loss = 0;
      std::string split;
      if (Status s = evaluate(program, cl.eval, loss, &split); !s.ok()) return fail(s);
      std::fprintf(out, "eval loss %.6f over %" PRId64 " batches (%s)\n", loss, cl.eval.batches,
                   split.c_str());
      return 0;
    }
    case Command::kSample: {
      if (Status s = sample(program, cl.sample, out, err); !s.ok()) return fail(s);
      return 0;
    }
    case Command::kTrain: {
      ReporterOptions options;
      options.out = err;
      options.metricsPath = cl.metricsPath;
      // Rank 0 reports (the launch line comes from train(), once the device is chosen).
      if (ranks.size > 1 && ranks.rank != 0) {
        if (quiet) options.out = quiet;
        options.mode = ReporterOptions::Mode::kQuiet;
        options.metricsPath.clear();
      }
      Reporter reporter(options);
      InterruptHandler handler;
      cl.train.interrupted = &gInterrupted;
      if (Status s = train(program, cl.train, reporter); !s.ok()) {
        (void)reporter.finish();
        fail(s);
        return gInterrupted ? kInterruptedExitCode : kFailureExitCode;
      }
      return 0;
    }
  }
  return kFailureExitCode;
}

}  // namespace stepc::rt
