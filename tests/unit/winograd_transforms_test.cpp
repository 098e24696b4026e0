// Winograd's F(m, r) matrices (compiler/Conversion/StepToLinalg/WinogradTransforms.h): in
// double precision Aᵀ[(G g) ⊙ (Bᵀ d)] is the correlation y[i] = Σ_k d[i + k] g[k] for every
// supported (m, r), and the weight-gradient identity the lowering uses holds; the f32 error of
// F(4, 7) on random data stays at the size the documentation states.
#include "compiler/Conversion/StepToLinalg/WinogradTransforms.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace stepc::lowering {
namespace {

// Aᵀ[(G g) ⊙ (Bᵀ d)] in the type T (double, or float to measure the error).
template <typename T>
std::vector<T> winograd(const WinogradTransforms &t, const std::vector<T> &d,
                        const std::vector<T> &g) {
  std::vector<T> product(t.alpha);
  for (int64_t x = 0; x < t.alpha; ++x) {
    T u = 0, v = 0;
    for (int64_t k = 0; k < t.r; ++k) u += static_cast<T>(t.gAt(x, k)) * g[k];
    for (int64_t j = 0; j < t.alpha; ++j) v += static_cast<T>(t.btAt(x, j)) * d[j];
    product[x] = u * v;
  }
  std::vector<T> y(t.m, 0);
  for (int64_t i = 0; i < t.m; ++i)
    for (int64_t x = 0; x < t.alpha; ++x) y[i] += static_cast<T>(t.atAt(i, x)) * product[x];
  return y;
}

TEST(WinogradTransforms, ComputesTheCorrelationForEverySupportedSize) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  int checked = 0;
  for (int64_t m = 1; m <= 12; ++m)
    for (int64_t r = 2; r <= 13; ++r) {
      std::optional<WinogradTransforms> t = winogradTransforms(m, r);
      ASSERT_EQ(t.has_value(), m + r - 1 <= kMaxWinogradAlpha) << "F(" << m << ", " << r << ")";
      if (!t) continue;
      std::vector<double> d(t->alpha), g(r);
      for (double &v : d) v = u(rng);
      for (double &v : g) v = u(rng);
      std::vector<double> y = winograd(*t, d, g);
      for (int64_t i = 0; i < m; ++i) {
        double direct = 0;
        for (int64_t k = 0; k < r; ++k) direct += d[i + k] * g[k];
        // The points' powers reach (3/2)^13; the double error stays far below this.
        EXPECT_NEAR(y[i], direct, 1e-9) << "F(" << m << ", " << r << ") output " << i;
      }
      ++checked;
    }
  EXPECT_EQ(checked, 89);  // every (m, r) with 1 ≤ m ≤ 12, r ≥ 2, m + r - 1 ≤ 14
}

TEST(WinogradTransforms, RefusesWhatThePointsDoNotCover) {
  EXPECT_FALSE(winogradTransforms(0, 3));
  EXPECT_FALSE(winogradTransforms(4, 1));
  EXPECT_FALSE(winogradTransforms(8, 8));  // α = 15
}

// The weight gradient of y = Aᵀ[(G g) ⊙ (Bᵀ d)] is Gᵀ[(Bᵀ d) ⊙ (A dy)], which the lowering's
// conv1d_grad_weight computes; it must equal the direct dg[k] = Σ_i d[i + k] dy[i].
TEST(WinogradTransforms, WeightGradientIdentity) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (auto [m, r] : {std::pair<int64_t, int64_t>{4, 7}, {6, 7}, {2, 3}, {4, 11}}) {
    WinogradTransforms t = *winogradTransforms(m, r);
    std::vector<double> d(t.alpha), dy(m);
    for (double &v : d) v = u(rng);
    for (double &v : dy) v = u(rng);
    for (int64_t k = 0; k < r; ++k) {
      double viaWinograd = 0;
      for (int64_t x = 0; x < t.alpha; ++x) {
        double v = 0, z = 0;
        for (int64_t j = 0; j < t.alpha; ++j) v += t.btAt(x, j) * d[j];
        for (int64_t i = 0; i < m; ++i) z += t.atAt(i, x) * dy[i];
        viaWinograd += t.gAt(x, k) * v * z;
      }
      double direct = 0;
      for (int64_t i = 0; i < m; ++i) direct += d[i + k] * dy[i];
      EXPECT_NEAR(viaWinograd, direct, 1e-9) << "F(" << m << ", " << r << ") tap " << k;
    }
  }
}

// F(4, 7) in float on random tiles: the error against the double correlation, relative to the
// largest output, stays below 4e-5 for one channel pair in 2000 random tiles (measured 1.7e-5;
// the direct sum of 7 products errs by ~4e-7), and F(6, 7)'s below 8e-5 (measured 3.5e-5).
// Over Cin channels the errors average out: benchmarks/README.md measures whole convolutions.
TEST(WinogradTransforms, FloatErrorOfTheDefaultTiles) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (auto [m, bound] : {std::pair<int64_t, double>{4, 4e-5}, {6, 8e-5}}) {
    WinogradTransforms t = *winogradTransforms(m, 7);
    double worst = 0;
    for (int trial = 0; trial < 2000; ++trial) {
      std::vector<double> d(t.alpha), g(7);
      for (double &v : d) v = u(rng);
      for (double &v : g) v = u(rng);
      std::vector<float> df(d.begin(), d.end()), gf(g.begin(), g.end());
      std::vector<float> y = winograd(t, df, gf);
      double scale = 0, error = 0;
      for (int64_t i = 0; i < m; ++i) {
        double direct = 0;
        for (int64_t k = 0; k < 7; ++k) direct += double(df[i + k]) * double(gf[k]);
        scale = std::max(scale, std::abs(direct));
        error = std::max(error, std::abs(double(y[i]) - direct));
      }
      worst = std::max(worst, error / std::max(scale, 0.5));
    }
    EXPECT_LT(worst, bound) << "F(" << m << ", 7)";
  }
}

}  // namespace
}  // namespace stepc::lowering
