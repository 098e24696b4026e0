//===- Driver.cpp - the CUDA driver API, loaded at run time ---------------===//
#include "runtime/hal/cuda/Driver.h"

#include <dlfcn.h>

namespace stepc::rt::cuda {
namespace {

class SystemLoader : public Loader {
 public:
  void *open(const char *library) override { return dlopen(library, RTLD_NOW | RTLD_LOCAL); }
  void *symbol(void *handle, const char *name) override { return dlsym(handle, name); }
  std::string error() override {
    const char *e = dlerror();
    return e ? e : "unknown error";
  }
};

template <typename Fn>
bool resolve(Loader &loader, void *handle, const char *name, Fn &fn) {
  fn = reinterpret_cast<Fn>(loader.symbol(handle, name));
  return fn != nullptr;
}

constexpr const char *kLibrary = "libcuda.so.1";

}  // namespace

Loader &systemLoader() {
  static SystemLoader loader;
  return loader;
}

Status Driver::load(Loader &loader, std::unique_ptr<Driver> &out) {
  void *handle = loader.open(kLibrary);
  if (!handle)
    return Status::error(std::string("no CUDA driver: cannot load ") + kLibrary + " (" +
                         loader.error() + "); this machine has no NVIDIA GPU driver");
  auto driver = std::unique_ptr<Driver>(new Driver());
  Api &a = driver->api_;
  struct Entry {
    const char *name;
    bool ok;
  };
  // The versioned names are the ones cuda.h's macros select for CUDA 12 and later.
  const Entry entries[] = {
      {"cuInit", resolve(loader, handle, "cuInit", a.cuInit)},
      {"cuGetErrorString", resolve(loader, handle, "cuGetErrorString", a.cuGetErrorString)},
      {"cuDeviceGetCount", resolve(loader, handle, "cuDeviceGetCount", a.cuDeviceGetCount)},
      {"cuDeviceGet", resolve(loader, handle, "cuDeviceGet", a.cuDeviceGet)},
      {"cuDeviceGetName", resolve(loader, handle, "cuDeviceGetName", a.cuDeviceGetName)},
      {"cuDeviceGetAttribute",
       resolve(loader, handle, "cuDeviceGetAttribute", a.cuDeviceGetAttribute)},
      {"cuDeviceTotalMem_v2", resolve(loader, handle, "cuDeviceTotalMem_v2", a.cuDeviceTotalMem)},
      {"cuDevicePrimaryCtxRetain",
       resolve(loader, handle, "cuDevicePrimaryCtxRetain", a.cuDevicePrimaryCtxRetain)},
      {"cuCtxSetCurrent", resolve(loader, handle, "cuCtxSetCurrent", a.cuCtxSetCurrent)},
      {"cuModuleLoadData", resolve(loader, handle, "cuModuleLoadData", a.cuModuleLoadData)},
      {"cuModuleGetFunction",
       resolve(loader, handle, "cuModuleGetFunction", a.cuModuleGetFunction)},
      {"cuModuleUnload", resolve(loader, handle, "cuModuleUnload", a.cuModuleUnload)},
      {"cuLaunchKernel", resolve(loader, handle, "cuLaunchKernel", a.cuLaunchKernel)},
      {"cuMemAlloc_v2", resolve(loader, handle, "cuMemAlloc_v2", a.cuMemAlloc)},
      {"cuMemFree_v2", resolve(loader, handle, "cuMemFree_v2", a.cuMemFree)},
      {"cuMemHostAlloc", resolve(loader, handle, "cuMemHostAlloc", a.cuMemHostAlloc)},
      {"cuMemFreeHost", resolve(loader, handle, "cuMemFreeHost", a.cuMemFreeHost)},
      {"cuMemcpyHtoDAsync_v2",
       resolve(loader, handle, "cuMemcpyHtoDAsync_v2", a.cuMemcpyHtoDAsync)},
      {"cuMemcpyDtoHAsync_v2",
       resolve(loader, handle, "cuMemcpyDtoHAsync_v2", a.cuMemcpyDtoHAsync)},
      {"cuMemcpyDtoDAsync_v2",
       resolve(loader, handle, "cuMemcpyDtoDAsync_v2", a.cuMemcpyDtoDAsync)},
      {"cuStreamCreate", resolve(loader, handle, "cuStreamCreate", a.cuStreamCreate)},
      {"cuStreamSynchronize",
       resolve(loader, handle, "cuStreamSynchronize", a.cuStreamSynchronize)},
      {"cuStreamWaitEvent", resolve(loader, handle, "cuStreamWaitEvent", a.cuStreamWaitEvent)},
      {"cuStreamBeginCapture_v2",
       resolve(loader, handle, "cuStreamBeginCapture_v2", a.cuStreamBeginCapture)},
      {"cuStreamEndCapture", resolve(loader, handle, "cuStreamEndCapture", a.cuStreamEndCapture)},
      {"cuGraphInstantiateWithFlags",
       resolve(loader, handle, "cuGraphInstantiateWithFlags", a.cuGraphInstantiate)},
      {"cuGraphLaunch", resolve(loader, handle, "cuGraphLaunch", a.cuGraphLaunch)},
      {"cuGraphDestroy", resolve(loader, handle, "cuGraphDestroy", a.cuGraphDestroy)},
      {"cuGraphExecDestroy", resolve(loader, handle, "cuGraphExecDestroy", a.cuGraphExecDestroy)},
      {"cuEventCreate", resolve(loader, handle, "cuEventCreate", a.cuEventCreate)},
      {"cuEventRecord", resolve(loader, handle, "cuEventRecord", a.cuEventRecord)},
      {"cuEventElapsedTime", resolve(loader, handle, "cuEventElapsedTime", a.cuEventElapsedTime)},
  };
  for (const Entry &e : entries)
    if (!e.ok)
      return Status::error(std::string("the CUDA driver ") + kLibrary + " has no " + e.name +
                           " (a driver older than CUDA 12?)");
  CUresult init = a.cuInit(0);
  if (init == kErrorNoDevice)
    return Status::error("no CUDA device: the driver is installed but finds no GPU (cuInit: " +
                         driver->check(init, "cuInit").message() + ")");
  if (Status s = driver->check(init, "cuInit"); !s.ok()) return s;
  out = std::move(driver);
  return {};
}

Status Driver::check(CUresult result, const char *call) const {
  if (result == kSuccess) return {};
  const char *text = nullptr;
  if (!api_.cuGetErrorString || api_.cuGetErrorString(result, &text) != kSuccess || !text)
    text = "unknown error";
  return Status::error(std::string(call) + " failed: " + text + " (code " +
                       std::to_string(result) + ")");
}

Status Driver::deviceCount(int &count) const {
  count = 0;
  return check(api_.cuDeviceGetCount(&count), "cuDeviceGetCount");
}

Status Driver::describe(int ordinal, DeviceInfo &out) const {
  CUdevice device = 0;
  if (Status s = check(api_.cuDeviceGet(&device, ordinal), "cuDeviceGet"); !s.ok()) return s;
  char name[256] = {};
  if (Status s = check(api_.cuDeviceGetName(name, sizeof name - 1, device), "cuDeviceGetName");
      !s.ok())
    return s;
  DeviceInfo info;
  info.ordinal = ordinal;
  info.name = name;
  if (Status s = check(api_.cuDeviceGetAttribute(&info.major, kAttrComputeCapabilityMajor, device),
                       "cuDeviceGetAttribute");
      !s.ok())
    return s;
  if (Status s = check(api_.cuDeviceGetAttribute(&info.minor, kAttrComputeCapabilityMinor, device),
                       "cuDeviceGetAttribute");
      !s.ok())
    return s;
  if (Status s = check(api_.cuDeviceTotalMem(&info.memoryBytes, device), "cuDeviceTotalMem");
      !s.ok())
    return s;
  out = info;
  return {};
}

Status probeFirstDevice(Loader &loader, DeviceInfo &out) {
  std::unique_ptr<Driver> driver;
  if (Status s = Driver::load(loader, driver); !s.ok()) return s;
  int count = 0;
  if (Status s = driver->deviceCount(count); !s.ok()) return s;
  if (count == 0) return Status::error("no CUDA device: the driver reports 0 GPUs");
  return driver->describe(0, out);
}

}  // namespace stepc::rt::cuda
