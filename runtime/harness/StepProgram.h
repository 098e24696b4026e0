//===- StepProgram.h - the training step the executable drives --*- C++ -*-===//
//
// The seam between the training executable's host side (TrainingLoop.h: initialisation, data,
// checkpoints, progress) and however the step itself is computed: the compiled CPU or CUDA step,
// or a hand-written one in a test. A StepProgram describes the tensors it works on and runs one
// training step in place on host buffers that the caller owns:
//
//   params   one buffer per ParamSpec, updated in place (f32)
//   state    one buffer per StateSpec (optimizer state: Adam's m and v, momentum...), updated in
//            place, zero before the first step
//   batch    two buffers per InputSpec, in InputSpec order:
//              token_stream(vocab)       [name]         tokens, i32, `shape` ([batch, seq])
//                                        [name.targets] next tokens, i32, `shape`
//              classification(classes)   [name]         features, f32, `shape` ([batch, ...])
//                                        [name.labels]  labels in [0, classes), i32, [batch]
//
// A step is a pure function of (params, state, batch, step): the training loop relies on that
// for bit-identical resume (the checkpoint holds params, state and the step; the batch is drawn
// from (seed, step)). Everything random inside the step (dropout, jitter) must be drawn from the step
// counter, never from hidden state.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_STEPPROGRAM_H
#define STEPC_RUNTIME_STEPPROGRAM_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/base/Status.h"
#include "runtime/formats/ProgramInfo.h"

namespace stepc::rt {

/// A named host tensor the caller owns. Element type F32 or I32.
struct TensorBuffer {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  void *data = nullptr;

  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  float *f32() const { return dtype == DType::kF32 ? static_cast<float *>(data) : nullptr; }
  int32_t *i32() const { return dtype == DType::kI32 ? static_cast<int32_t *>(data) : nullptr; }
};

/// The buffers of one step, in the order of ProgramInfo's params, state and inputs (two batch
/// buffers per input).
struct StepBuffers {
  std::vector<TensorBuffer> params;
  std::vector<TensorBuffer> state;
  std::vector<TensorBuffer> batch;
};

/// What one step reports. `extra` holds ProgramInfo::extraMetrics, by name, in that order.
struct StepMetrics {
  double loss = 0, lr = 0, gradNorm = 0;
  std::vector<std::pair<std::string, double>> extra;
};

/// The data-parallel run this process is one rank of (one rank: the defaults).
struct Ranks {
  int rank = 0, size = 1;
  std::string launcher;  // what started the ranks, e.g. "Open MPI v4.1.4"; empty for one
  std::string device = "the CPU";  // where each rank's step runs
  std::string reduction;           // how the ranks' sums meet (setAllReduce)
};

/// Metrics with every extra metric of `info` present (zero), in order.
StepMetrics emptyMetrics(const ProgramInfo &info);
/// Stores metric `name`: loss, lr, grad_norm, or the extra metric of that name.
void setMetric(StepMetrics &metrics, const std::string &name, double value);

class StepProgram {
 public:
  virtual ~StepProgram() = default;

  /// The program's description; the same object for the program's lifetime.
  virtual const ProgramInfo &info() const = 0;

  /// Where the step runs (--device: cpu, cuda or auto). Called before the first step. The
  /// default is a step that runs on the CPU only: cpu and auto run it, cuda is refused. The
  /// executors (runtime/hal) override it to probe the GPU and say what is there.
  virtual Status selectDevice(const std::string &device) {
    if (device == "cpu" || device == "auto") return {};
    if (device == "cuda")
      return Status::error("this step runs on the CPU only (compile it with --target=cuda)");
    return Status::error("expected cpu, cuda or auto, found '" + device + "'");
  }

  /// The GPU this machine has, for `info` ("NVIDIA H200 (sm_90, 139.8 GiB)" or "none (why)");
  /// the default does not probe.
  virtual std::string describeGpu() const { return "not probed (a CPU-only step program)"; }

  /// Brings params and state back into `buffers` for programs that keep them elsewhere between
  /// steps (the CUDA step keeps them on the device). Called before the host reads them:
  /// checkpoints, --save-params, the end of a run.
  virtual Status syncToHost(const StepBuffers &buffers) {
    (void)buffers;
    return {};
  }

  /// Where the training loop must keep parameter (or, with `state`, optimizer-state) tensor
  /// `index` between steps: a program that streams it from host memory (stepc compile
  /// --device-memory) lends its host copy; null: the caller's own memory.
  virtual float *hostTensor(bool state, int index) {
    (void)state;
    (void)index;
    return nullptr;
  }
  /// Where the offloaded tensors live, for `info` ("" without offload).
  virtual std::string describeOffload() const { return ""; }
  /// The library the CPU step's GEMMs run on, for `info` ("" for the interpreter).
  virtual std::string describeGemm() const { return ""; }

  /// The threads the step may use (--threads; 0: the program's choice). Called before the
  /// first step.
  virtual Status setThreads(int threads) {
    (void)threads;
    return {};
  }

  /// How a data-parallel step sums over its ranks (--all-reduce): "tree", the fixed tree (the
  /// bits of one process); "fast", the communication library's own all-reduce; "" the
  /// device's default. One rank has nothing to sum. Called after selectDevice, before the
  /// first step.
  virtual Status setAllReduce(const std::string &mode) {
    (void)mode;
    return {};
  }

  /// Runs training step `step` (0 for the first) in place: reads the batch, updates params and
  /// state, fills `metrics`. An error stops training.
  virtual Status run(const StepBuffers &buffers, int64_t step, StepMetrics &metrics) = 0;

  /// Every rank's block of `whole` (ranks().size blocks of `blockElements` floats, rank r's
  /// at block r, this rank's already in place) on every rank: how a checkpoint gets the whole
  /// of a state tensor the step shards (--shard-optimizer). Every rank calls it, in the same
  /// order; `id` names the tensor (the ranks check they agree). One rank: nothing to do.
  virtual Status gatherBlocks(float *whole, int64_t blockElements, int64_t id) {
    (void)whole;
    (void)blockElements;
    (void)id;
    return {};
  }

  /// The ranks this program's step reduces over. Each rank fills its slice of the global batch
  /// (rows rank·B ... of size·B, B the program's batch) and only rank 0 reports and writes.
  virtual Ranks ranks() const { return {}; }

  /// The loss of the current params on a batch, without updating anything (for `eval`).
  /// The gradients of the last step run, one per parameter in ProgramInfo order, for a
  /// program compiled with --export-grads; null otherwise.
  virtual const std::vector<std::vector<float>> *lastGradients() const { return nullptr; }

  /// A language model's next-token logits for the token batch in `buffers` (row r's context in
  /// batch row r from position 0; the logits at `position` predict the token after it):
  /// [batch, vocab] f32, row-major, into `logits`. For `sample`. Programs that cannot sample
  /// keep these defaults.
  virtual bool canSample() const { return false; }
  virtual Status sampleLogits(const StepBuffers &buffers, int64_t position,
                              std::vector<float> &logits) {
    (void)buffers;
    (void)position;
    (void)logits;
    return Status::error("this executable cannot sample: its model is not a next-token "
                         "language model (one token input whose targets its cross-entropy "
                         "scores)");
  }

  /// Incremental generation: feeds each row's token `tokens[r]` at `position` (0, 1, ... in
  /// order since the last resetSampleState) and gives the logits after it, as sampleLogits
  /// would for the window of every token fed. Programs without it keep these defaults.
  virtual bool canSampleIncrementally() const { return false; }
  virtual Status resetSampleState() { return Status::error("no incremental generation"); }
  virtual Status sampleStep(const StepBuffers &buffers, const std::vector<int32_t> &tokens,
                            int64_t position, std::vector<float> &logits) {
    (void)buffers, (void)tokens, (void)position, (void)logits;
    return Status::error("no incremental generation");
  }

  /// Programs that cannot evaluate keep this default (and canEvaluate's).
  virtual bool canEvaluate() const { return false; }
  virtual Status evaluate(const StepBuffers &buffers, int64_t step, double &loss) {
    (void)buffers, (void)step, (void)loss;
    return Status::error("this executable does not support eval");
  }
};


}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_STEPPROGRAM_H
