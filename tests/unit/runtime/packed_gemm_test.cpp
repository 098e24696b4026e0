// The runtime's packed GEMM (runtime/hal/cpu/PackedGemm.h) against a double-precision loop:
// both layouts of A and of B, = and +=, shapes that are not multiples of the 12 x 32 tile, of
// the 16-lane transposes or of the 512-long reduction chunks; a reduction cut into parts (a
// weight gradient's: k >= 8 max(m, n)); A read in place (a narrow C) and
// packed (a wide C, or rows 2 KiB apart); a convolution's window (rows that overlap, ld below
// the row length) and a broadcast (ld 0); C inside a wider matrix (ldc > n). Every element's
// sum has one order whatever the slab, so 1, 2 and 3 threads give the same bits.
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/hal/cpu/PackedGemm.h"
#include "runtime/hal/cpu/ThreadPool.h"

namespace stepc::rt {
namespace {

struct Case {
  int64_t m, n, k;
  bool transA, transB, accumulate;
  int64_t lda = -1, ldb = -1, ldc = -1;  // -1: dense
};

std::vector<float> runCase(const Case &t, int threads) {
  setPoolThreads(threads);
  int64_t lda = t.lda >= 0 ? t.lda : (t.transA ? t.m : t.k);
  int64_t ldb = t.ldb >= 0 ? t.ldb : (t.transB ? t.k : t.n);
  int64_t ldc = t.ldc >= 0 ? t.ldc : t.n;
  // Storage long enough for every row the view reads (rows of the stored matrix, ld apart).
  int64_t aRows = t.transA ? t.k : t.m, aCols = t.transA ? t.m : t.k;
  int64_t bRows = t.transB ? t.n : t.k, bCols = t.transB ? t.k : t.n;
  std::mt19937 rng(static_cast<unsigned>(t.m * 131 + t.n * 7 + t.k + lda));
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(static_cast<size_t>((aRows - 1) * lda + aCols)),
      b(static_cast<size_t>((bRows - 1) * ldb + bCols)), c(static_cast<size_t>(t.m * ldc));
  for (float &x : a) x = u(rng);
  for (float &x : b) x = u(rng);
  for (float &x : c) x = u(rng);
  std::vector<double> expected(c.begin(), c.end());
  for (int64_t i = 0; i < t.m; ++i)
    for (int64_t j = 0; j < t.n; ++j) {
      double sum = t.accumulate ? expected[i * ldc + j] : 0.0;
      for (int64_t p = 0; p < t.k; ++p)
        sum += static_cast<double>(t.transA ? a[p * lda + i] : a[i * lda + p]) *
               static_cast<double>(t.transB ? b[j * ldb + p] : b[p * ldb + j]);
      expected[i * ldc + j] = sum;
    }
  std::vector<float> before = c;
  packedGemm(a.data(), lda, t.transA, b.data(), ldb, t.transB, c.data(), ldc, t.m, t.n, t.k,
             t.accumulate, true);
  double worst = 0;
  for (int64_t i = 0; i < t.m; ++i) {
    for (int64_t j = 0; j < t.n; ++j)
      worst = std::max(worst, std::fabs(c[i * ldc + j] - expected[i * ldc + j]));
    for (int64_t j = t.n; j < ldc; ++j)  // outside C: untouched
      EXPECT_EQ(c[i * ldc + j], before[i * ldc + j]) << "wrote past column " << t.n;
  }
  // f32 sums of k products of magnitude <= 1 (+ 1 accumulated): rounding grows with k.
  EXPECT_LT(worst, 1e-4 + 1e-7 * static_cast<double>(t.k)) << t.m << "x" << t.n << "x" << t.k << " transA " << t.transA
                         << " transB " << t.transB << " accumulate " << t.accumulate << " lda "
                         << lda << " ldb " << ldb;
  return c;
}

void checkThreads(const Case &t) {
  std::vector<float> one = runCase(t, 1);
  EXPECT_EQ(runCase(t, 2), one) << "2 threads " << t.m << "x" << t.n << "x" << t.k;
  EXPECT_EQ(runCase(t, 3), one) << "3 threads " << t.m << "x" << t.n << "x" << t.k;
}

TEST(PackedGemm, EqualsLoopsAndThreadCountsAgree) {
  if (!packedGemmAvailable()) GTEST_SKIP() << "no AVX-512F on this CPU";
  for (bool transA : {false, true})
    for (bool transB : {false, true})
      for (bool accumulate : {false, true}) {
        // Narrow C (A read in place), k over three uneven chunks and not a multiple of 16.
        checkThreads({301, 45, 1100, transA, transB, accumulate});
        // Wide C (A packed), rows and columns off the tile, one chunk.
        checkThreads({77, 300, 37, transA, transB, accumulate});
        // More columns than rows: slabs of columns.
        checkThreads({13, 700, 129, transA, transB, accumulate});
        // A reduction much longer than C's sides: cut into 2 and 4 parts, summed in order.
        checkThreads({40, 30, 4200, transA, transB, accumulate});
        checkThreads({20, 50, 8300, transA, transB, accumulate});
        // A single row, a single column.
        checkThreads({1, 64, 200, transA, transB, accumulate});
        checkThreads({50, 1, 200, transA, transB, accumulate});
      }
}

TEST(PackedGemm, StridedOverlappingAndBroadcastOperands) {
  if (!packedGemmAvailable()) GTEST_SKIP() << "no AVX-512F on this CPU";
  // A's rows 2 KiB apart (packed although C is narrow), C in a wider matrix.
  checkThreads({200, 40, 300, false, false, false, 512, -1, 61});
  checkThreads({200, 40, 300, false, true, true, 1024, 333, 40});
  // A convolution's window: row r of A is elements r·8 .. r·8 + 55 of one sequence.
  checkThreads({500, 96, 56, false, false, false, 8});
  checkThreads({500, 96, 56, false, false, true, 8});
  // A broadcast row (ld 0) and a broadcast B row.
  checkThreads({100, 70, 33, false, false, false, 0});
  checkThreads({100, 70, 33, false, false, false, -1, 0});
  checkThreads({50, 70, 33, false, false, true, -1, 0});  // B read in place (few rows)
}

}  // namespace
}  // namespace stepc::rt
