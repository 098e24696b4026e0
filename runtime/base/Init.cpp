//===- Init.cpp - parameter initialisers ---------------------------------===//
//
// Element i of a parameter is drawn at Philox index i (row-major over the stored, stacked
// shape), so each layer of a stacked parameter gets its own values and a parameter's values
// depend only on (seed, name, shape).
//
//===----------------------------------------------------------------------===//
#include "runtime/base/Init.h"

#include <cmath>

#include "runtime/base/Philox.h"

namespace stepc::rt {
namespace {

// Below this norm a drawn vector is treated as linearly dependent on the earlier ones. Gaussian
// draws essentially never get here; the check turns the impossible case into an error.
constexpr double kDependentNorm = 1e-10;

// Orthonormalises the `count` vectors of length `length` stored contiguously in `v` (vector j
// at v[j * length]) by modified Gram-Schmidt: subtracting projections from the running
// remainder keeps the result orthogonal to working precision, unlike classical Gram-Schmidt.
bool modifiedGramSchmidt(std::vector<double> &v, int64_t count, int64_t length) {
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
    if (!(norm > kDependentNorm)) return false;
    for (int64_t e = 0; e < length; ++e) vj[e] /= norm;
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
