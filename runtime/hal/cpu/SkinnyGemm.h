//===- SkinnyGemm.h - GEMMs whose output is at most 8 columns wide -*- C++ -*-===//
//
// An MoE router's GEMMs have N = E experts: [T, D] · [D, E] forward and [T, D]ᵀ · [T, E] for
// its weight's gradient, E = 8 here. What they must cost is reading the [T, D] operand once;
// BLAS libraries run them below that (oneDNN's blocks read [4096, 256]ᵀ · [4096, 8] at a third
// of the machine's bandwidth when it comes from memory). In the E = 8 benchmark layer on 2
// threads these kernels (AVX-512) take 0.16 ms a step for that GEMM where oneDNN took 0.24, and
// 0.08 for the forward's where it took 0.12 (benchmarks/README.md):
//   NN (A's rows along k): each output element a dot product over k, 16 lanes at a time;
//   TN (A stored [k, m]): fixed chunks of A's rows streamed whole, each chunk's sums kept in
//   registers panel by panel, and the chunks' sums added in order.
// Every element is summed in an order fixed by the shape alone (not by the thread count), as
// the library blocks are (Gemm.cpp). Up to 8 columns: at 16 oneDNN is faster than these
// (measured in benchmarks/README.md).
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_HAL_CPU_SKINNYGEMM_H
#define STEPC_RUNTIME_HAL_CPU_SKINNYGEMM_H

#include <cstdint>

namespace stepc::rt {

/// The widest output the kernels take.
constexpr int64_t kSkinnyMaxColumns = 8;

/// C[m, n] = (or += with `accumulate`) op(A)[m, k] · op(B)[k, n] for n <= kSkinnyMaxColumns,
/// on the step's pool (`parallel`) or this thread. A (ld lda) is stored [m, k] or, transposed,
/// [k, m]; likewise B ([k, n] or [n, k]); C's rows are ldc apart. Returns false, computing
/// nothing, where the kernels do not apply: no AVX-512, n too wide, too little work to matter.
bool skinnyGemm(const float *a, int64_t lda, bool transA, const float *b, int64_t ldb,
                bool transB, float *c, int64_t ldc, int64_t m, int64_t n, int64_t k,
                bool accumulate, bool parallel);

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_HAL_CPU_SKINNYGEMM_H
