//===- Device.cpp - where a step runs (--device) --------------------------===//
#include "runtime/hal/Device.h"

#include <cstdio>

#include "runtime/hal/cuda/Driver.h"

namespace stepc::rt {

Status selectCpuStepDevice(const std::string &device) {
  if (device == "cpu" || device == "auto") return {};
  if (device != "cuda")
    return Status::error("expected cpu, cuda or auto, found '" + device + "'");
  cuda::DeviceInfo gpu;
  if (Status s = cuda::probeFirstDevice(cuda::systemLoader(), gpu); !s.ok()) return s;
  return Status::error("found " + gpu.name + " (" + gpu.arch() +
                       "), but this executable's step was compiled for the CPU; use "
                       "--device=cpu or auto");
}

std::string describeGpu() {
  cuda::DeviceInfo gpu;
  Status s = cuda::probeFirstDevice(cuda::systemLoader(), gpu);
  if (!s.ok()) return "none (" + s.message() + ")";
  char memory[32];
  std::snprintf(memory, sizeof memory, "%.1f GiB",
                static_cast<double>(gpu.memoryBytes) / (1024.0 * 1024 * 1024));
  return gpu.name + " (" + gpu.arch() + ", " + memory + ")";
}

}  // namespace stepc::rt
