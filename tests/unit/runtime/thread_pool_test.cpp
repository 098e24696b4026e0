// The thread pool runs every index of a range exactly once, for any thread count and range,
// including ranges shorter than the pool and the packed-argument entry compiled code calls;
// GEMMs split over it (rows or columns, transposed or not, = or +=) equal plain loops.
#include <atomic>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/hal/Gemm.h"
#include "runtime/hal/cpu/ThreadPool.h"

namespace stepc::rt {
namespace {

struct Counts {
  std::vector<std::atomic<int>> hits;
  explicit Counts(size_t n) : hits(n) {}
};

void countRange(void *context, int64_t lo, int64_t hi) {
  auto *c = static_cast<Counts *>(context);
  for (int64_t i = lo; i < hi; ++i) c->hits[static_cast<size_t>(i)].fetch_add(1);
}

TEST(ThreadPool, EveryIndexOnceForAnyThreadCountAndRange) {
  for (int threads : {1, 2, 3, 5}) {
    setPoolThreads(threads);
    EXPECT_EQ(poolThreads(), threads);
    for (int64_t n : {0, 1, 2, 3, 7, 64, 1000}) {
      for (int round = 0; round < 3; ++round) {  // back-to-back loops reuse the workers
        Counts c(static_cast<size_t>(n) + 5);
        parallelFor(5, 5 + n, countRange, &c);
        for (int64_t i = 0; i < n + 5; ++i)
          EXPECT_EQ(c.hits[static_cast<size_t>(i)].load(), i >= 5 ? 1 : 0)
              << "threads " << threads << ", n " << n << ", index " << i;
      }
    }
  }
}

// What --step-dispatch-parallel-kernels emits calls: task(argv, lo, hi) with the arguments
// packed in argv.
void packedTask(void **argv, int64_t lo, int64_t hi) {
  auto *out = static_cast<float *>(argv[0]);
  float scale = *static_cast<float *>(argv[1]);
  for (int64_t i = lo; i < hi; ++i) out[i] = scale * static_cast<float>(i);
}

TEST(ThreadPool, PackedEntryPoint) {
  setPoolThreads(3);
  std::vector<float> out(100, -1);
  float scale = 0.5f;
  void *argv[] = {out.data(), &scale};
  stepc_parallel_for(packedTask, argv, 10, 90);
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(out[i], i >= 10 && i < 90 ? 0.5f * static_cast<float>(i) : -1.0f) << i;
}

StridedMemRef<2> view(std::vector<float> &data, int64_t rows, int64_t cols) {
  return {data.data(), data.data(), 0, {rows, cols}, {cols, 1}};
}

// C (+)= op(A) op(B) through the interface, against a double-precision loop.
void checkGemm(int64_t m, int64_t n, int64_t k, bool transA, bool transB, bool accumulate) {
  std::mt19937 rng(static_cast<unsigned>(m * 131 + n * 7 + k));
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)),
      c(static_cast<size_t>(m * n));
  for (float &x : a) x = u(rng);
  for (float &x : b) x = u(rng);
  for (float &x : c) x = u(rng);
  std::vector<float> expected(c);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = accumulate ? expected[i * n + j] : 0.0;
      for (int64_t p = 0; p < k; ++p)
        sum += static_cast<double>(transA ? a[p * m + i] : a[i * k + p]) *
               static_cast<double>(transB ? b[j * k + p] : b[p * n + j]);
      expected[i * n + j] = static_cast<float>(sum);
    }
  auto A = transA ? view(a, k, m) : view(a, m, k);
  auto B = transB ? view(b, n, k) : view(b, k, n);
  auto C = view(c, m, n);
  _mlir_ciface_stepc_matmul_f32(&A, &B, &C, transA, transB, accumulate);
  double worst = 0;
  for (size_t i = 0; i < c.size(); ++i) worst = std::max(worst, std::fabs(double(c[i]) - expected[i]));
  EXPECT_LT(worst, 1e-3) << m << "x" << n << "x" << k << " transA " << transA << " transB "
                         << transB << " accumulate " << accumulate;
}

TEST(ThreadPool, SplitGemmsEqualLoops) {
  useSingleThreadedBlas();
  for (int threads : {1, 2, 3}) {
    setPoolThreads(threads);
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (bool acc : {false, true}) {
          checkGemm(203, 67, 150, ta, tb, acc);  // taller than wide: split by rows
          checkGemm(45, 301, 160, ta, tb, acc);  // wider than tall: split by columns
          checkGemm(5, 7, 3, ta, tb, acc);       // too small to split
        }
  }
}

// An operand whose stored rows overlap: row r of a stored [rows, cols] view starts at r·ld with
// ld < cols (a convolution's window over a sequence; ld = 0 broadcasts one row).
struct Overlapping {
  std::vector<float> data;
  StridedMemRef<2> view;
  float at(int64_t r, int64_t c) const { return data[static_cast<size_t>(r * view.strides[0] + c)]; }
};
Overlapping overlapping(int64_t rows, int64_t cols, int64_t ld, std::mt19937 &rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  Overlapping o;
  o.data.resize(static_cast<size_t>((rows - 1) * ld + cols));
  for (float &x : o.data) x = u(rng);
  o.view = {o.data.data(), o.data.data(), 0, {rows, cols}, {ld, 1}};
  return o;
}

// C = op(A) op(B) with one operand overlapping, against a double loop; the bits are the same at
// every thread count (the packed panels and their reduction chunks depend on the shape only).
void checkOverlapping(int64_t m, int64_t n, int64_t k, int64_t ld, bool overlapA, bool trans) {
  std::mt19937 rng(static_cast<unsigned>(m * 31 + n * 7 + k + ld));
  std::uniform_real_distribution<float> u(-1, 1);
  // The overlapping operand stored [m, k] or, transposed, [k, m] (A); [k, n] or [n, k] (B).
  int64_t rows = overlapA ? (trans ? k : m) : (trans ? n : k);
  int64_t cols = overlapA ? (trans ? m : k) : (trans ? k : n);
  Overlapping o = overlapping(rows, cols, ld, rng);
  int64_t other = overlapA ? k * n : m * k;
  std::vector<float> plain(static_cast<size_t>(other));
  for (float &x : plain) x = u(rng);
  auto opA = [&](int64_t i, int64_t p) -> double {
    if (overlapA) return trans ? o.at(p, i) : o.at(i, p);
    return plain[static_cast<size_t>(i * k + p)];
  };
  auto opB = [&](int64_t p, int64_t j) -> double {
    if (!overlapA) return trans ? o.at(j, p) : o.at(p, j);
    return plain[static_cast<size_t>(p * n + j)];
  };
  std::vector<double> expected(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += opA(i, p) * opB(p, j);
      expected[static_cast<size_t>(i * n + j)] = sum;
    }
  StridedMemRef<2> P = overlapA ? view(plain, k, n) : view(plain, m, k);
  std::vector<float> first;
  for (int threads : {1, 2, 3}) {
    setPoolThreads(threads);
    std::vector<float> c(static_cast<size_t>(m * n), 7.0f);
    auto C = view(c, m, n);
    if (overlapA)
      _mlir_ciface_stepc_matmul_f32(&o.view, &P, &C, trans, 0, 0);
    else
      _mlir_ciface_stepc_matmul_f32(&P, &o.view, &C, 0, trans, 0);
    double worst = 0;
    for (size_t i = 0; i < c.size(); ++i) worst = std::max(worst, std::fabs(c[i] - expected[i]));
    EXPECT_LT(worst, 1e-3 * std::sqrt(double(k))) << m << "x" << n << "x" << k << " ld " << ld
                                                 << (overlapA ? " A" : " B") << " trans " << trans;
    if (first.empty()) first = c;
    EXPECT_EQ(c, first) << "threads " << threads << ": " << m << "x" << n << "x" << k;
  }
}

TEST(ThreadPool, OverlappingRowsEqualLoops) {
  useSingleThreadedBlas();
  // A convolution's forward: a window [R, K·C] over rows of C = 40 (K = 8), split by rows.
  checkOverlapping(700, 48, 320, 40, true, false);
  // Its input gradient: a window K·Cout = 1056 deep, packed in two reduction chunks.
  checkOverlapping(266, 32, 1056, 96, true, false);
  // Its weight gradient: the window transposed, a reduction of 2000 rows packed in chunks.
  checkOverlapping(320, 48, 2000, 40, true, true);
  // The overlapping operand on the right, either way, and a small one left whole.
  checkOverlapping(300, 96, 200, 8, false, false);
  checkOverlapping(300, 96, 200, 8, false, true);
  checkOverlapping(9, 5, 12, 3, true, false);
  // A broadcast row (ld 0).
  checkOverlapping(257, 33, 64, 0, true, false);
}

}  // namespace
}  // namespace stepc::rt
