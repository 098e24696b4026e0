//===- DebugChecks.h - the finiteness checks of --debug-nan -----*- C++ -*-===//
//
// A step compiled with `stepc compile --debug-nan` calls stepc_check_finite_f32(buffer, id)
// after every kernel and GEMM on each f32 output (compiler/Codegen/Common/CheckFinite.cpp). The
// first non-finite value since the last takeNonFinite() is kept: the step runs to its end, and
// the executor then reports the first check that failed, by the id the description's
// debugChecks names.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_HAL_CPU_DEBUGCHECKS_H
#define STEPC_RUNTIME_HAL_CPU_DEBUGCHECKS_H

#include <cstdint>

#include "runtime/hal/cpu/UnrankedMemRef.h"

namespace stepc::rt {

struct NonFinite {
  int64_t check = -1;    // the check's id
  int64_t element = 0;   // the first non-finite element, in row-major order of the output
  float value = 0;       // NaN, +Inf or -Inf
};

/// The first failed check since the last call, and clears it; false if every check passed.
bool takeNonFinite(NonFinite &out);

}  // namespace stepc::rt


extern "C" void _mlir_ciface_stepc_check_finite_f32(StepcUnrankedF32 *buffer, int64_t id);

#endif  // STEPC_RUNTIME_HAL_CPU_DEBUGCHECKS_H
