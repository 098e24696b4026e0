//===- ProgramInfo.h - what a step program works on -------------*- C++ -*-===//
//
// The description of a training step's tensors: its parameters (with their initialisers),
// optimizer state and inputs, and what it reports. The compiler writes it into every executable
// (ProgramDescription.h), the interpreter builds it from the model; the training harness
// (runtime/harness/StepProgram.h) allocates, initialises, checkpoints and feeds buffers from it.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_FORMATS_PROGRAMINFO_H
#define STEPC_RUNTIME_FORMATS_PROGRAMINFO_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/base/Init.h"
#include "runtime/base/Status.h"
#include "runtime/formats/Safetensors.h"

namespace stepc::rt {

/// The number of elements of a tensor of `shape`.
inline int64_t elementCount(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

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
  std::vector<int64_t> shape;  // the whole tensor's (what checkpoints hold)
  DType dtype = DType::kF32;
  /// --shard-optimizer: the first axis is cut into this many blocks and the step's buffer is
  /// this rank's block, rows [rank·n/shards, (rank+1)·n/shards); 1: the whole tensor.
  int64_t shards = 1;
};

/// The shape of the step's buffer of `s`: its block (StateSpec::shards).
inline std::vector<int64_t> localShape(const StateSpec &s) {
  std::vector<int64_t> shape = s.shape;
  if (s.shards > 1 && !shape.empty()) shape[0] /= s.shards;
  return shape;
}

/// Where an input's data comes from (`step.input ... = source`).
enum class InputSource {
  kTokenStream,     // token_stream(vocab): tokens and next-token targets
  kClassification,  // classification(classes): features and labels
};

/// A model input (`step.input`); it fills two batch buffers (runtime/harness/StepProgram.h says
/// which).
struct InputSpec {
  std::string name;
  InputSource source = InputSource::kTokenStream;
  std::vector<int64_t> shape;  // tokens [batch, seq], or features [batch, ...]
  DType dtype = DType::kI32;   // of tokens (I32) or features (F32)
  int64_t vocab = 0;           // token_stream
  int64_t classes = 0;         // classification
};

/// Everything the host side needs to know about a step program.
/// A parameter or optimizer-state buffer the step keeps in host memory (the far tier) and streams
/// through the device layer by layer (stepc compile --device-memory;
/// compiler/Codegen/Common/OffloadBuffers.cpp). Its transfer calls name it by its index in
/// ProgramInfo::offload.
struct OffloadSpec {
  bool state = false;  // ProgramInfo::state[index]; else ProgramInfo::params[index]
  int index = 0;
  int64_t layers = 0;      // the leading (stacked-layer) axis
  int64_t layerBytes = 0;  // one layer, contiguous
};

struct ProgramInfo {
  std::string name;  // the model's name, e.g. "byte_lm_residual" (the executable's name by default)
  /// The model's identity: checkpoints record it and refuse to load into another model. It
  /// should cover everything that makes a checkpoint meaningless elsewhere: the parameters and
  /// state (names, shapes, dtypes) and the training configuration.
  std::string fingerprint;
  /// The training configuration the step was compiled with (the effective step.config as
  /// "key=value; ..."); checkpoints record it, so a resume says what changed. May be empty.
  std::string training;
  std::vector<ParamSpec> params;
  std::vector<StateSpec> state;
  std::vector<InputSpec> inputs;
  /// Metrics a step reports beyond loss, lr and grad_norm (e.g. "sam_loss"), in order.
  std::vector<std::string> extraMetrics;
  /// Steps `train` runs when --steps is not given (e.g. the schedule's total); 0: 1000.
  int64_t defaultSteps = 0;
  /// Floating-point operations of one step, for `info` (0 if unknown).
  double flopsPerStep = 0;          // model FLOPs: 3 x the forward's contractions (MFU's)
  double executedFlopsPerStep = 0;  // all the compiled step computes (SAM, recompute); 0: unknown
  double samFlopsPerStep = 0;       // SAM's second pass's contractions (not in flopsPerStep)
  /// The temporaries of `sample`'s forward-only program (@sample_logits), in the arena the step
  /// programs share; -1: the model has none.
  int64_t sampleTemporaryBytes = -1;
  /// The same for incremental generation (@sample_step), and the state it carries; -1: none.
  int64_t sampleStepTemporaryBytes = -1;
  int64_t sampleStateBytes = -1;
  std::string sampleStepUnavailable;  // a language model without @sample_step: the op why
  /// What the backward keeps of each repeat (stored inputs and GEMM outputs, or reversible),
  /// one line per repeat of the step, for `info`.
  std::vector<std::string> repeatMemory;
  /// What --memory-budget chose and the plan it gives (compiler/Codegen/MemoryBudget.h); empty
  /// without a budget.
  std::string memoryBudget;
  /// The roofline prediction of the CUDA step (--step-predict-step-time); 0: none.
  double predictedStepSeconds = 0;
  double predictedLaunchSeconds = 0;  // of which launch costs
  int64_t predictedLaunches = 0;
  std::string predictionDevice;       // "sm_90 (H100 SXM)"
  /// --device-memory on a CUDA target: the offload's transfers over the host link at
  /// predictedLinkBytesPerSecond (--link-bandwidth), and the part of them the step waits for
  /// (the plan's two streams simulated with the roofline's kernel times).
  double predictedLinkBytesPerSecond = 0;
  double predictedTransferSeconds = 0;
  double predictedExposedSeconds = 0;
  /// Bytes of working memory the step plans for, for `info` (0 if unknown).
  int64_t plannedBytes = 0;
  /// Kernels of the compiled step, for `info` (0 if unknown).
  int64_t kernelCount = 0;
  /// Data-parallel (compiled with --data-parallel): the micro-batches the ranks split (0: a
  /// one-process step, which refuses to run under mpirun -np N>1), the all-reduces one step
  /// issues and the bytes they reduce.
  int64_t dataParallelMicroBatches = 0;
  int64_t allReduces = 0;
  int64_t allReduceBytes = 0;
  /// Of those, the reductions that start as soon as their sums exist, on the runtime's
  /// reduction thread, overlapping the rest of the backward (0: all run after it).
  int64_t overlappedReductions = 0;
  /// --shard-optimizer: the gradients reduce-scattered instead (each rank receives only the
  /// sums of its block of rows) and their bytes; started as the reductions are.
  int64_t reduceScatters = 0;
  int64_t reduceScatterBytes = 0;
  /// --shard-optimizer: the ranks the state is split over (0: none; a run needs exactly that
  /// many), and the all-gathers of the updated parameters one step issues and their bytes.
  int64_t shardedOver = 0;
  int64_t allGathers = 0;
  int64_t allGatherBytes = 0;
  /// How many of those the step leaves running when it returns, for the next step to wait for
  /// where it reads each parameter (the CPU's, with the overlapped reductions).
  int64_t deferredGathers = 0;
  /// The gathers of the gradient norms' shares (--shard-optimizer: each rank's blocks' sums of
  /// squares, a float per parameter and rank).
  int64_t normShareGathers = 0;
  /// Offload (empty: everything on the device). `offloadMode` is "planned" (double-buffered,
  /// the next layer's transfer overlapping this layer's work) or "sync" (copied in when used,
  /// back after); `offloadTransferBytes` the bytes one step moves each way as planned;
  /// `offloadSummary` what --device-memory chose and why.
  std::vector<OffloadSpec> offload;
  std::string offloadMode;
  int64_t offloadFetchBytes = 0;
  int64_t offloadStoreBytes = 0;
  int64_t offloadHostBytes = 0;
  std::string offloadSummary;
  /// Names of the profiled calls (kernels and library GEMMs) by profile id (Profile.h).
  std::vector<std::string> kernelNames;
  /// By the same id (empty if unknown): the bytes of the buffers one call reads and writes
  /// (each once) and a GEMM's FLOPs (0 for the rest), for the profile's bytes/s and FLOP/s.
  std::vector<double> kernelBytes;
  std::vector<double> kernelFlops;
};

/// The names of an input's two batch buffers: {name, name.targets} or {name, name.labels}.
std::pair<std::string, std::string> batchBufferNames(const InputSpec &input);

/// Checks that `info` is something the training loop can drive: a fingerprint, unique non-empty
/// names, F32 params and state whose shapes are valid, state slots without '/' naming existing
/// parameters, inputs with valid shapes, dtypes and vocab/classes. The error names the culprit.
Status validateProgramInfo(const ProgramInfo &info);

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_FORMATS_PROGRAMINFO_H
