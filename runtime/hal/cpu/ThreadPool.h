//===- ThreadPool.h - the threads a compiled step runs on -------*- C++ -*-===//
//
// One pool for everything parallel in a step: tiled loop kernels (through
// stepc_parallel_for, which compiled code calls) and GEMMs (runtime/hal/cpu/Gemm.cpp splits them).
// OpenBLAS itself runs single-threaded, so two pools never fight over the cores.
//
// A parallel loop splits [lo, hi) into one contiguous part per thread; the calling thread
// runs the first part and returns when all parts are done. Workers spin briefly for the next
// loop (kernels follow each other within microseconds) and then sleep.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_THREADPOOL_H
#define STEPC_RUNTIME_THREADPOOL_H

#include <cstdint>

namespace stepc::rt {

/// Sets the threads parallel loops use, the caller included (0: the CPUs this process may
/// run on). Not to be called while a loop runs.
void setPoolThreads(int threads);
/// The CPUs this process may run on (its affinity mask).
int availableCpus();
/// The threads parallel loops use now.
int poolThreads();

using RangeFn = void (*)(void *context, int64_t lo, int64_t hi);
/// Runs fn(context, a, b) over a partition of [lo, hi) into at most poolThreads() parts.
void parallelFor(int64_t lo, int64_t hi, RangeFn fn, void *context);

}  // namespace stepc::rt

/// What compiled code calls for a range kernel (--step-dispatch-parallel-kernels): runs
/// task(argv, a, b) over a partition of [lo, hi).
extern "C" void stepc_parallel_for(void (*task)(void **argv, int64_t lo, int64_t hi),
                                   void **argv, int64_t lo, int64_t hi);

#endif  // STEPC_RUNTIME_THREADPOOL_H
