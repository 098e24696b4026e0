//===- StepCalls.cpp - what the CUDA step's host code calls besides mgpu* -===//
//
// --step-cuda-host makes the host plan call these, all on the session's stream:
//   - stepc_cuda_arena(bytes): the step's arena, one device allocation kept for the process;
//   - stepc_cuda_copy(dst, src, bytes): a device-to-device copy;
//   - stepc_cuda_matmul_f32 / stepc_cuda_batch_matmul_f32: the GEMM interface (runtime/Gemm.h)
//     on cuBLAS, loaded with dlopen like the driver. A row-major C = op(A) op(B) is the
//     column-major C^T = op(B)^T op(A)^T, so the operands swap and the flags stay.
// Failures are recorded on the session (Session::recordError) for the step to report.
//
//===----------------------------------------------------------------------===//
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>

#include "runtime/Gemm.h"
#include "runtime/cuda/Session.h"

using stepc::rt::Status;
using stepc::rt::Operand;
using stepc::rt::StridedMemRef;
using stepc::rt::operand;
using stepc::rt::cuda::Session;

namespace {

struct ByteMemRef {
  void *base;
  void *data;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
};

// cuBLAS, as far as the GEMM interface needs it.
struct Cublas {
  using Handle = void *;
  int (*create)(Handle *) = nullptr;
  int (*setStream)(Handle, void *) = nullptr;
  int (*sgemm)(Handle, int, int, int, int, int, const float *, const float *, int, const float *,
               int, const float *, float *, int) = nullptr;
  Handle handle = nullptr;
  Status status;
};

Cublas &cublas() {
  static Cublas c = [] {
    Cublas out;
    Session &s = Session::get();
    if (!s.status().ok()) {
      out.status = s.status();
      return out;
    }
    void *lib = nullptr;
    for (const char *name : {"libcublas.so.13", "libcublas.so.12",
                             "/usr/local/cuda/lib64/libcublas.so.13",
                             "/usr/local/cuda/lib64/libcublas.so.12"})
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
      out.status = Status::error("cannot load cuBLAS (libcublas.so.13 or .12): the GEMMs of the "
                                 "CUDA step need the CUDA toolkit's cuBLAS");
      return out;
    }
    out.create = reinterpret_cast<decltype(out.create)>(dlsym(lib, "cublasCreate_v2"));
    out.setStream = reinterpret_cast<decltype(out.setStream)>(dlsym(lib, "cublasSetStream_v2"));
    out.sgemm = reinterpret_cast<decltype(out.sgemm)>(dlsym(lib, "cublasSgemm_v2"));
    if (!out.create || !out.setStream || !out.sgemm) {
      out.status = Status::error("cuBLAS lacks cublasCreate_v2, cublasSetStream_v2 or "
                                 "cublasSgemm_v2");
      return out;
    }
    if (int rc = out.create(&out.handle); rc != 0)
      out.status = Status::error("cublasCreate failed (status " + std::to_string(rc) + ")");
    else if (int rc2 = out.setStream(out.handle, s.stream()); rc2 != 0)
      out.status = Status::error("cublasSetStream failed (status " + std::to_string(rc2) + ")");
    return out;
  }();
  return c;
}

void gemm(const float *a, const int64_t *aSizes, const int64_t *aStrides, const float *b,
          const int64_t *bSizes, const int64_t *bStrides, float *c, const int64_t *cSizes,
          const int64_t *cStrides, bool transA, bool transB, bool accumulate) {
  int64_t m = cSizes[0], n = cSizes[1], k = transA ? aSizes[0] : aSizes[1];
  if (m == 0 || n == 0) return;
  if (cStrides[1] != 1 && n > 1 && (cStrides[0] == 1 || m == 1)) {
    int64_t tSizes[2] = {cSizes[1], cSizes[0]}, tStrides[2] = {cStrides[1], cStrides[0]};
    return gemm(b, bSizes, bStrides, a, aSizes, aStrides, c, tSizes, tStrides, !transB, !transA,
                accumulate);
  }
  Cublas &blas = cublas();
  if (!blas.status.ok()) return Session::get().recordError(blas.status);
  Operand A = operand(a, aSizes, aStrides, transA), B = operand(b, bSizes, bStrides, transB);
  if (!A.ok || !B.ok || (cStrides[1] != 1 && n != 1))
    return Session::get().recordError(
        Status::error("a GEMM view without a unit stride cannot run on cuBLAS"));
  int64_t ldc = std::max<int64_t>(m == 1 ? n : cStrides[0], n);
  float one = 1, beta = accumulate ? 1.0f : 0.0f;
  constexpr int kN = 0, kT = 1;
  int rc = blas.sgemm(blas.handle, B.transposed ? kT : kN, A.transposed ? kT : kN,
                      static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &one, B.data,
                      static_cast<int>(B.ld), A.data, static_cast<int>(A.ld), &beta, c,
                      static_cast<int>(ldc));
  if (rc != 0)
    Session::get().recordError(Status::error("cublasSgemm failed (status " + std::to_string(rc) +
                                             ")"));
}

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

extern "C" void _mlir_ciface_stepc_cuda_matmul_f32(StridedMemRef<2> *a, StridedMemRef<2> *b,
                                                   StridedMemRef<2> *c, int64_t transA,
                                                   int64_t transB, int64_t accumulate) {
  gemm(a->data + a->offset, a->sizes, a->strides, b->data + b->offset, b->sizes, b->strides,
       c->data + c->offset, c->sizes, c->strides, transA != 0, transB != 0, accumulate != 0);
}

extern "C" void _mlir_ciface_stepc_cuda_batch_matmul_f32(StridedMemRef<3> *a,
                                                         StridedMemRef<3> *b,
                                                         StridedMemRef<3> *c, int64_t transA,
                                                         int64_t transB, int64_t accumulate) {
  for (int64_t i = 0; i < c->sizes[0]; ++i)
    gemm(a->data + a->offset + i * a->strides[0], a->sizes + 1, a->strides + 1,
         b->data + b->offset + i * b->strides[0], b->sizes + 1, b->strides + 1,
         c->data + c->offset + i * c->strides[0], c->sizes + 1, c->strides + 1, transA != 0,
         transB != 0, accumulate != 0);
}
