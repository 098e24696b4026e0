//===- DebugChecks.cpp - the finiteness checks of --debug-nan -------------===//
#include "runtime/hal/cpu/DebugChecks.h"

#include <cmath>
#include <vector>

namespace stepc::rt {
namespace {

// Written only by the host thread that runs the step's plan (kernels and GEMMs may use the
// pool, but each check runs after its command returns).
NonFinite gFirst;

}  // namespace

bool takeNonFinite(NonFinite &out) {
  if (gFirst.check < 0) return false;
  out = gFirst;
  gFirst = NonFinite();
  return true;
}

}  // namespace stepc::rt

extern "C" void _mlir_ciface_stepc_check_finite_f32(StepcUnrankedF32 *buffer, int64_t id) {
  using stepc::rt::gFirst;
  if (gFirst.check >= 0 || !buffer || !buffer->descriptor) return;  // the first one only
  auto *words = static_cast<int64_t *>(buffer->descriptor);
  const float *aligned = reinterpret_cast<float *const *>(buffer->descriptor)[1];
  int64_t offset = words[2], rank = buffer->rank;
  const int64_t *sizes = words + 3, *strides = words + 3 + rank;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d) count *= sizes[d];
  // Row-major over the view, with its strides (an output may be a strided view).
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  for (int64_t n = 0; n < count; ++n) {
    int64_t at = offset;
    for (int64_t d = 0; d < rank; ++d) at += index[d] * strides[d];
    float v = aligned[at];
    if (!std::isfinite(v)) {
      gFirst = {id, n, v};
      return;
    }
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
}
