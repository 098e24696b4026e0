//===- Blas.h - the CUDA step's GEMMs on cuBLASLt ----------------*- C++ -*-===//
//
// The GEMM interface of runtime/hal/Gemm.h on the device (stepc_cuda_matmul_f32,
// stepc_cuda_batch_matmul_f32, stepc_cuda_matmul_epilogue_f32), through cuBLASLt, loaded with
// dlopen like the driver so binaries start without the toolkit. cuBLASLt is column-major: a
// row-major D[m,n] = op(A)·op(B) is the column-major D^T[n,m] = op(B)^T·op(A)^T, so its "A" is
// our B and its "B" our A, with the flags kept. A row-major bias over D's columns is then a
// bias over D^T's rows, which is exactly cuBLASLt's BIAS epilogue; a residual R is its C with
// beta = 1. planGemm works out the layouts (unit-tested without a GPU).
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_CUDA_BLAS_H
#define STEPC_RUNTIME_CUDA_BLAS_H

#include <cstdint>
#include <string>

namespace stepc::rt::cuda {

// One stored matrix as cuBLASLt's layout sees it: column-major rows x cols, leading dimension.
struct LtMatrix {
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
};

// A row-major GEMM D[m,n] = op(A)[m,k] · op(B)[k,n] in cuBLASLt's terms.
struct LtGemm {
  bool transA = false, transB = false;  // cuBLASLt's op(A), op(B): our B's and our A's
  LtMatrix a, b, d;                     // cuBLASLt's A (= our B), B (= our A), D (= D^T)
  int64_t m = 0, n = 0, k = 0;          // our shapes
  std::string error;                    // why it cannot run (a view without a unit stride)
};

// The plan for 2-D views given as MLIR memref sizes and strides (elements). D must be
// row-major (unit column stride), as the compiler's buffers are.
LtGemm planGemm(const int64_t *aSizes, const int64_t *aStrides, bool transA,
                const int64_t *bSizes, const int64_t *bStrides, bool transB,
                const int64_t *dSizes, const int64_t *dStrides);

// The plan for out[1 x cols] = ones[1 x rows] · m[rows x cols] (m row-major, row stride ld):
// the column sums of m, the bias gradient when cuBLASLt has no algorithm with it fused.
LtGemm planColumnSums(int64_t rows, int64_t cols, int64_t ld);

}  // namespace stepc::rt::cuda

#endif  // STEPC_RUNTIME_CUDA_BLAS_H
