//===- WinogradTransforms.cpp - Toom-Cook matrices of F(m, r) -------------===//
#include "compiler/Conversion/StepToLinalg/WinogradTransforms.h"

namespace stepc::lowering {
namespace {

// Interpolation points, the first α - 1 of them used. Beyond 0, ±1, ±2 and ±1/2 (the usual
// F(2, 3)..F(4, 3) set) each pair keeps a point and its reciprocal's size balanced; this order
// gave the smallest f32 error for F(4, 7) among the sets tried (±3, ±1/3, ±1/4, ±4, ±3/2).
constexpr double kPoints[kMaxWinogradAlpha - 1] = {
    0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 1.5, -2.0 / 3.0, -1.5, 2.0 / 3.0, 3.0, -3.0};

}  // namespace

std::optional<WinogradTransforms> winogradTransforms(int64_t m, int64_t r) {
  if (m < 1 || r < 2 || m + r - 1 > kMaxWinogradAlpha) return std::nullopt;
  WinogradTransforms t;
  t.m = m;
  t.r = r;
  t.alpha = m + r - 1;
  const int64_t a = t.alpha, n = a - 1;  // n finite points, then infinity
  auto power = [](long double p, int64_t e) {
    long double v = 1;
    for (int64_t i = 0; i < e; ++i) v *= p;
    return v;
  };
  // G: each point evaluates the filter polynomial; infinity reads its leading coefficient.
  t.g.assign(a * r, 0.0);
  for (int64_t x = 0; x < n; ++x)
    for (int64_t k = 0; k < r; ++k) t.g[x * r + k] = static_cast<double>(power(kPoints[x], k));
  t.g[n * r + (r - 1)] = 1.0;
  // Aᵀ = Hᵀ: H evaluates the degree-(m-1) polynomial the same way.
  t.at.assign(m * a, 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t x = 0; x < n; ++x) t.at[i * a + x] = static_cast<double>(power(kPoints[x], i));
    t.at[i * a + n] = i == m - 1 ? 1.0 : 0.0;
  }
  // The inverse Vandermonde of the finite points by Lagrange's basis: column x holds the
  // coefficients of L_x(p) = Π_{y≠x} (p - p_y) / (p_x - p_y), built in long double.
  std::vector<long double> vinv(n * n, 0.0L);  // [coefficient j][point x]
  for (int64_t x = 0; x < n; ++x) {
    std::vector<long double> poly = {1.0L};
    long double denominator = 1.0L;
    for (int64_t y = 0; y < n; ++y) {
      if (y == x) continue;
      std::vector<long double> next(poly.size() + 1, 0.0L);
      for (size_t j = 0; j < poly.size(); ++j) {
        next[j + 1] += poly[j];
        next[j] -= poly[j] * kPoints[y];
      }
      poly = std::move(next);
      denominator *= kPoints[x] - kPoints[y];
    }
    for (int64_t j = 0; j < n; ++j) vinv[j * n + x] = poly[j] / denominator;
  }
  // C (α × α) recovers the product's coefficients from its values: the leading one is the
  // value at infinity, the others interpolate the finite values less its p^(α-1) term.
  // Bᵀ = Cᵀ.
  t.bt.assign(a * a, 0.0);
  for (int64_t j = 0; j < n; ++j) {
    long double atInfinity = 0.0L;
    for (int64_t x = 0; x < n; ++x) {
      t.bt[x * a + j] = static_cast<double>(vinv[j * n + x]);
      atInfinity -= vinv[j * n + x] * power(kPoints[x], n);
    }
    t.bt[n * a + j] = static_cast<double>(atInfinity);
  }
  t.bt[n * a + n] = 1.0;
  return t;
}

}  // namespace stepc::lowering
