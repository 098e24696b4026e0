//===- PackedGemm.h - the runtime's own AVX-512 GEMM ------------*- C++ -*-===//
//
// C = (or +=) op(A) · op(B) on the runtime's own kernels, laid out as BLIS and oneDNN lay out
// theirs (Goto's algorithm): op(B) is packed KC x NC at a time into panels of kNr columns,
// op(A) MC x KC at a time into panels of kMr rows, and a register-blocked micro-kernel
// computes each kMr x kNr tile of C from one panel of each with broadcast FMAs (24 zmm
// accumulators). The packing reads any row stride, so a convolution's window (rows that
// overlap, ld below the row length) and a broadcast (ld 0) need no copy of their own.
//
// Why not the library's sgemm: Gemm.cpp ran each GEMM as fixed blocks, one single-threaded
// library call each, and every block packed the other operand again; in byte_lm_residual's
// step the GEMMs ran at 63-87% of the 2-thread FMA peak (benchmarks/README.md) where the issue
// asks for 90%. Here each thread takes one slab of C (rows or columns, whichever is longer)
// and packs what it reads once.
//
// The bits: every element of C is the same sum in the same order whatever the slab, tile or
// thread count: for each chunk of kKc along the reduction (fixed by k alone) one register sum
// over the chunk in order, then C = sum (first chunk, not accumulating) or C + sum. So results
// depend on the shape only, as Gemm.cpp requires.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_HAL_CPU_PACKEDGEMM_H
#define STEPC_RUNTIME_HAL_CPU_PACKEDGEMM_H

#include <cstdint>

namespace stepc::rt {

/// True where the kernels run (the CPU has AVX-512F).
bool packedGemmAvailable();

/// C[m, n] = (or += with `accumulate`) op(A)[m, k] · op(B)[k, n]. A (row stride lda, any value
/// >= 0) is stored [m, k] or, transposed, [k, m]; likewise B ([k, n] or [n, k]); C's rows are ldc
/// apart, unit stride. On the step's pool (`parallel`) or this thread. k must be >= 1.
void packedGemm(const float *a, int64_t lda, bool transA, const float *b, int64_t ldb,
                bool transB, float *c, int64_t ldc, int64_t m, int64_t n, int64_t k,
                bool accumulate, bool parallel);

/// The same with A gathered by rows: A's stored row s (of [m, k], or of [k, m] transposed) is
/// aRows[s], k (or m) contiguous floats, or zeros where aRows[s] is null. An MoE's dispatch
/// packs its experts' rows straight from the tokens' rows this way (Gemm.cpp,
/// stepc_batch_matmul_gathered_f32): no [E, C, D] copy is written or read.
void packedGemmRows(const float *const *aRows, bool transA, const float *b, int64_t ldb,
                    bool transB, float *c, int64_t ldc, int64_t m, int64_t n, int64_t k,
                    bool accumulate, bool parallel);

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_HAL_CPU_PACKEDGEMM_H
