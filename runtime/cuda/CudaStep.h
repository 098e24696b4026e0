//===- CudaStep.h - one call of a compiled CUDA step ------------*- C++ -*-===//
//
// The CUDA twin of CompiledProgram::call: the step's buffers get device mirrors (allocated
// once), params, state, batch (through pinned staging buffers) and the step counter are copied
// in, the packed entry point
// enqueues the step on the session's stream with device pointers, and params and state
// (updated in place on the device) and the results come back. One synchronisation per step;
// then the session's recorded error, if any, is the step's.
//
// The step itself is captured as one CUDA graph and replayed: the first call of an entry point
// runs its launches directly (the arena is allocated and cuBLAS initialised then, which capture
// would not allow), the second is captured into a graph and launched, later calls only launch
// that graph (its buffers are the same device mirrors every step; the host plan is not run
// again). If capture fails, the entry runs without a graph from then on. STEPC_CUDA_GRAPH=0
// turns graphs off.
//
// Params and state go both ways every step: simple and always right (the host may change them
// between steps: init, resume, --init-from), but it moves them over PCIe twice per step.
// Keeping them on the device between steps is the next step.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_CUDA_CUDASTEP_H
#define STEPC_RUNTIME_CUDA_CUDASTEP_H

#include <map>
#include <vector>

#include "runtime/ProgramDescription.h"
#include "runtime/StepProgram.h"
#include "runtime/cuda/Driver.h"

namespace stepc::rt::cuda {

class CudaStep {
 public:
  ~CudaStep();
  /// Runs `fn` (an entry described by `entry`) on the device; results land in `results` (one
  /// host vector per result binding, as CompiledProgram's scratch buffers).
  Status call(const ProgramInfo &info, const EntryDescription &entry, void (*fn)(void **),
              const StepBuffers &buffers, int64_t step,
              std::vector<std::vector<float>> &results);

 private:
  Status mirror(size_t slot, size_t bytes, CUdeviceptr &out);
  /// A pinned host staging buffer for slot (batches), or null if none can be had.
  void *pinned(size_t slot, size_t bytes);
  std::vector<std::pair<void *, size_t>> pinned_;  // by slot
  /// Runs fn(args) on the stream: directly, captured, or as the replay of its graph.
  Status launch(void (*fn)(void **), std::vector<void *> &args);
  std::vector<std::pair<CUdeviceptr, size_t>> device_;  // by slot: pointer, bytes
  struct Graph {
    int calls = 0;
    bool disabled = false;
    CUgraphExec exec = nullptr;
  };
  std::map<void (*)(void **), Graph> graphs_;  // by entry point
};

}  // namespace stepc::rt::cuda

#endif  // STEPC_RUNTIME_CUDA_CUDASTEP_H
