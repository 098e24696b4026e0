//===- HostTier.h - planned offload on the GPU: pinned host tier and copy stream -*- C++ -*-===//
//
// A CUDA step compiled with --device-memory keeps some stacked parameters and optimizer state
// in host memory and streams them through arena slots a layer at a time
// (compiler/Codegen/Common/OffloadBuffers.cpp plans where; --step-cuda-host points the plan's
// transfer calls here). The host tier is one pinned allocation per offloaded buffer
// (cuMemHostAlloc), so the copies are DMA and asynchronous; they run on a copy stream of
// their own beside the step's compute stream:
//
//   fetch(id, layer, slot)  the compute stream records an event the copy stream waits for (the
//                           slot's previous kernels are done), then host -> slot on the copy
//                           stream, then an event marks the copy done;
//   store(id, layer, slot)  the same, slot -> host;
//   wait(id, layer)         the compute stream waits for that layer's fetch to be done;
//   flush()                 the compute stream waits for every transfer issued.
//
// The copy stream runs its transfers in issue order, as the CPU's I/O thread does, so the
// plan's reasoning (a slot is written back before it is refilled) holds on both targets, and
// the emulator's race check (--target=cuda-emulated) checks the same semantics. Events, not
// host synchronisation, order the streams, so the step is still captured as one CUDA graph:
// the copy stream joins the capture through its first wait on the compute stream's event,
// and the step's end joins it back (endStep). Event i of a step is the i-th transfer's, the
// same every step, so the captured graph and the direct run issue the same dependencies.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_CUDA_HOSTTIER_H
#define STEPC_RUNTIME_CUDA_HOSTTIER_H

#include <memory>
#include <vector>

#include "runtime/base/Status.h"
#include "runtime/formats/ProgramInfo.h"
#include "runtime/hal/cpu/UnrankedMemRef.h"
#include "runtime/hal/cuda/Driver.h"

namespace stepc::rt::cuda {

class HostTier {
 public:
  /// Pinned host memory for each buffer of `info.offload` (non-empty), and the copy stream.
  static Status open(const ProgramInfo &info, std::unique_ptr<HostTier> &out);
  ~HostTier();

  /// The offload id of params[index] (or state[index]), or -1 when it is not offloaded.
  int idOf(bool state, int index) const;
  /// Buffer `id`, whole, in the pinned host tier.
  float *tensor(int id) const { return buffers_[static_cast<size_t>(id)].host; }
  size_t bytes(int id) const { return buffers_[static_cast<size_t>(id)].bytes; }

  /// Around the step's launches: the transfer count restarts; after, the compute stream waits
  /// for every transfer (the copy stream joins it, as a captured graph requires).
  void beginStep();
  void endStep();

  // The compiled step's calls (device addresses of arena slots).
  void fetch(int64_t id, int64_t layer, CUdeviceptr slot, int64_t elements);
  void store(int64_t id, int64_t layer, CUdeviceptr slot, int64_t elements);
  void wait(int64_t id, int64_t layer);
  void flush();

 private:
  struct Buffer {
    bool state = false;
    int index = 0;
    int64_t layers = 0, layerBytes = 0;
    size_t bytes = 0;
    float *host = nullptr;
  };
  HostTier() = default;
  bool check(int64_t id, int64_t layer, int64_t elements);
  // Transfer `n`'s events: `ready` on the compute stream before it, `done` on the copy stream.
  bool events(size_t n);
  void transfer(bool toDevice, int64_t id, int64_t layer, CUdeviceptr slot, int64_t elements);

  std::vector<Buffer> buffers_;
  std::vector<std::vector<size_t>> fetchOf_;  // by id, layer: the transfer that fetched it last
  std::vector<CUevent> ready_, done_;
  size_t issued_ = 0;  // transfers this step
  CUstream copy_ = nullptr;
};

/// The tier the step's transfer calls go to (set by CudaStep while a step runs).
void setHostTier(HostTier *tier);

}  // namespace stepc::rt::cuda

extern "C" void _mlir_ciface_stepc_cuda_offload_fetch(int64_t id, int64_t layer, StepcUnrankedF32 *slot);
extern "C" void _mlir_ciface_stepc_cuda_offload_store(int64_t id, int64_t layer, StepcUnrankedF32 *slot);
extern "C" void stepc_cuda_offload_wait(int64_t id, int64_t layer);
extern "C" void stepc_cuda_offload_flush();

#endif  // STEPC_RUNTIME_CUDA_HOSTTIER_H
