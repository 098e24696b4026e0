// The CUDA step's GEMMs run on cuBLASLt, which is column-major: planGemm maps a row-major GEMM
// D = op(A)·op(B) on MLIR strided views to cuBLASLt's layouts and transposes. Checked here
// without a GPU: what cuBLASLt computes from the plan (column-major D = op(A')·op(B'), as its
// documentation defines it, evaluated with loops) equals the row-major GEMM, for every
// combination of transposes, row- and column-major operand views, padded leading dimensions and
// degenerate shapes; and views cuBLASLt cannot take (no unit stride, overlapping rows, a
// column-major output) are refused with a reason.
#include <random>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/hal/cuda/Blas.h"

namespace stepc::rt::cuda {
namespace {

// A matrix of rows x cols stored at `data` with element strides (s0, s1).
struct View {
  std::vector<float> data;
  int64_t sizes[2], strides[2];
  float at(int64_t i, int64_t j) const { return data[i * strides[0] + j * strides[1]]; }
};

// rows x cols, row-major (ld >= cols) or column-major (ld >= rows), random values.
View make(int64_t rows, int64_t cols, bool columnMajor, int64_t pad, std::mt19937 &rng) {
  View v;
  v.sizes[0] = rows;
  v.sizes[1] = cols;
  int64_t ld = (columnMajor ? rows : cols) + pad;
  if (columnMajor) {
    v.strides[0] = 1;
    v.strides[1] = ld;
    v.data.resize(static_cast<size_t>(ld * cols + rows));
  } else {
    v.strides[0] = ld;
    v.strides[1] = 1;
    v.data.resize(static_cast<size_t>(ld * rows + cols));
  }
  std::uniform_real_distribution<float> u(-1, 1);
  for (float &x : v.data) x = u(rng);
  return v;
}

// What cuBLASLt computes for the plan: column-major D' (rows x cols, ld) = op(A') op(B'),
// where A' is read from our B's memory and B' from our A's, both column-major with their ld.
std::vector<float> cublasLt(const LtGemm &g, const View &a, const View &b, int64_t dSize) {
  std::vector<float> d(static_cast<size_t>(dSize), 0.0f);
  const float *x = b.data.data(), *y = a.data.data();
  auto xAt = [&](uint64_t i, uint64_t p) {  // op(A')[i, p]
    return g.transA ? x[p + i * g.a.ld] : x[i + p * g.a.ld];
  };
  auto yAt = [&](uint64_t p, uint64_t j) {  // op(B')[p, j]
    return g.transB ? y[j + p * g.b.ld] : y[p + j * g.b.ld];
  };
  // op(A') must be d.rows x k, op(B') k x d.cols.
  uint64_t k = static_cast<uint64_t>(g.k);
  EXPECT_EQ(g.transA ? g.a.cols : g.a.rows, g.d.rows);
  EXPECT_EQ(g.transA ? g.a.rows : g.a.cols, k);
  EXPECT_EQ(g.transB ? g.b.cols : g.b.rows, k);
  EXPECT_EQ(g.transB ? g.b.rows : g.b.cols, g.d.cols);
  for (uint64_t i = 0; i < g.d.rows; ++i)
    for (uint64_t j = 0; j < g.d.cols; ++j) {
      double sum = 0;
      for (uint64_t p = 0; p < k; ++p) sum += double(xAt(i, p)) * yAt(p, j);
      d[i + j * g.d.ld] = static_cast<float>(sum);
    }
  return d;
}

TEST(CudaBlas, PlanComputesTheRowMajorGemm) {
  std::mt19937 rng(7);
  int cases = 0;
  for (auto [m, n, k] : {std::tuple{4, 5, 3}, std::tuple{1, 7, 2}, std::tuple{6, 1, 4},
                         std::tuple{3, 3, 1}, std::tuple{8, 2, 9}})
    for (bool transA : {false, true})
      for (bool transB : {false, true})
        for (bool aColumnMajor : {false, true})
          for (bool bColumnMajor : {false, true})
            for (int64_t pad : {0, 3}) {
              // op(A) is m x k: the view is k x m when transposed.
              View a = transA ? make(k, m, aColumnMajor, pad, rng) : make(m, k, aColumnMajor, pad, rng);
              View b = transB ? make(n, k, bColumnMajor, pad, rng) : make(k, n, bColumnMajor, pad, rng);
              int64_t ldd = n + pad;
              int64_t dSizes[2] = {m, n}, dStrides[2] = {ldd, 1};
              LtGemm g = planGemm(a.sizes, a.strides, transA, b.sizes, b.strides, transB, dSizes,
                                  dStrides);
              ASSERT_TRUE(g.error.empty()) << g.error;
              EXPECT_EQ(g.m, m);
              EXPECT_EQ(g.n, n);
              EXPECT_EQ(g.k, k);
              std::vector<float> d = cublasLt(g, a, b, ldd * m + n);
              for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j) {
                  double want = 0;
                  for (int64_t p = 0; p < k; ++p)
                    want += double(transA ? a.at(p, i) : a.at(i, p)) *
                            (transB ? b.at(j, p) : b.at(p, j));
                  // Row-major D[i, j] is column-major D'[j, i].
                  ASSERT_NEAR(d[j + i * g.d.ld], want, 1e-5)
                      << "m=" << m << " n=" << n << " k=" << k << " transA=" << transA
                      << " transB=" << transB << " aColumnMajor=" << aColumnMajor
                      << " bColumnMajor=" << bColumnMajor << " pad=" << pad;
                }
              ++cases;
            }
  EXPECT_EQ(cases, 5 * 2 * 2 * 2 * 2 * 2);
}

TEST(CudaBlas, LeadingDimensionOfThePaddedOutput) {
  int64_t aSizes[2] = {4, 3}, aStrides[2] = {3, 1}, bSizes[2] = {3, 5}, bStrides[2] = {5, 1};
  int64_t dSizes[2] = {4, 5}, dStrides[2] = {8, 1};
  LtGemm g = planGemm(aSizes, aStrides, false, bSizes, bStrides, false, dSizes, dStrides);
  ASSERT_TRUE(g.error.empty());
  EXPECT_FALSE(g.transA);
  EXPECT_FALSE(g.transB);
  EXPECT_EQ(g.a.rows, 5u);  // our B, 3 x 5 row-major, is 5 x 3 column-major
  EXPECT_EQ(g.a.cols, 3u);
  EXPECT_EQ(g.a.ld, 5);
  EXPECT_EQ(g.d.rows, 5u);
  EXPECT_EQ(g.d.cols, 4u);
  EXPECT_EQ(g.d.ld, 8);
}

// The bias-gradient fallback (a fused DGELU_BGRAD or BGRADA without an algorithm): column
// sums of a padded row-major matrix as ones · M, planned and evaluated as cuBLASLt would.
TEST(CudaBlas, ColumnSumsAsAGemm) {
  std::mt19937 rng(7);
  for (auto [rows, cols, pad] : {std::tuple{37, 5, 3}, std::tuple{1, 8, 0}, std::tuple{64, 1, 7}}) {
    View m = make(rows, cols, /*columnMajor=*/false, pad, rng);
    View ones;
    ones.sizes[0] = 1;
    ones.sizes[1] = rows;
    ones.strides[0] = rows;
    ones.strides[1] = 1;
    ones.data.assign(static_cast<size_t>(rows), 1.0f);
    LtGemm g = planColumnSums(rows, cols, m.strides[0]);
    ASSERT_TRUE(g.error.empty()) << g.error;
    EXPECT_EQ(g.m, 1);
    EXPECT_EQ(g.n, cols);
    EXPECT_EQ(g.k, rows);
    std::vector<float> d = cublasLt(g, ones, m, static_cast<int64_t>(g.d.ld) * g.d.cols);
    for (int64_t j = 0; j < cols; ++j) {
      double want = 0;
      for (int64_t i = 0; i < rows; ++i) want += m.at(i, j);
      EXPECT_NEAR(d[static_cast<size_t>(j)], want, 1e-5) << rows << "x" << cols << " column " << j;
    }
  }
}

TEST(CudaBlas, RefusesWhatCublasLtCannotTake) {
  int64_t aSizes[2] = {4, 3}, aStrides[2] = {3, 1}, bSizes[2] = {3, 5}, bStrides[2] = {5, 1};
  int64_t colSizes[2] = {4, 5}, colStrides[2] = {1, 4};
  LtGemm g = planGemm(aSizes, aStrides, false, bSizes, bStrides, false, colSizes, colStrides);
  EXPECT_NE(g.error.find("row-major output"), std::string::npos) << g.error;
  int64_t gappy[2] = {6, 2};  // neither stride is 1
  int64_t dSizes[2] = {4, 5}, dStrides[2] = {5, 1};
  g = planGemm(aSizes, gappy, false, bSizes, bStrides, false, dSizes, dStrides);
  EXPECT_NE(g.error.find("without a unit stride"), std::string::npos) << g.error;
  int64_t broadcast[2] = {0, 1};  // every row the same memory
  g = planGemm(aSizes, broadcast, false, bSizes, bStrides, false, dSizes, dStrides);
  EXPECT_NE(g.error.find("overlapping rows"), std::string::npos) << g.error;
  int64_t overlapping[2] = {2, 1};
  g = planGemm(aSizes, aStrides, false, bSizes, bStrides, false, dSizes, overlapping);
  EXPECT_NE(g.error.find("rows overlap"), std::string::npos) << g.error;
}

}  // namespace
}  // namespace stepc::rt::cuda
