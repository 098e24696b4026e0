//===- Init.cpp - parameter initialisers ---------------------------------===//
//
// Element i of a parameter is drawn at Philox index i (row-major over the stored, stacked
// shape), so each layer of a stacked parameter gets its own values and a parameter's values
// depend only on (seed, name, shape).
//
//===----------------------------------------------------------------------===//
#include "runtime/base/Init.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "runtime/base/Philox.h"

namespace stepc::rt {
namespace {

// Below this norm a drawn vector is treated as linearly dependent on the earlier ones. Gaussian
// draws essentially never get here; the check turns the impossible case into an error.
constexpr double kDependentNorm = 1e-10;

// Vectors j projected side by side: kLanes independent dot-product chains hide the adds'
// latency and fill the vector units. Written with the GCC/Clang vector extension as
// kLanes / W vectors of W doubles in separate variables (so that the accumulators stay in
// registers): W = 2 for every x86-64 (SSE2) and other targets, W = 4 where the CPU has AVX2.
// Each lane is plain IEEE arithmetic (no fused multiply-add: AVX2 does not imply FMA).
constexpr int64_t kLanes = 8;

// v_j -= (v_i · v_j) v_i for the finished vectors i in [i0, i1), in that order, in each vector
// j in [j0, j1): modified Gram-Schmidt's step. kLanes vectors j at a time are copied
// interleaved (element e of lane k at block[e · kLanes + k]) so that their dots and updates
// are vector operations across the lanes. Each lane still sums its dot in element order and
// sees the i in order, so the bits are those of one vector at a time.
template <int W>
__attribute__((always_inline)) inline void projectOutLanes(double *v, int64_t length, int64_t i0,
                                                           int64_t i1, int64_t j0, int64_t j1) {
  typedef double Vec __attribute__((vector_size(W * sizeof(double)), aligned(8)));
  constexpr int kVecs = kLanes / W;
  if (i0 == i1) return;
  std::vector<double> storage(length * kLanes);
  double *block = storage.data();
  for (int64_t j = j0; j < j1; j += kLanes) {
    int64_t lanes = std::min(kLanes, j1 - j);
    for (int64_t k = 0; k < kLanes; ++k)
      for (int64_t e = 0; e < length; ++e)
        block[e * kLanes + k] = k < lanes ? v[(j + k) * length + e] : 0.0;
    // One pass over the block per i: element e's update by i is final before the next i's
    // dot reads it, so the update and the next dot share the pass (same operations, same
    // order; half the block's traffic, which is what bounds this loop).
    Vec dot[kVecs] = {};
    for (int64_t e = 0; e < length; ++e) {
      const Vec *x = reinterpret_cast<const Vec *>(block + e * kLanes);
      for (int q = 0; q < kVecs; ++q) dot[q] += v[i0 * length + e] * x[q];
    }
    for (int64_t i = i0; i + 1 < i1; ++i) {
      const double *vi = v + i * length, *next = vi + length;
      Vec nextDot[kVecs] = {};
      for (int64_t e = 0; e < length; ++e) {
        Vec *x = reinterpret_cast<Vec *>(block + e * kLanes);
        for (int q = 0; q < kVecs; ++q) x[q] -= dot[q] * vi[e];
        for (int q = 0; q < kVecs; ++q) nextDot[q] += next[e] * x[q];
      }
      for (int q = 0; q < kVecs; ++q) dot[q] = nextDot[q];
    }
    const double *last = v + (i1 - 1) * length;
    for (int64_t e = 0; e < length; ++e) {
      Vec *x = reinterpret_cast<Vec *>(block + e * kLanes);
      for (int q = 0; q < kVecs; ++q) x[q] -= dot[q] * last[e];
    }
    for (int64_t k = 0; k < lanes; ++k)
      for (int64_t e = 0; e < length; ++e) v[(j + k) * length + e] = block[e * kLanes + k];
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx2"))) void projectOutAvx2(double *v, int64_t length, int64_t i0,
                                                    int64_t i1, int64_t j0, int64_t j1) {
  projectOutLanes<4>(v, length, i0, i1, j0, j1);
}
#endif

void projectOut(double *v, int64_t length, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (__builtin_cpu_supports("avx2")) return projectOutAvx2(v, length, i0, i1, j0, j1);
#endif
  projectOutLanes<2>(v, length, i0, i1, j0, j1);
}

// Vectors per panel: a panel's vectors are re-read by every later vector, so the panel (32 ·
// 8 bytes · length) should stay in the L2 cache.
constexpr int64_t kPanel = 32;
// Below this many multiply-adds a panel's update runs on the calling thread.
constexpr int64_t kParallelWork = int64_t{1} << 22;

// Orthonormalises the `count` vectors of length `length` stored contiguously in `v` (vector j
// at v[j * length]) by modified Gram-Schmidt: subtracting projections from the running
// remainder keeps the result orthogonal to working precision, unlike classical Gram-Schmidt.
// Right-looking and in panels: once a panel's vectors are finished they are projected out of
// all later vectors (split over threads: each vector's updates are its own), which performs
// every vector's operations in the same order as the textbook loop, so the result is
// bit-identical to it; only the cache reuse and the parallelism differ (a [3584, 1536]
// weight: 4.7 s before, well under a second now).
bool modifiedGramSchmidt(std::vector<double> &v, int64_t count, int64_t length) {
  unsigned threads = std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
  for (int64_t p0 = 0; p0 < count; p0 += kPanel) {
    int64_t p1 = std::min(count, p0 + kPanel);
    for (int64_t j = p0; j < p1; ++j) {
      projectOut(v.data(), length, p0, j, j, j + 1);
      double *vj = &v[j * length];
      double norm = 0.0;
      for (int64_t e = 0; e < length; ++e) norm += vj[e] * vj[e];
      norm = std::sqrt(norm);
      if (!(norm > kDependentNorm)) return false;
      for (int64_t e = 0; e < length; ++e) vj[e] /= norm;
    }
    int64_t rest = count - p1;
    int64_t parts = (rest * (p1 - p0) * length >= kParallelWork) ? threads : 1;
    // Whole groups of lanes per part.
    int64_t groups = (rest + kLanes - 1) / kLanes;
    int64_t perPart = (groups + parts - 1) / parts * kLanes;
    std::vector<std::thread> workers;
    for (int64_t start = p1 + perPart; start < count; start += perPart)
      workers.emplace_back(projectOut, v.data(), length, p0, p1, start,
                           std::min(count, start + perPart));
    projectOut(v.data(), length, p0, p1, p1, std::min(count, p1 + perPart));
    for (std::thread &worker : workers) worker.join();
  }
  return true;
}

// One [rows, cols] matrix per layer, written into out[base .. base + rows*cols).
std::string initOrthogonal(const InitSpec &spec, const std::string &name,
                           const std::vector<int64_t> &shape, int stackedDims, uint64_t seed,
                           std::vector<double> &out) {
  if (static_cast<int>(shape.size()) - stackedDims < 2)
    return "orthogonal initialisation of '" + name +
           "' needs at least 2 dimensions after the stacked ones";
  int64_t layers = 1, rows = 1;
  for (int i = 0; i < stackedDims; ++i) layers *= shape[i];
  for (size_t i = stackedDims; i + 1 < shape.size(); ++i) rows *= shape[i];
  int64_t cols = shape.back();
  uint64_t stream = hashName(name);
  // Orthonormalise the shorter side: rows when the matrix is wide, columns when it is tall.
  bool byRows = rows <= cols;
  int64_t count = byRows ? rows : cols, length = byRows ? cols : rows;
  std::vector<double> vectors(count * length);
  for (int64_t layer = 0; layer < layers; ++layer) {
    int64_t base = layer * rows * cols;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        double z = standardNormal(seed, stream, static_cast<uint64_t>(base + r * cols + c));
        vectors[byRows ? r * cols + c : c * rows + r] = z;
      }
    if (!modifiedGramSchmidt(vectors, count, length))
      return "orthogonal initialisation of '" + name + "' drew a degenerate matrix";
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        out[base + r * cols + c] = spec.gain * vectors[byRows ? r * cols + c : c * rows + r];
  }
  return "";
}

}  // namespace

uint64_t hashName(const std::string &name) {
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a 64-bit offset basis
  for (unsigned char byte : name) {
    hash ^= byte;
    hash *= 0x100000001b3ull;  // FNV-1a 64-bit prime
  }
  return hash;
}

std::string initParameter(const InitSpec &spec, const std::string &name,
                          const std::vector<int64_t> &shape, int stackedDims, uint64_t seed,
                          std::vector<double> &out) {
  if (stackedDims < 0 || stackedDims > static_cast<int>(shape.size()))
    return "parameter '" + name + "' has " + std::to_string(stackedDims) +
           " stacked dimensions but rank " + std::to_string(shape.size());
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim <= 0) return "parameter '" + name + "' has a non-positive dimension";
    count *= dim;
  }
  out.assign(count, 0.0);
  uint64_t stream = hashName(name);
  const std::string &kind = spec.kind;
  if (kind == "zeros") return "";
  if (kind == "ones" || kind == "constant") {
    double value = (kind == "ones" ? 1.0 : spec.value) * spec.gain;
    out.assign(count, value);
    return "";
  }
  if (kind == "normal") {
    for (int64_t i = 0; i < count; ++i)
      out[i] = spec.gain * (spec.mean + spec.std * standardNormal(seed, stream, i));
    return "";
  }
  if (kind == "uniform") {
    for (int64_t i = 0; i < count; ++i)
      out[i] = spec.gain * (spec.a + (spec.b - spec.a) * uniform01(seed, stream, i));
    return "";
  }
  if (kind == "orthogonal") return initOrthogonal(spec, name, shape, stackedDims, seed, out);
  return "unknown initialiser '" + kind + "' for parameter '" + name + "'";
}

}  // namespace stepc::rt
