// stepc_batch_matmul_gathered_f32 (an MoE's dispatch folded into the experts' GEMM: batch e's A
// is the rows of X that ids[e, :] name, divided by the group, zeros for -1) against a double
// loop over the gathered matrix: every layout (A = the gathered rows, or their transpose: the
// weight gradient), = and +=, with garbage in C beforehand; experts full, with holes, with a
// tail of empty slots and with none; ids past X's rows clamped as the gather clamps them;
// group 2 (top-2: choice t · 2 + j is token t); the same bits on 1, 2 and 3 threads; sizes
// big enough to split the reduction and to run experts side by side; and the fallback (a
// strided X) gives the same numbers. And stepc_batch_matmul_masked_f32 (A's own rows, those
// with a negative id known zero) never reads those rows.
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/hal/Gemm.h"
#include "runtime/hal/cpu/ThreadPool.h"

namespace stepc::rt {
namespace {

struct Case {
  int64_t tokens, width, n, slots, group;
  bool transA, transB, accumulate;
  int64_t xStride = 1;  // X's column stride: 2 makes the runtime take its fallback
};

// ids for `batches` experts: expert 0 full, 1 with holes, 2 with an empty tail, 3 with none,
// then alternating; some ids past the rows (clamped).
std::vector<int32_t> makeIds(const Case &t, int64_t batches, std::mt19937 &rng) {
  int64_t choices = t.tokens * t.group;
  std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(choices - 1));
  std::vector<int32_t> ids(batches * t.slots);
  for (int64_t e = 0; e < batches; ++e)
    for (int64_t r = 0; r < t.slots; ++r) {
      int32_t v = pick(rng);
      switch (e % 4) {
        case 1: v = r % 3 == 1 ? -1 : v; break;
        case 2: v = r >= t.slots / 3 ? -1 : v; break;
        case 3: v = -1; break;
        default: break;
      }
      if (e == 0 && r == 0) v = static_cast<int32_t>(choices + 7);  // past the end: clamped
      ids[e * t.slots + r] = v;
    }
  return ids;
}

std::vector<float> run(const Case &t, int64_t batches, int threads) {
  setPoolThreads(threads);
  std::mt19937 rng(static_cast<unsigned>(t.tokens + 31 * t.slots + t.n + 1000 * t.transA));
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(t.tokens * t.width * t.xStride);
  for (float &v : x) v = u(rng);
  std::vector<int32_t> ids = makeIds(t, batches, rng);
  // op(A) is [slots, width] (gathered rows) or [width, slots] (their transpose).
  int64_t m = t.transA ? t.width : t.slots, k = t.transA ? t.slots : t.width;
  int64_t bRows = t.transB ? t.n : k, bCols = t.transB ? k : t.n;
  std::vector<float> b(batches * bRows * bCols), c(batches * m * t.n);
  for (float &v : b) v = u(rng);
  for (float &v : c) v = u(rng) * 1e3f;
  auto gathered = [&](int64_t e, int64_t r, int64_t d) -> double {
    int32_t id = ids[e * t.slots + r];
    if (id < 0) return 0.0;
    int64_t row = std::min<int64_t>(id, t.tokens * t.group - 1) / t.group;
    return x[(row * t.width + d) * t.xStride];
  };
  std::vector<double> expected(c.begin(), c.end());
  for (int64_t e = 0; e < batches; ++e)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < t.n; ++j) {
        double sum = t.accumulate ? expected[(e * m + i) * t.n + j] : 0.0;
        for (int64_t p = 0; p < k; ++p) {
          double a = t.transA ? gathered(e, p, i) : gathered(e, i, p);
          double bv = t.transB ? b[(e * bRows + j) * bCols + p] : b[(e * bRows + p) * bCols + j];
          sum += a * bv;
        }
        expected[(e * m + i) * t.n + j] = sum;
      }
  StridedMemRef<2> X{x.data(), x.data(), 0, {t.tokens, t.width}, {t.width * t.xStride, t.xStride}};
  StridedMemRef<3> B{b.data(), b.data(), 0, {batches, bRows, bCols}, {bRows * bCols, bCols, 1}};
  StridedMemRef<3> C{c.data(), c.data(), 0, {batches, m, t.n}, {m * t.n, t.n, 1}};
  StridedMemRef<2, int32_t> I{ids.data(), ids.data(), 0, {batches, t.slots}, {t.slots, 1}};
  _mlir_ciface_stepc_batch_matmul_gathered_f32(&X, &B, &C, &I, t.group, t.transA, t.transB,
                                               t.accumulate);
  for (size_t i = 0; i < c.size(); ++i)
    EXPECT_NEAR(c[i], expected[i], 3e-4 + 2e-6 * std::fabs(expected[i]))
        << "element " << i << ", transA " << t.transA << " transB " << t.transB
        << " accumulate " << t.accumulate << " group " << t.group << " stride " << t.xStride;
  return c;
}

TEST(GatheredGemm, EveryLayoutAgainstTheGatheredMatrix) {
  for (bool transA : {false, true})
    for (bool transB : {false, true})
      for (bool accumulate : {false, true})
        for (int64_t group : {1, 2}) {
          Case t{37, 24, 20, 30, group, transA, transB, accumulate};
          std::vector<float> one = run(t, 5, 1);
          EXPECT_EQ(one, run(t, 5, 2));
          EXPECT_EQ(one, run(t, 5, 3));
          Case strided = t;
          strided.xStride = 2;  // the fallback: the same numbers, within the sum's rounding
          run(strided, 5, 2);
        }
}

TEST(GatheredGemm, LargeEnoughToSplit) {
  // An expert's [C = 512, D = 256] slots (the reduction over 512 slots split in parts when A
  // is transposed), 8 experts: side by side on 2 threads, each split on 3.
  for (bool transA : {false, true}) {
    Case t{600, 256, 96, 512, 1, transA, false, false};
    std::vector<float> one = run(t, 8, 1);
    EXPECT_EQ(one, run(t, 8, 2));
    EXPECT_EQ(one, run(t, 8, 3));
  }
  // Rows wider than the kernels' reduction chunk (512), and a reduction long enough to be cut
  // into parts (k >= 8 max(m, n) and >= 4096): each part and chunk reads its own columns of
  // the rows, or (A transposed: the reduction over 4096 slots) its own rows.
  for (int64_t width : {700, 4096}) {
    Case t{50, width, 16, 16, 1, false, false, false};
    std::vector<float> one = run(t, 4, 1);
    EXPECT_EQ(one, run(t, 4, 2));
  }
  Case slots{5000, 16, 16, 4096, 1, true, false, false};
  std::vector<float> one = run(slots, 2, 1);
  EXPECT_EQ(one, run(slots, 2, 2));
}

// stepc_batch_matmul_masked_f32: A's own rows, those with a negative id known zero (the
// compiler proved it), so never read: here they hold garbage (NaN and 1e30), and the result is
// the product with those rows zero, in every layout, the same bits on 1 and 2 threads.
std::vector<float> runMasked(bool transA, bool transB, bool accumulate, int threads) {
  setPoolThreads(threads);
  int64_t batches = 5, slots = 30, width = 24, n = 20;
  std::mt19937 rng(static_cast<unsigned>(7 + 2 * transA + transB));
  std::uniform_real_distribution<float> u(-1, 1);
  Case shape{slots, width, n, slots, 1, transA, transB, accumulate};
  std::vector<int32_t> ids = makeIds(shape, batches, rng);
  std::vector<float> a(batches * slots * width);
  for (int64_t e = 0; e < batches; ++e)
    for (int64_t r = 0; r < slots; ++r)
      for (int64_t d = 0; d < width; ++d)
        a[(e * slots + r) * width + d] =
            ids[e * slots + r] >= 0 ? u(rng) : (d % 2 ? 1e30f : std::nanf(""));
  int64_t m = transA ? width : slots, k = transA ? slots : width;
  int64_t bRows = transB ? n : k, bCols = transB ? k : n;
  std::vector<float> b(batches * bRows * bCols), c(batches * m * n);
  for (float &v : b) v = u(rng);
  for (float &v : c) v = u(rng) * 1e3f;
  auto stored = [&](int64_t e, int64_t r, int64_t d) -> double {
    return ids[e * slots + r] < 0 ? 0.0 : a[(e * slots + r) * width + d];
  };
  std::vector<double> expected(c.begin(), c.end());
  for (int64_t e = 0; e < batches; ++e)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = accumulate ? expected[(e * m + i) * n + j] : 0.0;
        for (int64_t p = 0; p < k; ++p)
          sum += (transA ? stored(e, p, i) : stored(e, i, p)) *
                 (transB ? b[(e * bRows + j) * bCols + p] : b[(e * bRows + p) * bCols + j]);
        expected[(e * m + i) * n + j] = sum;
      }
  StridedMemRef<3> A{a.data(), a.data(), 0, {batches, slots, width}, {slots * width, width, 1}};
  StridedMemRef<3> B{b.data(), b.data(), 0, {batches, bRows, bCols}, {bRows * bCols, bCols, 1}};
  StridedMemRef<3> C{c.data(), c.data(), 0, {batches, m, n}, {m * n, n, 1}};
  StridedMemRef<2, int32_t> I{ids.data(), ids.data(), 0, {batches, slots}, {slots, 1}};
  _mlir_ciface_stepc_batch_matmul_masked_f32(&A, &B, &C, &I, transA, transB, accumulate);
  for (size_t i = 0; i < c.size(); ++i)
    EXPECT_NEAR(c[i], expected[i], 3e-4 + 2e-6 * std::fabs(expected[i]))
        << "element " << i << ", transA " << transA << " transB " << transB << " accumulate "
        << accumulate;
  return c;
}

TEST(MaskedGemm, EmptySlotsAreNeverRead) {
  for (bool transA : {false, true})
    for (bool transB : {false, true})
      for (bool accumulate : {false, true})
        EXPECT_EQ(runMasked(transA, transB, accumulate, 1),
                  runMasked(transA, transB, accumulate, 2));
}

TEST(MaskedGemm, LibraryFallbackNeverReadsThemEither) {
  // STEPC_GEMM naming a library sends these calls to it (the sanitized suites run so): a copy
  // of A without the masked rows, then the plain GEMM. The library is chosen once per process,
  // so this case runs in a fresh process of its own (re-executed, not forked).
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("STEPC_GEMM", "openblas", 1);
        for (bool transA : {false, true})
          for (bool transB : {false, true}) runMasked(transA, transB, false, 2);
        std::exit(::testing::Test::HasFailure() ? 1 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace stepc::rt
