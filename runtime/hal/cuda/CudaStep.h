//===- CudaStep.h - calls of a compiled CUDA step ---------------*- C++ -*-===//
//
// The CUDA twin of CompiledProgram::call. Each entry point's buffers get device mirrors
// (allocated once); the batch (through a pinned staging buffer) and the step counter are
// copied in for every call, the packed entry point enqueues the step on the session's stream
// with device pointers, the results come back, and the stream is synchronised once. Then the
// session's recorded error, if any, is the call's.
//
// Params and state: for a resident entry (the train step) they are copied to the device on the
// first call and stay there, updated in place step after step; syncToHost brings them back
// when the host reads them (checkpoints, --save-params, the end of a run). For other entries
// (eval) they go in on every call and are not copied back.
//
// Offloaded params and state (--device-memory) have no device mirror: they live in the pinned
// host tier (HostTier.h), which the first call fills and syncToHost reads back, and the plan
// streams their layers through arena slots on a copy stream.
//
// Two events around the step's launches time it on the device (lastDeviceMs; the training
// loop reports it as the metric device_ms).
//
// The step itself is captured as one CUDA graph and replayed: the first call of an entry point
// runs its launches directly (the arena is allocated and cuBLASLt initialised then, which capture
// would not allow), the second is captured into a graph and launched, later calls only launch
// that graph (its buffers are the same device mirrors every step; the host plan is not run
// again). If capture fails, the entry runs without a graph from then on. STEPC_CUDA_GRAPH=0
// turns graphs off.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_CUDA_CUDASTEP_H
#define STEPC_RUNTIME_CUDA_CUDASTEP_H

#include <map>
#include <memory>
#include <vector>

#include "runtime/formats/ProgramDescription.h"
#include "runtime/harness/StepProgram.h"
#include "runtime/hal/cuda/Driver.h"
#include "runtime/hal/cuda/HostTier.h"

namespace stepc::rt::cuda {

using Entry = void (*)(void **);

class CudaStep {
 public:
  ~CudaStep();
  /// Runs `fn` (an entry described by `entry`) on the device; results land in `results` (one
  /// host vector per result binding, as CompiledProgram's scratch buffers).
  Status call(const ProgramInfo &info, const EntryDescription &entry, Entry fn,
              const StepBuffers &buffers, int64_t step, bool resident,
              std::vector<std::vector<float>> &results);
  /// Copies the params and state a resident entry keeps on the device into `buffers`.
  Status syncToHost(Entry fn, const StepBuffers &buffers);
  /// The device time of the last call's step (between two events recorded on the stream
  /// around its launches or graph), in ms; -1 before the first call.
  double lastDeviceMs() const { return deviceMs_; }

 private:
  struct Mirrors {
    const EntryDescription *entry = nullptr;
    std::vector<std::pair<CUdeviceptr, size_t>> device;  // by slot: pointer, bytes
    std::vector<std::pair<void *, size_t>> pinned;       // by slot, batches only
    bool resident = false;                               // params and state live on the device
    int calls = 0;
    bool graphDisabled = false;
    CUgraphExec graph = nullptr;
  };
  Status mirror(Mirrors &m, size_t slot, size_t bytes, CUdeviceptr &out);
  void *pinned(Mirrors &m, size_t slot, size_t bytes);
  /// Runs fn(args) on the stream: directly, captured, or as the replay of its graph.
  Status launch(Mirrors &m, Entry fn, std::vector<void *> &args);
  /// The offload id of a param or state binding, or -1 (HostTier::idOf).
  int offloadId(const Binding &b) const;
  std::map<Entry, Mirrors> entries_;
  std::unique_ptr<HostTier> tier_;  // --device-memory: the offloaded buffers, pinned
  CUevent start_ = nullptr, end_ = nullptr;
  double deviceMs_ = -1;
};

}  // namespace stepc::rt::cuda

#endif  // STEPC_RUNTIME_CUDA_CUDASTEP_H
