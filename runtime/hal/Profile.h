//===- Profile.h - the per-kernel profile of a compiled step ----*- C++ -*-===//
//
// Compiled step functions bracket every kernel and library call with
// stepc_profile_enter(id) / stepc_profile_exit(id); ids index the description's `kernels`
// names. With STEPC_PROFILE=1 in the environment the executable accumulates the time of each
// and prints a table (by total time) to stderr when it exits; otherwise the calls return at
// once. A training run's first step is left out when more follow (profileWarmupDone): it
// pays the first touch of every arena page and the GEMM library's first-call code
// generation (a [4096, 256] · [256, 96] GEMM: 41 ms on its first call and 2.9 ms a call in
// step 1, 0.48 ms after), which would skew the rates, as a benchmark leaves out warm-up steps.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_PROFILE_H
#define STEPC_RUNTIME_PROFILE_H

#include <cstdint>
#include <string>
#include <vector>

namespace stepc::rt {

/// Enables profiling if STEPC_PROFILE is set (and not "0"), naming the ids; registers the
/// report to print at exit. `bytes` and `flops` (by id, or empty): what one call moves (its
/// buffers, each once) and computes (a GEMM's 2·M·N·K), for the rates the table prints.
void initProfile(const std::vector<std::string> &names, const std::vector<double> &bytes = {},
                 const std::vector<double> &flops = {});

/// The table: one line per kernel with calls, total ms and share of the total, and after the
/// name the achieved rate: GFLOP/s for a GEMM, GB/s (its buffers once per call) for the rest.
std::string profileReport();

/// The call in progress ran `flops`, not the 2·M·N·K its id says: a batched GEMM that left an
/// MoE's empty slots out (hal/cpu/Gemm.cpp). Its rate is then what it ran over its time.
void profileFlopsRun(double flops);

/// After a training run's first step, when more steps follow: starts the table afresh and says
/// in it that step 1 is left out.
void profileWarmupDone();

}  // namespace stepc::rt

extern "C" {
void stepc_profile_enter(int64_t id);
void stepc_profile_exit(int64_t id);
}

#endif  // STEPC_RUNTIME_PROFILE_H
