//===- MlirGpuAbi.cpp - MLIR's GPU runtime calls on the CUDA session ------===//
//
// The host code MLIR generates for gpu.launch_func (gpu-to-llvm, then the LLVM IR
// translation) calls these seven functions, the ABI of upstream's CudaRuntimeWrappers. stepc
// implements them on its own Session (the dlopen'ed driver) instead of linking MLIR's library:
//   - the kernels' module is loaded from a global constructor, so a failure there (no GPU) is
//     recorded, not fatal: the executable still starts, and the CUDA step refuses with it;
//   - every "stream" is the session's one stream, and synchronising or destroying it between
//     launches does nothing: the host plan only passes device pointers between launches, and
//     the step synchronises once at its end. Launches stay in program order on one stream,
//     which is also what capturing the step as a CUDA graph needs.
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "runtime/hal/cuda/Session.h"

using stepc::rt::Status;
using stepc::rt::cuda::Session;

namespace {

std::map<std::pair<void *, std::string>, void *> &functionCache() {
  static std::map<std::pair<void *, std::string>, void *> cache;
  return cache;
}

}  // namespace

extern "C" void *mgpuModuleLoad(void *data, uint64_t /*size*/) {
  Session &s = Session::get();
  if (!s.status().ok()) {
    s.recordError(s.status());
    return nullptr;
  }
  stepc::rt::cuda::CUmodule module = nullptr;
  Status status = s.driver().check(s.driver().api().cuModuleLoadData(&module, data),
                                   "cuModuleLoadData (the kernels' fatbin)");
  if (!status.ok()) {
    s.recordError(status);
    return nullptr;
  }
  return module;
}

extern "C" void mgpuModuleUnload(void *module) {
  Session &s = Session::get();
  if (module && s.status().ok())
    s.driver().api().cuModuleUnload(static_cast<stepc::rt::cuda::CUmodule>(module));
  functionCache().clear();
}

extern "C" void *mgpuModuleGetFunction(void *module, const char *name) {
  if (!module) return nullptr;  // the load failed; the error is recorded
  auto key = std::make_pair(module, std::string(name));
  auto it = functionCache().find(key);
  if (it != functionCache().end()) return it->second;
  Session &s = Session::get();
  stepc::rt::cuda::CUfunction function = nullptr;
  Status status = s.driver().check(
      s.driver().api().cuModuleGetFunction(&function,
                                           static_cast<stepc::rt::cuda::CUmodule>(module), name),
      "cuModuleGetFunction");
  if (!status.ok()) {
    s.recordError(Status::error(status.message() + " for kernel " + name));
    return nullptr;
  }
  functionCache()[key] = function;
  return function;
}

extern "C" void *mgpuStreamCreate() {
  Session &s = Session::get();
  return s.status().ok() ? s.stream() : nullptr;
}

extern "C" void mgpuStreamSynchronize(void *) {}
extern "C" void mgpuStreamDestroy(void *) {}

extern "C" void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                                 intptr_t blockX, intptr_t blockY, intptr_t blockZ,
                                 int32_t sharedBytes, void *stream, void **params, void **extra,
                                 size_t /*paramsCount*/) {
  Session &s = Session::get();
  if (!function || !s.status().ok()) {
    s.recordError(s.status().ok() ? Status::error("launch of a kernel that did not load")
                                  : s.status());
    return;
  }
  Status status = s.driver().check(
      s.driver().api().cuLaunchKernel(
          static_cast<stepc::rt::cuda::CUfunction>(function), static_cast<unsigned>(gridX),
          static_cast<unsigned>(gridY), static_cast<unsigned>(gridZ),
          static_cast<unsigned>(blockX), static_cast<unsigned>(blockY),
          static_cast<unsigned>(blockZ), static_cast<unsigned>(sharedBytes),
          static_cast<stepc::rt::cuda::CUstream>(stream), params, extra),
      "cuLaunchKernel");
  if (!status.ok()) s.recordError(status);
}
