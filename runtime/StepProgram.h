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
// from (seed, step)). Everything random inside the step (dropout) must be drawn from the step
// counter, never from hidden state.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_STEPPROGRAM_H
#define STEPC_RUNTIME_STEPPROGRAM_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/Init.h"
#include "runtime/Safetensors.h"
#include "runtime/Status.h"

namespace stepc::rt {

/// A trainable parameter (`step.param`).
struct ParamSpec {
  std::string name;            // full name; stacked layers are "repeat.param"
  std::vector<int64_t> shape;  // the stored shape, stacked dims included
  DType dtype = DType::kF32;   // the training loop holds F32 parameters
  InitSpec init;               // the initialiser (Init.h)
  int stackedDims = 0;         // leading dims that stack layers (step.repeat)
};

/// One optimizer-state tensor: slot `slot` ("m", "v", "momentum", ...) of parameter `param`.
/// Zero before the first step.
struct StateSpec {
  std::string slot;  // no '/'
  std::string param;
  std::vector<int64_t> shape;
  DType dtype = DType::kF32;
};

/// Where an input's data comes from (`step.input ... = source`).
enum class InputSource {
  kTokenStream,     // token_stream(vocab): tokens and next-token targets
  kClassification,  // classification(classes): features and labels
};

/// A model input (`step.input`); it fills two batch buffers (see the file comment).
struct InputSpec {
  std::string name;
  InputSource source = InputSource::kTokenStream;
  std::vector<int64_t> shape;  // tokens [batch, seq], or features [batch, ...]
  DType dtype = DType::kI32;   // of tokens (I32) or features (F32)
  int64_t vocab = 0;           // token_stream
  int64_t classes = 0;         // classification
};

/// Everything the host side needs to know about a step program.
struct ProgramInfo {
  std::string name;  // the model's name, e.g. "byte_lm" (the executable's name by default)
  /// The model's identity: checkpoints record it and refuse to load into another model. It
  /// should cover everything that makes a checkpoint meaningless elsewhere: the parameters and
  /// state (names, shapes, dtypes) and the training configuration.
  std::string fingerprint;
  std::vector<ParamSpec> params;
  std::vector<StateSpec> state;
  std::vector<InputSpec> inputs;
  /// Metrics a step reports beyond loss, lr and grad_norm (e.g. "sam_loss"), in order.
  std::vector<std::string> extraMetrics;
  /// Steps `train` runs when --steps is not given (e.g. the schedule's total); 0: 1000.
  int64_t defaultSteps = 0;
  /// Floating-point operations of one step, for `info` (0 if unknown).
  double flopsPerStep = 0;
  /// Bytes of working memory the step plans for, for `info` (0 if unknown).
  int64_t plannedBytes = 0;
  /// Kernels of the compiled step, for `info` (0 if unknown).
  int64_t kernelCount = 0;
  /// Names of the profiled calls (kernels and library GEMMs) by profile id (Profile.h).
  std::vector<std::string> kernelNames;
};

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

/// Metrics with every extra metric of `info` present (zero), in order.
StepMetrics emptyMetrics(const ProgramInfo &info);
/// Stores metric `name`: loss, lr, grad_norm, or the extra metric of that name.
void setMetric(StepMetrics &metrics, const std::string &name, double value);

class StepProgram {
 public:
  virtual ~StepProgram() = default;

  /// The program's description; the same object for the program's lifetime.
  virtual const ProgramInfo &info() const = 0;

  /// Where the step runs (--device: cpu, cuda or auto), for programs that have more than a CPU
  /// step; false leaves it to TrainingLoop's check for a CPU step (runtime/Device.h). Called
  /// before the first step.
  virtual bool selectDevice(const std::string &device, Status &status) {
    (void)device;
    (void)status;
    return false;
  }

  /// Brings params and state back into `buffers` for programs that keep them elsewhere between
  /// steps (the CUDA step keeps them on the device). Called before the host reads them:
  /// checkpoints, --save-params, the end of a run.
  virtual Status syncToHost(const StepBuffers &buffers) {
    (void)buffers;
    return {};
  }

  /// The threads the step may use (--threads; 0: the program's choice). Called before the
  /// first step.
  virtual Status setThreads(int threads) {
    (void)threads;
    return {};
  }

  /// Runs training step `step` (0 for the first) in place: reads the batch, updates params and
  /// state, fills `metrics`. An error stops training.
  virtual Status run(const StepBuffers &buffers, int64_t step, StepMetrics &metrics) = 0;

  /// The loss of the current params on a batch, without updating anything (for `eval`).
  /// Programs that cannot evaluate keep this default.
  virtual Status evaluate(const StepBuffers &buffers, int64_t step, double &loss) {
    (void)buffers, (void)step, (void)loss;
    return Status::error("this executable does not support eval");
  }
};

/// The names of an input's two batch buffers: {name, name.targets} or {name, name.labels}.
std::pair<std::string, std::string> batchBufferNames(const InputSpec &input);

/// Checks that `info` is something the training loop can drive: a fingerprint, unique non-empty
/// names, F32 params and state whose shapes are valid, state slots without '/' naming existing
/// parameters, inputs with valid shapes, dtypes and vocab/classes. The error names the culprit.
Status validateProgramInfo(const ProgramInfo &info);

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_STEPPROGRAM_H
