//===- Init.h - parameter initialisers --------------------------*- C++ -*-===//
//
// Fills a parameter from its initialiser (the `step.param ... = kind(...)` spec), drawing from
// Philox with key = seed and stream = a hash of the parameter's full name, so a parameter's
// values do not depend on declaration order or on other parameters. Plain C++, no MLIR: the
// runtime links it too.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_INIT_H
#define STEPC_RUNTIME_INIT_H

#include <cstdint>
#include <string>
#include <vector>

namespace stepc::rt {

struct InitSpec {
  std::string kind;  // zeros, ones, constant, normal, uniform, orthogonal
  double value = 0.0, mean = 0.0, std = 1.0, a = 0.0, b = 1.0, gain = 1.0;
};

/// Fills `out` (row-major, `shape`) for parameter `name`. `stackedDims` leading dims are layer
/// stacking (repeat): orthogonal init makes each trailing 2-D matrix [rows = product of the
/// remaining leading dims, cols = last dim] (semi-)orthogonal, independently per layer.
/// Returns an error message, empty on success.
std::string initParameter(const InitSpec &spec, const std::string &name,
                          const std::vector<int64_t> &shape, int stackedDims, uint64_t seed,
                          std::vector<double> &out);

/// A 64-bit FNV-1a hash of a name (the Philox stream of a parameter).
uint64_t hashName(const std::string &name);

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_INIT_H
