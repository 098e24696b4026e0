// Batched GEMMs (stepc_batch_matmul_f32: an MoE's experts) whose operands end in zero rows, the
// slots past each expert's load: every layout (A or its transpose, B or its transpose), = and
// +=, against a double loop over the whole shapes (the left-out rows and sums must not change
// anything), with garbage in C beforehand; batches with no zero row, some, and only zero rows;
// a NaN in a late row of A is computed, not skipped; the same bits on 1, 2 and 3 threads; and
// STEPC_PROFILE's rate counts the FLOPs run, not the shape's.
#include <cmath>
#include <cstdlib>
#include <string>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/hal/Gemm.h"
#include "runtime/hal/Profile.h"
#include "runtime/hal/cpu/ThreadPool.h"

namespace stepc::rt {
namespace {

StridedMemRef<3> view(std::vector<float> &data, int64_t batches, int64_t rows, int64_t cols) {
  return {data.data(), data.data(), 0, {batches, rows, cols}, {rows * cols, cols, 1}};
}

struct Case {
  int64_t m, n, k;
  bool transA, transB, accumulate;
};

// Batch e's A has its last `zeroA[e]` stored rows zero, B its last `zeroB[e]` stored rows.
std::vector<float> runCase(const Case &t, const std::vector<int64_t> &zeroA,
                           const std::vector<int64_t> &zeroB, int threads, bool nanInA = false) {
  setPoolThreads(threads);
  int64_t batches = static_cast<int64_t>(zeroA.size());
  int64_t aRows = t.transA ? t.k : t.m, aCols = t.transA ? t.m : t.k;
  int64_t bRows = t.transB ? t.n : t.k, bCols = t.transB ? t.k : t.n;
  std::mt19937 rng(static_cast<unsigned>(t.m * 131 + t.n * 7 + t.k + batches));
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(batches * aRows * aCols), b(batches * bRows * bCols), c(batches * t.m * t.n);
  for (float &x : a) x = u(rng);
  for (float &x : b) x = u(rng);
  for (float &x : c) x = u(rng) * 1e3f;  // garbage unless accumulating
  for (int64_t e = 0; e < batches; ++e) {
    for (int64_t r = aRows - zeroA[e]; r < aRows; ++r)
      for (int64_t j = 0; j < aCols; ++j) a[(e * aRows + r) * aCols + j] = (j % 2) ? 0.0f : -0.0f;
    for (int64_t r = bRows - zeroB[e]; r < bRows; ++r)
      for (int64_t j = 0; j < bCols; ++j) b[(e * bRows + r) * bCols + j] = 0.0f;
  }
  if (nanInA) a[(aRows - 1) * aCols] = std::numeric_limits<float>::quiet_NaN();
  std::vector<double> expected(c.begin(), c.end());
  for (int64_t e = 0; e < batches; ++e)
    for (int64_t i = 0; i < t.m; ++i)
      for (int64_t j = 0; j < t.n; ++j) {
        double &out = expected[(e * t.m + i) * t.n + j];
        double sum = t.accumulate ? out : 0.0;
        for (int64_t p = 0; p < t.k; ++p)
          sum += static_cast<double>(t.transA ? a[(e * aRows + p) * aCols + i]
                                              : a[(e * aRows + i) * aCols + p]) *
                 static_cast<double>(t.transB ? b[(e * bRows + j) * bCols + p]
                                              : b[(e * bRows + p) * bCols + j]);
        out = sum;
      }
  auto A = view(a, batches, aRows, aCols);
  auto B = view(b, batches, bRows, bCols);
  auto C = view(c, batches, t.m, t.n);
  _mlir_ciface_stepc_batch_matmul_f32(&A, &B, &C, t.transA, t.transB, t.accumulate);
  for (size_t i = 0; i < c.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(c[i])) << "element " << i;
      continue;
    }
    // f32 sums of up to 512 products of magnitude <= 1, onto C up to 1000 when accumulating.
    EXPECT_NEAR(c[i], expected[i], 2e-4 + 2e-6 * std::fabs(expected[i])) << "element " << i << " of " << t.m << "x" << t.n << "x"
                                         << t.k << " transA " << t.transA << " transB "
                                         << t.transB << " accumulate " << t.accumulate;
  }
  return c;
}

TEST(BatchGemm, TrailingZeroRowsInEveryLayout) {
  // Per batch: no zero row, a few, most, all of them.
  for (bool transA : {false, true})
    for (bool transB : {false, true})
      for (bool accumulate : {false, true}) {
        Case t{40, 24, 36, transA, transB, accumulate};
        int64_t aRows = transA ? t.k : t.m, bRows = transB ? t.n : t.k;
        std::vector<int64_t> zeroA = {0, 3, aRows - 1, aRows}, zeroB = {0, 0, 0, 0};
        std::vector<float> one = runCase(t, zeroA, zeroB, 1);
        EXPECT_EQ(one, runCase(t, zeroA, zeroB, 2));
        EXPECT_EQ(one, runCase(t, zeroA, zeroB, 3));
        // Zero rows of B along the reduction (NN, TN), or its output columns (NT, TT).
        std::vector<int64_t> someB = {bRows, 5, 0, bRows - 2};
        std::vector<float> withB = runCase(t, zeroA, someB, 1);
        EXPECT_EQ(withB, runCase(t, zeroA, someB, 2));
      }
}

TEST(BatchGemm, LargeEnoughToSplit) {
  // Rows enough for gemm2d to split a GEMM into blocks, and batches enough (>= 2 per thread) to
  // run side by side: an expert's [C = 512, D] slots with 100 in use.
  for (bool transA : {false, true}) {
    Case t{transA ? 96 : 512, 128, transA ? 512 : 96, transA, false, false};
    std::vector<int64_t> zeroA(4, 412);
    zeroA[1] = 0;
    std::vector<int64_t> zeroB(4, 0);
    std::vector<float> one = runCase(t, zeroA, zeroB, 1);
    EXPECT_EQ(one, runCase(t, zeroA, zeroB, 2));
  }
}

TEST(BatchGemm, NanInAZeroTailIsComputed) {
  // A's last row is zero but for a NaN: it is not a zero row, so it is computed (NaN out).
  Case t{16, 8, 12, false, false, false};
  runCase(t, {5, 16}, {0, 0}, 2, /*nanInA=*/true);
}

TEST(BatchGemm, ProfileCountsTheFlopsRun) {
  setenv("STEPC_PROFILE", "1", 1);
  // Two ids, each naming a [4, 64 x 32 x 48] batch's 2·M·N·K.
  double shape = 2.0 * 4 * 64 * 32 * 48;
  initProfile({"empty", "full"}, {}, {shape, shape});
  std::vector<float> a(4 * 64 * 48, 0.0f), b(4 * 48 * 32, 1.0f), c(4 * 64 * 32, 5.0f);
  auto A = view(a, 4, 64, 48);
  auto B = view(b, 4, 48, 32);
  auto C = view(c, 4, 64, 32);
  stepc_profile_enter(0);
  _mlir_ciface_stepc_batch_matmul_f32(&A, &B, &C, 0, 0, 0);  // every slot empty: nothing run
  stepc_profile_exit(0);
  for (float x : c) EXPECT_EQ(x, 0.0f);
  for (float &x : a) x = 1.0f;
  stepc_profile_enter(1);
  _mlir_ciface_stepc_batch_matmul_f32(&A, &B, &C, 0, 0, 0);
  stepc_profile_exit(1);
  for (float x : c) EXPECT_EQ(x, 48.0f);
  std::string report = profileReport();
  EXPECT_NE(report.find("empty  (0.0 GFLOP/s)"), std::string::npos) << report;
  EXPECT_EQ(report.find("full  (0.0 GFLOP/s)"), std::string::npos) << report;
  unsetenv("STEPC_PROFILE");
}

}  // namespace
}  // namespace stepc::rt
