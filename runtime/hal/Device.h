//===- Device.h - where a step runs (--device) ------------------*- C++ -*-===//
//
// `--device=cpu|cuda|auto` on train and eval. Today's executables have a CPU step only:
// `cpu` and `auto` run it; `cuda` probes the GPU through the CUDA driver (runtime/hal/cuda) and
// refuses in one line that says what is there: no driver, no device, or a GPU this executable
// has no step for. `NAME info` prints the same probe.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_DEVICE_H
#define STEPC_RUNTIME_DEVICE_H

#include <string>

#include "runtime/base/Status.h"

namespace stepc::rt {

/// Checks `device` ("cpu", "cuda" or "auto") against a step compiled for the CPU.
Status selectCpuStepDevice(const std::string &device);

/// "NVIDIA H200 (sm_90, 139.8 GiB)" or "none (<why>)".
std::string describeGpu();

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_DEVICE_H
