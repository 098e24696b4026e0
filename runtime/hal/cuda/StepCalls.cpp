//===- StepCalls.cpp - what the CUDA step's host code calls besides mgpu* -===//
//
// --step-cuda-host makes the host plan call these, all on the session's stream:
//   - stepc_cuda_arena(bytes): the step's arena, one device allocation kept for the process;
//   - stepc_cuda_copy(dst, src, bytes): a device-to-device copy;
// The GEMMs (stepc_cuda_matmul_f32, ...) are in Blas.cpp, on cuBLASLt.
// Failures are recorded on the session (Session::recordError) for the step to report.
//
//===----------------------------------------------------------------------===//
#include <cstdint>

#include "runtime/hal/cuda/Session.h"

using stepc::rt::Status;
using stepc::rt::cuda::Session;

namespace {

struct ByteMemRef {
  void *base;
  void *data;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
};

}  // namespace

extern "C" void _mlir_ciface_stepc_cuda_arena(ByteMemRef *out, int64_t bytes) {
  static stepc::rt::cuda::CUdeviceptr arena = 0;
  static int64_t size = 0;
  Session &s = Session::get();
  *out = ByteMemRef{nullptr, nullptr, 0, {bytes}, {1}};
  if (!s.status().ok()) return s.recordError(s.status());
  if (bytes > size) {
    if (arena) s.driver().api().cuMemFree(arena);
    arena = 0;
    size = 0;
    Status st = s.driver().check(s.driver().api().cuMemAlloc(&arena, static_cast<size_t>(bytes)),
                                 "cuMemAlloc (the step's arena)");
    if (!st.ok()) return s.recordError(st);
    size = bytes;
  }
  out->base = out->data = reinterpret_cast<void *>(arena);
}

extern "C" void stepc_cuda_copy(int64_t dst, int64_t src, int64_t bytes) {
  Session &s = Session::get();
  if (!s.status().ok()) return s.recordError(s.status());
  Status st = s.driver().check(
      s.driver().api().cuMemcpyDtoDAsync(static_cast<stepc::rt::cuda::CUdeviceptr>(dst),
                                         static_cast<stepc::rt::cuda::CUdeviceptr>(src),
                                         static_cast<size_t>(bytes), s.stream()),
      "cuMemcpyDtoDAsync");
  if (!st.ok()) s.recordError(st);
}
