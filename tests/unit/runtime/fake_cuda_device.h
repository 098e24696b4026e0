// The device half of a fake libcuda for the CUDA runtime's tests: one device, "Fake GPU",
// compute capability 9.9, 1 GiB, a primary context. A test's Loader answers these symbols with
// deviceSymbol() and adds the calls it checks (streams, copies, launches, events) itself.
#ifndef STEPC_TESTS_UNIT_RUNTIME_FAKE_CUDA_DEVICE_H
#define STEPC_TESTS_UNIT_RUNTIME_FAKE_CUDA_DEVICE_H

#include <cstring>
#include <map>
#include <string>

#include "runtime/hal/cuda/Driver.h"

namespace stepc::rt::cuda::fake {

inline CUresult init(unsigned) { return kSuccess; }
inline CUresult count(int *n) {
  *n = 1;
  return kSuccess;
}
inline CUresult deviceGet(CUdevice *d, int) {
  *d = 0;
  return kSuccess;
}
inline CUresult name(char *out, int length, CUdevice) {
  std::strncpy(out, "Fake GPU", static_cast<size_t>(length));
  return kSuccess;
}
inline CUresult attribute(int *v, int, CUdevice) {
  *v = 9;
  return kSuccess;
}
inline CUresult totalMem(size_t *bytes, CUdevice) {
  *bytes = 1 << 30;
  return kSuccess;
}
inline CUresult retain(CUcontext *c, CUdevice) {
  *c = reinterpret_cast<CUcontext>(0x7);
  return kSuccess;
}
inline CUresult setCurrent(CUcontext) { return kSuccess; }

/// The fake's function for a device query or context symbol, or null for any other.
inline void *deviceSymbol(const std::string &symbol) {
  static const std::map<std::string, void *> table = {
      {"cuInit", reinterpret_cast<void *>(&init)},
      {"cuDeviceGetCount", reinterpret_cast<void *>(&count)},
      {"cuDeviceGet", reinterpret_cast<void *>(&deviceGet)},
      {"cuDeviceGetName", reinterpret_cast<void *>(&name)},
      {"cuDeviceGetAttribute", reinterpret_cast<void *>(&attribute)},
      {"cuDeviceTotalMem_v2", reinterpret_cast<void *>(&totalMem)},
      {"cuDevicePrimaryCtxRetain", reinterpret_cast<void *>(&retain)},
      {"cuCtxSetCurrent", reinterpret_cast<void *>(&setCurrent)},
  };
  auto it = table.find(symbol);
  return it != table.end() ? it->second : nullptr;
}

}  // namespace stepc::rt::cuda::fake

#endif  // STEPC_TESTS_UNIT_RUNTIME_FAKE_CUDA_DEVICE_H
