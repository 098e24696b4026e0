//===- CollectiveStream.h - a CUDA step's collectives, overlapped with its kernels -*- C++ -*-===//
//
// A data-parallel CUDA step starts each layer's gradient reduction as soon as the backward has
// the layer's gradient (stepc_cuda_all_reduce_start_f32, stepc_cuda_reduce_scatter_start_f32)
// and waits for them before the optimizer (stepc_cuda_all_reduce_wait_f32), as the CPU step
// does on its reductions' thread (runtime/hal/cpu/BackgroundReductions.h). Here the
// collectives run on a stream of their own beside the step's compute stream:
//
//   start(data, n, collective)  the compute stream records an event (the gradient's kernels
//                               so far are done), the collectives' stream waits for it, the
//                               collective (NCCL's) is queued there and a second event marks
//                               it done;
//   wait(data)                  the compute stream waits for the done-event of the newest
//                               start whose buffer begins at `data`.
//
// So NCCL's kernels run while the compute stream goes on with the layers below, and no host
// synchronisation is needed: the step is still captured as one CUDA graph (the collectives'
// stream joins the capture through its first wait on the compute stream's event, and every
// start's wait joins it back). The i-th start of a step uses event pair i, the same every
// step, so the captured graph and the direct run issue the same dependencies. The starts'
// count restarts once every start has been waited for (a step's end).
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_CUDA_COLLECTIVESTREAM_H
#define STEPC_RUNTIME_CUDA_COLLECTIVESTREAM_H

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "runtime/base/Status.h"
#include "runtime/hal/cuda/Driver.h"

namespace stepc::rt::cuda {

class CollectiveStream {
 public:
  /// The collectives' stream, on the session's context.
  static Status open(std::unique_ptr<CollectiveStream> &out);

  /// Queues `collective(stream)` on the collectives' stream after the compute stream's work so
  /// far; the buffer of `n` floats at `data` is its, untouched by the step until the wait.
  Status start(const float *data, int64_t n, const std::function<Status(CUstream)> &collective);
  /// The compute stream waits for the newest start whose buffer begins at `data`; `elements`
  /// is that start's float count, or -1 (and nothing waits) when no start begins there.
  Status wait(const float *data, int64_t &elements);

 private:
  struct Started {
    const float *data = nullptr;
    int64_t elements = 0;
    bool waited = false;
  };
  CUstream stream_ = nullptr;
  std::vector<Started> started_;  // this step's, in start order
  std::vector<CUevent> ready_, done_;
  size_t waited_ = 0;
};

}  // namespace stepc::rt::cuda

#endif  // STEPC_RUNTIME_CUDA_COLLECTIVESTREAM_H
