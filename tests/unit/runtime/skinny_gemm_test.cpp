// GEMMs with an output at most 8 columns wide (runtime/hal/cpu/SkinnyGemm.h, an MoE router's
// shapes) through the GEMM interface: equal to a double-precision loop for both layouts of A
// (NN's dot products, TN's chunks of streamed rows), both of B, = and +=, widths 1 to 8 (and 9
// and 16, the library's), k and m that are not multiples of the kernels' 16 lanes, 48-column
// panels, 32-row tiles or 512-row chunks; and the same bits on 1, 2 and 3 threads (each
// element's sum has one order, whatever the split).
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/hal/Gemm.h"
#include "runtime/hal/cpu/SkinnyGemm.h"
#include "runtime/hal/cpu/ThreadPool.h"

namespace stepc::rt {
namespace {

StridedMemRef<2> view(std::vector<float> &data, int64_t rows, int64_t cols) {
  return {data.data(), data.data(), 0, {rows, cols}, {cols, 1}};
}

struct Case {
  int64_t m, n, k;
  bool transA, transB, accumulate;
};

// C (+)= op(A) op(B) through the interface on `threads` threads; checks it against a double
// loop and returns it.
std::vector<float> runCase(const Case &t, int threads) {
  setPoolThreads(threads);
  std::mt19937 rng(static_cast<unsigned>(t.m * 131 + t.n * 7 + t.k));
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(static_cast<size_t>(t.m * t.k)), b(static_cast<size_t>(t.k * t.n)),
      c(static_cast<size_t>(t.m * t.n));
  for (float &x : a) x = u(rng);
  for (float &x : b) x = u(rng);
  for (float &x : c) x = u(rng);
  std::vector<double> expected(c.begin(), c.end());
  for (int64_t i = 0; i < t.m; ++i)
    for (int64_t j = 0; j < t.n; ++j) {
      double sum = t.accumulate ? expected[i * t.n + j] : 0.0;
      for (int64_t p = 0; p < t.k; ++p)
        sum += static_cast<double>(t.transA ? a[p * t.m + i] : a[i * t.k + p]) *
               static_cast<double>(t.transB ? b[j * t.k + p] : b[p * t.n + j]);
      expected[i * t.n + j] = sum;
    }
  auto A = t.transA ? view(a, t.k, t.m) : view(a, t.m, t.k);
  auto B = t.transB ? view(b, t.n, t.k) : view(b, t.k, t.n);
  auto C = view(c, t.m, t.n);
  _mlir_ciface_stepc_matmul_f32(&A, &B, &C, t.transA, t.transB, t.accumulate);
  double worst = 0;
  for (size_t i = 0; i < c.size(); ++i) worst = std::max(worst, std::fabs(c[i] - expected[i]));
  // f32 sums of up to 1100 products of magnitude <= 1.
  EXPECT_LT(worst, 2e-4) << t.m << "x" << t.n << "x" << t.k << " transA " << t.transA
                         << " transB " << t.transB << " accumulate " << t.accumulate;
  return c;
}

TEST(SkinnyGemm, EqualsLoopsAndThreadCountsAgree) {
  useSingleThreadedBlas();
  for (int64_t n : {1, 5, 8, 9, 16})
    for (bool transA : {false, true})
      for (bool transB : {false, true})
        for (bool accumulate : {false, true}) {
          // NN: many rows, k not a multiple of 16; TN: k over three chunks, m not a multiple
          // of the 48-column panels.
          Case t = transA ? Case{100, n, 1100, true, transB, accumulate}
                          : Case{301, n, 260, false, transB, accumulate};
          std::vector<float> one = runCase(t, 1);
          EXPECT_EQ(runCase(t, 2), one) << "2 threads, n " << n << " transA " << transA;
          EXPECT_EQ(runCase(t, 3), one) << "3 threads, n " << n << " transA " << transA;
        }
}

// The kernels take these shapes where the CPU has AVX-512 (the CI machines do), and leave
// wider outputs and tiny calls to the library.
TEST(SkinnyGemm, WhichShapesItTakes) {
  std::vector<float> a(4096 * 256, 0.5f), b(4096 * 16, 0.25f), c(4096 * 256);
  bool avx512 = __builtin_cpu_supports("avx512f");
  EXPECT_EQ(skinnyGemm(a.data(), 256, false, b.data(), 8, false, c.data(), 8, 4096, 8, 256,
                       false, false),
            avx512);  // a router's forward
  EXPECT_EQ(skinnyGemm(a.data(), 256, true, b.data(), 8, false, c.data(), 8, 256, 8, 4096,
                       false, false),
            avx512);  // its weight's gradient
  if (avx512) {
    EXPECT_FLOAT_EQ(c[0], 0.5f * 0.25f * 4096);
  }
  EXPECT_FALSE(skinnyGemm(a.data(), 256, false, b.data(), 9, false, c.data(), 9, 4096, 9, 256,
                          false, false));  // 9 columns: the library's
  EXPECT_FALSE(skinnyGemm(a.data(), 16, false, b.data(), 8, false, c.data(), 8, 64, 8, 16,
                          false, false));  // too small to matter
}

}  // namespace
}  // namespace stepc::rt
