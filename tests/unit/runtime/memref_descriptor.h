//===- memref_descriptor.h - a float buffer as the step passes it -*- C++ -*-===//
//
// The rank-1 descriptor {allocated, aligned, offset 0, size n, stride 1} of `data`, as MLIR's
// C interface passes a memref<*xf32> to the runtime's entry points (collectives, transfers):
// for the unit tests that call them the way a compiled step does.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_TESTS_UNIT_RUNTIME_MEMREF_DESCRIPTOR_H
#define STEPC_TESTS_UNIT_RUNTIME_MEMREF_DESCRIPTOR_H

#include <cstdint>
#include <cstring>

#include "runtime/hal/cpu/UnrankedMemRef.h"

namespace stepc::rt {

inline void describe(float *data, int64_t n, int64_t (&desc)[5]) {
  desc[2] = 0;
  desc[3] = n;
  desc[4] = 1;
  std::memcpy(&desc[0], &data, 8);
  std::memcpy(&desc[1], &data, 8);
}

// The same as a value: `n` floats at `data`, and the memref<*xf32> argument (`m`) that points at
// its descriptor (so a view must not be copied once `m` is taken).
struct UnrankedView {
  int64_t desc[5];
  StepcUnrankedF32 m;
  UnrankedView(float *data, int64_t n) : m{1, desc} { describe(data, n, desc); }
  UnrankedView(const UnrankedView &) = delete;
  UnrankedView &operator=(const UnrankedView &) = delete;
};

}  // namespace stepc::rt

#endif  // STEPC_TESTS_UNIT_RUNTIME_MEMREF_DESCRIPTOR_H
