//===- WinogradTransforms.h - Toom-Cook matrices of F(m, r) -----*- C++ -*-===//
//
// A causal or valid convolution is a correlation y[i] = Σ_k d[i + k] g[k]. Winograd's minimal
// filtering F(m, r) computes m outputs of an r-tap correlation from a tile of α = m + r - 1
// inputs with α multiplications instead of m·r:
//   y = Aᵀ [(G g) ⊙ (Bᵀ d)]        Aᵀ: m × α, G: α × r, Bᵀ: α × α.
// With channels the ⊙ becomes α independent GEMMs over the channel dimension, which is where
// the saving lands: the convolution's multiplications shrink by m·r / α (2.8x for F(4, 7)).
//
// The matrices come from Toom-Cook interpolation at α - 1 finite points and infinity: the
// linear convolution of a degree-(r-1) and a degree-(m-1) polynomial is evaluated at the points
// (G, H), multiplied pointwise and interpolated back (C, the inverse Vandermonde with the
// leading coefficient read at infinity); by the transposition principle the correlation is
// Aᵀ = Hᵀ and Bᵀ = Cᵀ with the same G. The error grows with α and with the points' spread;
// the points are taken from a fixed list ordered so that small, reciprocal-balanced points come
// first (0, ±1, ±2, ±1/2, 3/2, -2/3, ...): measured on random data in f32, F(4, 7) at about
// 1e-5 of the output's largest magnitude (benchmarks/README.md, "Winograd convolution").
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CONVERSION_STEPTOLINALG_WINOGRADTRANSFORMS_H
#define STEPC_COMPILER_CONVERSION_STEPTOLINALG_WINOGRADTRANSFORMS_H

#include <cstdint>
#include <optional>
#include <vector>

namespace stepc::lowering {

struct WinogradTransforms {
  int64_t m = 0, r = 0, alpha = 0;  // outputs per tile, taps, tile inputs (m + r - 1)
  std::vector<double> at;           // Aᵀ, m × α, row-major
  std::vector<double> g;            // G, α × r
  std::vector<double> bt;           // Bᵀ, α × α
  double atAt(int64_t i, int64_t x) const { return at[i * alpha + x]; }
  double gAt(int64_t x, int64_t k) const { return g[x * r + k]; }
  double btAt(int64_t x, int64_t j) const { return bt[x * alpha + j]; }
};

/// The largest α the point list supports.
inline constexpr int64_t kMaxWinogradAlpha = 14;

/// F(m, r)'s matrices, or nothing when m < 1, r < 2 or m + r - 1 > kMaxWinogradAlpha.
std::optional<WinogradTransforms> winogradTransforms(int64_t m, int64_t r);

}  // namespace stepc::lowering

#endif  // STEPC_COMPILER_CONVERSION_STEPTOLINALG_WINOGRADTRANSFORMS_H
