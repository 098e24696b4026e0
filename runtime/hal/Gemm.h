//===- Gemm.h - the GEMM interface compiled steps call ----------*- C++ -*-===//
//
// Compiled kernels do contractions through these C entry points, MLIR's C interface for
// memrefs (a pointer to each view's descriptor: base, aligned data, offset, sizes, strides):
//
//   stepc_matmul_f32(A, B, C, transA, transB, acc)        C[M,N] (+)= op(A)[M,K] · op(B)[K,N]
//   stepc_batch_matmul_f32(A, B, C, transA, transB, acc)  the same per leading batch index
//   stepc_matmul_bf16 / stepc_batch_matmul_bf16           bf16 A and B, f32 C (--precision=bf16)
//   stepc_matmul_epilogue_f32(A, B, D, bias, R, ...)      D = op(A)·op(B) (+ R) + bias [gelu],
//                                                         or op(A)·op(B) · gelu'(R)
//   stepc_batch_matmul_gathered_f32(X, B, C, ids, group, transA, transB, acc)
//                                                         the batched form with A gathered: batch
//                                                         e's row r is X[ids[e, r] / group], or
//                                                         zeros for -1 (an MoE's dispatch, CPU)
//   stepc_batch_matmul_masked_f32(A, B, C, ids, transA, transB, acc)
//                                                         the batched form where A's stored rows
//                                                         with ids[e, r] < 0 are known zeros
//
// with += when acc is 1 and = when it is 0. On the CPU a batch's trailing zero rows (an MoE
// expert's empty slots) are left out of stepc_batch_matmul_f32's work, not out of its result
// (hal/cpu/Gemm.cpp, runBatch).
//
// op(X) is X, or X transposed when trans is 1. Views may be strided; a view whose rows are
// not unit-stride is passed to BLAS transposed instead. The CPU implementation runs blocks on
// oneDNN or OpenBLAS (hal/cpu/Gemm.cpp, benchmarks/gemm/README.md); the CUDA backend implements the same interface with
// cuBLASLt.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_GEMM_H
#define STEPC_RUNTIME_GEMM_H

#include <algorithm>
#include <cstdint>
#include <string>

#include "runtime/base/Status.h"

namespace stepc::rt {

template <int Rank, typename T = float>
struct StridedMemRef {
  T *base;
  T *data;
  int64_t offset;
  int64_t sizes[Rank];
  int64_t strides[Rank];
};

/// A bf16 value's bits (MLIR's bf16 memrefs hold these).
using Bf16 = uint16_t;

/// One GEMM operand as BLAS sees it: a row-major matrix with leading dimension ld, possibly
/// transposed. A view [R, C] with strides (s0, 1) is row-major R x C (ld s0); with strides
/// (1, s1) it is the transpose of a row-major C x R (ld s1). ok is false for a view with no
/// unit stride. `overlapping`: the stored rows overlap (ld below the row length, e.g. a
/// convolution's window over a sequence, row r = elements r·Cin .. r·Cin + K·Cin - 1, or a
/// broadcast with ld 0); BLAS rejects such an ld, so the CPU packs blocks of it first and
/// cuBLASLt refuses it. Shared by the OpenBLAS/oneDNN and cuBLASLt implementations.
struct Operand {
  const float *data;
  int64_t ld;
  bool transposed;
  bool ok;
  bool overlapping = false;
};

inline Operand operand(const float *data, const int64_t *sizes, const int64_t *strides,
                       bool trans) {
  int64_t r = sizes[0], c = sizes[1];
  if (strides[1] == 1 || c == 1) {
    if (r > 1 && c > 1 && strides[0] < c) return {data, strides[0], trans, true, true};
    return {data, std::max<int64_t>(r == 1 ? c : strides[0], c), trans, true};
  }
  if (strides[0] == 1 || r == 1) {
    if (c > 1 && r > 1 && strides[1] < r) return {data, strides[1], !trans, true, true};
    return {data, std::max<int64_t>(c == 1 ? r : strides[1], r), !trans, true};
  }
  return {data, 0, trans, false};
}

/// GEMMs run on the step's thread pool (ThreadPool.h), split into blocks of rows or columns,
/// one single-threaded BLAS call each; this keeps the library's own threads out of the way.
void useSingleThreadedBlas();

/// Loads the GEMM library the blocks run on (Gemm.cpp: oneDNN if it loads, else OpenBLAS;
/// STEPC_GEMM chooses) and names it; an error for a STEPC_GEMM that cannot be met.
Status selectGemmLibrary(std::string *name = nullptr);

/// Counters for the kernel profile: GEMM calls and their floating-point operations.
struct GemmStats {
  int64_t calls = 0;
  double flops = 0;
};
GemmStats &gemmStats();

}  // namespace stepc::rt

extern "C" {
void _mlir_ciface_stepc_matmul_f32(stepc::rt::StridedMemRef<2> *a, stepc::rt::StridedMemRef<2> *b,
                                   stepc::rt::StridedMemRef<2> *c, int64_t transA, int64_t transB,
                                   int64_t accumulate);
void _mlir_ciface_stepc_batch_matmul_f32(stepc::rt::StridedMemRef<3> *a,
                                         stepc::rt::StridedMemRef<3> *b,
                                         stepc::rt::StridedMemRef<3> *c, int64_t transA,
                                         int64_t transB, int64_t accumulate);
/// C (+)= op(A) · op(B) for bf16 A and B, accumulated in f32 (on the CPU: the operands widened
/// exactly to f32, then the f32 GEMM).
void _mlir_ciface_stepc_matmul_bf16(stepc::rt::StridedMemRef<2, stepc::rt::Bf16> *a,
                                    stepc::rt::StridedMemRef<2, stepc::rt::Bf16> *b,
                                    stepc::rt::StridedMemRef<2> *c, int64_t transA,
                                    int64_t transB, int64_t accumulate);
void _mlir_ciface_stepc_batch_matmul_bf16(stepc::rt::StridedMemRef<3, stepc::rt::Bf16> *a,
                                          stepc::rt::StridedMemRef<3, stepc::rt::Bf16> *b,
                                          stepc::rt::StridedMemRef<3> *c, int64_t transA,
                                          int64_t transB, int64_t accumulate);
/// C[e] (+)= op(A_e) · op(B[e]) where A_e's stored row r is src[min(ids[e, r], rows · group - 1)
/// / group] (src's rows: rows), or zeros where ids[e, r] < 0: an MoE's dispatch (gather_rows)
/// folded into the experts' GEMM (--step-gathered-gemms, CPU only). C's rows past an expert's
/// last id (transA: all of C when it has none) are written as zeros, not computed.
void _mlir_ciface_stepc_batch_matmul_gathered_f32(stepc::rt::StridedMemRef<2> *src,
                                                  stepc::rt::StridedMemRef<3> *b,
                                                  stepc::rt::StridedMemRef<3> *c,
                                                  stepc::rt::StridedMemRef<2, int32_t> *ids,
                                                  int64_t group, int64_t transA, int64_t transB,
                                                  int64_t accumulate);
/// C[e] (+)= op(A[e]) · op(B[e]) where the compiler proved A[e]'s stored row r zero wherever
/// ids[e, r] < 0 (an MoE's experts' rows past the dispatch: its empty slots; CPU only): those
/// rows are left out as stepc_batch_matmul_f32 leaves out trailing zero rows, without reading
/// them to find out.
void _mlir_ciface_stepc_batch_matmul_masked_f32(stepc::rt::StridedMemRef<3> *a,
                                                stepc::rt::StridedMemRef<3> *b,
                                                stepc::rt::StridedMemRef<3> *c,
                                                stepc::rt::StridedMemRef<2, int32_t> *ids,
                                                int64_t transA, int64_t transB,
                                                int64_t accumulate);
/// D = op(A) · op(B) (+ R when flags & 1) + bias (broadcast over D's rows), then GELU (tanh
/// form) when flags & 2; or, when flags & 4, D = op(A) · op(B) · gelu'(R) (GELU's backward, R
/// its input; the bias is not read, or with flags & 8 it receives D's column sums, the bias
/// gradient); or, when flags & 16, D = op(A) · op(B) (+ R) and the bias receives B's column
/// sums (B not transposed: the bias gradient next to a weight gradient): a GEMM with the
/// kernels around it folded in (--step-gemm-epilogues); R may be D.
void _mlir_ciface_stepc_matmul_epilogue_f32(stepc::rt::StridedMemRef<2> *a,
                                            stepc::rt::StridedMemRef<2> *b,
                                            stepc::rt::StridedMemRef<2> *d,
                                            stepc::rt::StridedMemRef<1> *bias,
                                            stepc::rt::StridedMemRef<2> *residual, int64_t transA,
                                            int64_t transB, int64_t flags);
}

#endif  // STEPC_RUNTIME_GEMM_H
