//===- Driver.h - the CUDA driver API, loaded at run time -------*- C++ -*-===//
//
// Executables reach the GPU through the CUDA driver API in libcuda.so.1, which they dlopen:
// they link nothing from CUDA, so the same binary starts on machines without a GPU or driver
// and says why it cannot use one. The loader is a seam (Loader): tests load a fake driver to
// check what a missing library, a missing symbol, a machine without a device, or a device
// look like. The types are declared here, as in cuda.h, so the runtime builds without it.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_CUDA_DRIVER_H
#define STEPC_RUNTIME_CUDA_DRIVER_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "runtime/base/Status.h"

namespace stepc::rt::cuda {

// cuda.h's handles and result code.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
struct CUgraph_st;
struct CUgraphExec_st;
using CUcontext = CUctx_st *;
using CUmodule = CUmod_st *;
using CUfunction = CUfunc_st *;
using CUstream = CUstream_st *;
using CUevent = CUevent_st *;
using CUgraph = CUgraph_st *;
using CUgraphExec = CUgraphExec_st *;
constexpr CUresult kSuccess = 0;
constexpr CUresult kErrorNoDevice = 100;
constexpr int kAttrComputeCapabilityMajor = 75, kAttrComputeCapabilityMinor = 76;

/// The driver functions the runtime uses, resolved by name (the versioned names cuda.h's
/// macros pick, e.g. cuMemAlloc_v2).
struct Api {
  CUresult (*cuInit)(unsigned flags) = nullptr;
  CUresult (*cuGetErrorString)(CUresult error, const char **text) = nullptr;
  CUresult (*cuDeviceGetCount)(int *count) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice *device, int ordinal) = nullptr;
  CUresult (*cuDeviceGetName)(char *name, int length, CUdevice device) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int *value, int attribute, CUdevice device) = nullptr;
  CUresult (*cuDeviceTotalMem)(size_t *bytes, CUdevice device) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *context, CUdevice device) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext context) = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule *module, const void *image) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction *function, CUmodule module,
                                  const char *name) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule module) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                             unsigned by, unsigned bz, unsigned sharedBytes, CUstream stream,
                             void **params, void **extra) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr *pointer, size_t bytes) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr pointer) = nullptr;
  CUresult (*cuMemHostAlloc)(void **pointer, size_t bytes, unsigned flags) = nullptr;
  CUresult (*cuMemFreeHost)(void *pointer) = nullptr;
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes,
                                CUstream stream) = nullptr;
  CUresult (*cuMemcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes,
                                CUstream stream) = nullptr;
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                                CUstream stream) = nullptr;
  CUresult (*cuStreamCreate)(CUstream *stream, unsigned flags) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream stream) = nullptr;
  CUresult (*cuStreamWaitEvent)(CUstream stream, CUevent event, unsigned flags) = nullptr;
  CUresult (*cuStreamBeginCapture)(CUstream stream, int mode) = nullptr;
  CUresult (*cuStreamEndCapture)(CUstream stream, CUgraph *graph) = nullptr;
  CUresult (*cuGraphInstantiate)(CUgraphExec *exec, CUgraph graph,
                                 unsigned long long flags) = nullptr;
  CUresult (*cuGraphLaunch)(CUgraphExec exec, CUstream stream) = nullptr;
  CUresult (*cuGraphDestroy)(CUgraph graph) = nullptr;
  CUresult (*cuGraphExecDestroy)(CUgraphExec exec) = nullptr;
  CUresult (*cuEventCreate)(CUevent *event, unsigned flags) = nullptr;
  CUresult (*cuEventRecord)(CUevent event, CUstream stream) = nullptr;
  CUresult (*cuEventElapsedTime)(float *ms, CUevent start, CUevent end) = nullptr;
};

/// How the driver library is found: dlopen / dlsym for real, a fake in tests.
class Loader {
 public:
  virtual ~Loader() = default;
  /// A handle for the library, or null (then error() says why).
  virtual void *open(const char *library) = 0;
  virtual void *symbol(void *handle, const char *name) = 0;
  virtual std::string error() = 0;
};
Loader &systemLoader();

/// One GPU as the driver describes it.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int major = 0, minor = 0;  // compute capability: sm_<major><minor>
  size_t memoryBytes = 0;
  std::string arch() const { return "sm_" + std::to_string(major) + std::to_string(minor); }
};

/// The loaded driver: its functions, initialised (cuInit).
class Driver {
 public:
  /// Loads libcuda.so.1 through `loader`, resolves every function in Api and calls cuInit.
  /// Errors name what is missing: the library (no NVIDIA driver), a function (a driver older
  /// than CUDA 12), or a device.
  static Status load(Loader &loader, std::unique_ptr<Driver> &out);

  const Api &api() const { return api_; }
  /// The devices, and one of them described.
  Status deviceCount(int &count) const;
  Status describe(int ordinal, DeviceInfo &out) const;
  /// "cuX failed: <the driver's message> (code N)" for a failed call, or ok.
  Status check(CUresult result, const char *call) const;

 private:
  Api api_;
};

/// The first GPU, or an error in one line that says why there is none.
Status probeFirstDevice(Loader &loader, DeviceInfo &out);

}  // namespace stepc::rt::cuda

#endif  // STEPC_RUNTIME_CUDA_DRIVER_H
