//===- UnrankedMemRef.h - MLIR's C interface for memref<*xf32> --*- C++ -*-===//
#ifndef STEPC_RUNTIME_HAL_CPU_UNRANKEDMEMREF_H
#define STEPC_RUNTIME_HAL_CPU_UNRANKEDMEMREF_H

#include <cstdint>

/// A `memref<*xf32>` argument of a function with llvm.emit_c_interface.
struct StepcUnrankedF32 {
  int64_t rank;
  void *descriptor;  // {float *allocated, *aligned; int64_t offset, sizes[rank], strides[rank]}
};

namespace stepc::rt {

/// The descriptor's fields.
struct F32View {
  float *aligned = nullptr;
  int64_t offset = 0, rank = 0;
  const int64_t *sizes = nullptr, *strides = nullptr;

  explicit F32View(const StepcUnrankedF32 &m)
      : aligned(reinterpret_cast<float *const *>(m.descriptor)[1]),
        offset(static_cast<const int64_t *>(m.descriptor)[2]),
        rank(m.rank),
        sizes(static_cast<const int64_t *>(m.descriptor) + 3),
        strides(static_cast<const int64_t *>(m.descriptor) + 3 + m.rank) {}

  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d = 0; d < rank; ++d) n *= sizes[d];
    return n;
  }
  /// True if the view is row-major without gaps (strides of the identity layout).
  bool contiguous() const {
    int64_t expected = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (sizes[d] != 1 && strides[d] != expected) return false;
      expected *= sizes[d];
    }
    return true;
  }
  float *data() const { return aligned + offset; }
};

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_HAL_CPU_UNRANKEDMEMREF_H
