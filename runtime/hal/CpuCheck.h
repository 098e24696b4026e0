//===- CpuCheck.h - does this CPU run the executable's code? ----*- C++ -*-===//
//
// An executable compiled with --cpu=native (the default) or another CPU may use instructions
// (AVX-512, AVX2, FMA, ...) that the CPU it is started on lacks; it would die of SIGILL in the
// first kernel. The compiler records what its code needs as `stepc_cpu_requirements`
// ("znver5:avx2,fma,avx512f,..."); main() checks it here first and stops with a clear line.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_HAL_CPUCHECK_H
#define STEPC_RUNTIME_HAL_CPUCHECK_H

#include <functional>
#include <string>

namespace stepc::rt {

/// Whether this CPU has `feature` (one of the names the compiler records), per cpuid.
bool hostHasCpuFeature(const std::string &feature);

/// "" if every feature `requirements` ("CPU:f1,f2,...") names is there (per `has`); else the
/// error to print, naming the missing features and how to recompile.
std::string checkCpuRequirements(const std::string &requirements,
                                 const std::function<bool(const std::string &)> &has);

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_HAL_CPUCHECK_H
