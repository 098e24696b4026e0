// Parameter initialisers: orthogonality, distributions, determinism and name streams.
#include "runtime/base/Init.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "runtime/base/Philox.h"

namespace stepc::rt {
namespace {

InitSpec spec(const std::string &kind) {
  InitSpec s;
  s.kind = kind;
  return s;
}

std::vector<double> init(const InitSpec &s, const std::string &name,
                         const std::vector<int64_t> &shape, int stacked = 0, uint64_t seed = 1) {
  std::vector<double> out;
  std::string error = initParameter(s, name, shape, stacked, seed, out);
  EXPECT_EQ(error, "");
  return out;
}

// max |(A Aᵀ)_ij - expected δ_ij| for the [rows, cols] matrix at a[offset], over rows
// (or over columns when `columns`).
double gramError(const std::vector<double> &a, int64_t offset, int64_t rows, int64_t cols,
                 bool columns, double expectedDiagonal) {
  int64_t count = columns ? cols : rows, length = columns ? rows : cols;
  auto at = [&](int64_t vec, int64_t e) {
    return columns ? a[offset + e * cols + vec] : a[offset + vec * cols + e];
  };
  double worst = 0.0;
  for (int64_t i = 0; i < count; ++i)
    for (int64_t j = 0; j < count; ++j) {
      double dot = 0.0;
      for (int64_t e = 0; e < length; ++e) dot += at(i, e) * at(j, e);
      worst = std::max(worst, std::abs(dot - (i == j ? expectedDiagonal : 0.0)));
    }
  return worst;
}

TEST(Orthogonal, WideMatrixHasOrthonormalRowsTimesGain) {
  InitSpec s = spec("orthogonal");
  s.gain = 1.5;
  std::vector<double> w = init(s, "w", {5, 12});
  EXPECT_LT(gramError(w, 0, 5, 12, /*columns=*/false, 1.5 * 1.5), 1e-12);
}

TEST(Orthogonal, SquareMatrixIsOrthogonalBothWays) {
  std::vector<double> w = init(spec("orthogonal"), "w", {6, 6});
  EXPECT_LT(gramError(w, 0, 6, 6, false, 1.0), 1e-12);
  EXPECT_LT(gramError(w, 0, 6, 6, true, 1.0), 1e-12);
}

TEST(Orthogonal, TallMatrixHasOrthonormalColumns) {
  std::vector<double> w = init(spec("orthogonal"), "w", {20, 4});
  EXPECT_LT(gramError(w, 0, 20, 4, /*columns=*/true, 1.0), 1e-12);
  // Rows of a tall matrix cannot be orthonormal: there are more of them than dimensions.
  EXPECT_GT(gramError(w, 0, 20, 4, /*columns=*/false, 1.0), 0.1);
}

TEST(Orthogonal, LeadingDimsFoldIntoRowsAndStackedLayersAreIndependent) {
  // Two layers of a [K=3, I=2, O=4] weight: each layer is a [6, 4] matrix (tall -> columns).
  std::vector<double> w = init(spec("orthogonal"), "cell.w1", {2, 3, 2, 4}, /*stacked=*/1);
  ASSERT_EQ(w.size(), 48u);
  EXPECT_LT(gramError(w, 0, 6, 4, true, 1.0), 1e-12);
  EXPECT_LT(gramError(w, 24, 6, 4, true, 1.0), 1e-12);
  EXPECT_NE(std::vector<double>(w.begin(), w.begin() + 24),
            std::vector<double>(w.begin() + 24, w.end()));
}

TEST(Orthogonal, NeedsTwoUnstackedDims) {
  std::vector<double> out;
  EXPECT_NE(initParameter(spec("orthogonal"), "v", {4, 8}, 1, 1, out), "");
  EXPECT_NE(initParameter(spec("orthogonal"), "v", {8}, 0, 1, out), "");
}

// The textbook modified Gram-Schmidt, one vector at a time, on the same draws as Init.cpp:
// the panelled, lane-interleaved, multi-threaded version must give exactly these bits.
std::vector<double> textbookOrthogonal(const std::string &name, int64_t rows, int64_t cols,
                                       uint64_t seed, double gain) {
  bool byRows = rows <= cols;
  int64_t count = byRows ? rows : cols, length = byRows ? cols : rows;
  std::vector<double> v(count * length), out(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      v[byRows ? r * cols + c : c * rows + r] =
          standardNormal(seed, hashName(name), static_cast<uint64_t>(r * cols + c));
  for (int64_t j = 0; j < count; ++j) {
    double *vj = &v[j * length];
    for (int64_t i = 0; i < j; ++i) {
      const double *vi = &v[i * length];
      double dot = 0.0;
      for (int64_t e = 0; e < length; ++e) dot += vi[e] * vj[e];
      for (int64_t e = 0; e < length; ++e) vj[e] -= dot * vi[e];
    }
    double norm = 0.0;
    for (int64_t e = 0; e < length; ++e) norm += vj[e] * vj[e];
    norm = std::sqrt(norm);
    for (int64_t e = 0; e < length; ++e) vj[e] /= norm;
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[r * cols + c] = gain * v[byRows ? r * cols + c : c * rows + r];
  return out;
}

// Sizes around the panel (32 vectors) and lane (8) boundaries, and one large enough that the
// panels' updates are split over threads (a tall [600, 500] and a wide [450, 700]).
TEST(Orthogonal, BitIdenticalToTheTextbookLoop) {
  InitSpec s = spec("orthogonal");
  s.gain = 1.7;
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
           {9, 7}, {7, 9}, {33, 40}, {65, 64}, {100, 71}, {600, 500}, {450, 700}}) {
    std::vector<double> got = init(s, "layer.w", {rows, cols}, 0, 11);
    std::vector<double> want = textbookOrthogonal("layer.w", rows, cols, 11, 1.7);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(double)), 0)
        << rows << " x " << cols;
  }
}

TEST(Normal, HasTheRequestedMeanAndStd) {
  InitSpec s = spec("normal");
  s.std = 0.02;
  s.mean = 0.5;
  s.gain = 2.0;
  std::vector<double> w = init(s, "wte", {200, 100});
  double sum = 0.0, sumSq = 0.0;
  for (double v : w) sum += v;
  double mean = sum / w.size();
  for (double v : w) sumSq += (v - mean) * (v - mean);
  double stdev = std::sqrt(sumSq / w.size());
  EXPECT_NEAR(mean, 1.0, 0.002);    // gain * mean
  EXPECT_NEAR(stdev, 0.04, 0.001);  // gain * std
}

TEST(Uniform, StaysWithinItsBounds) {
  InitSpec s = spec("uniform");
  s.a = -0.25;
  s.b = 0.75;
  std::vector<double> w = init(s, "u", {1000});
  double lowest = 1.0, highest = -1.0, sum = 0.0;
  for (double v : w) {
    lowest = std::min(lowest, v);
    highest = std::max(highest, v);
    sum += v;
  }
  EXPECT_GE(lowest, -0.25);
  EXPECT_LT(highest, 0.75);
  EXPECT_NEAR(sum / w.size(), 0.25, 0.03);
}

TEST(ConstantKinds, FillWithValueTimesGain) {
  InitSpec zeros = spec("zeros"), ones = spec("ones"), constant = spec("constant");
  ones.gain = 3.0;
  constant.value = 0.25;
  constant.gain = 2.0;
  EXPECT_EQ(init(zeros, "z", {2, 2}), std::vector<double>(4, 0.0));
  EXPECT_EQ(init(ones, "o", {3}), std::vector<double>(3, 3.0));
  EXPECT_EQ(init(constant, "c", {2}), std::vector<double>(2, 0.5));
}

TEST(Determinism, SameSeedAndNameGiveTheSameValues) {
  InitSpec s = spec("normal");
  EXPECT_EQ(init(s, "w", {4, 4}, 0, 7), init(s, "w", {4, 4}, 0, 7));
  EXPECT_EQ(init(spec("orthogonal"), "w", {4, 4}, 0, 7), init(spec("orthogonal"), "w", {4, 4}, 0, 7));
}

TEST(Determinism, DifferentNamesOrSeedsDiffer) {
  InitSpec s = spec("normal");
  std::vector<double> a = init(s, "w1", {4, 4}, 0, 7);
  EXPECT_NE(a, init(s, "w2", {4, 4}, 0, 7));
  EXPECT_NE(a, init(s, "w1", {4, 4}, 0, 8));
}

TEST(Errors, UnknownKindIsReported) {
  std::vector<double> out;
  EXPECT_NE(initParameter(spec("xavier"), "w", {2, 2}, 0, 1, out), "");
}

TEST(HashName, IsFnv1a64) {
  EXPECT_EQ(hashName(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(hashName("a"), 0xaf63dc4c8601ec8cull);
}

}  // namespace
}  // namespace stepc::rt
