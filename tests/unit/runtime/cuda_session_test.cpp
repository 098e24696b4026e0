// MLIR's GPU runtime ABI (mgpu*, what --target=cuda host code calls) on stepc's CUDA session,
// with a fake libcuda: the kernels' module loads through cuModuleLoadData, functions are looked
// up once and cached, launches reach cuLaunchKernel with their grid, block, parameters and the
// session's one stream, and failures (no driver, a failed launch) are recorded for the step to
// report instead of crashing.
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/cuda/Session.h"

extern "C" {
void *mgpuModuleLoad(void *data, uint64_t size);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void *mgpuStreamCreate();
void mgpuStreamSynchronize(void *stream);
void mgpuStreamDestroy(void *stream);
void mgpuLaunchKernel(void *function, intptr_t gx, intptr_t gy, intptr_t gz, intptr_t bx,
                      intptr_t by, intptr_t bz, int32_t smem, void *stream, void **params,
                      void **extra, size_t count);
}

namespace stepc::rt::cuda {
namespace {

struct Calls {
  const void *loadedImage = nullptr;
  int getFunction = 0;
  std::vector<std::string> functionNames;
  unsigned grid[3] = {}, block[3] = {};
  CUstream launchStream = nullptr;
  void **launchParams = nullptr;
  CUresult launchResult = kSuccess;
  int launches = 0;
} gCalls;

CUstream const kStream = reinterpret_cast<CUstream>(0x42);

CUresult ok0(unsigned) { return kSuccess; }
CUresult errorString(CUresult, const char **text) {
  *text = "fake launch failure";
  return kSuccess;
}
CUresult count(int *n) {
  *n = 1;
  return kSuccess;
}
CUresult deviceGet(CUdevice *d, int) {
  *d = 0;
  return kSuccess;
}
CUresult name(char *out, int length, CUdevice) {
  std::strncpy(out, "Fake GPU", static_cast<size_t>(length));
  return kSuccess;
}
CUresult attribute(int *v, int, CUdevice) {
  *v = 9;
  return kSuccess;
}
CUresult totalMem(size_t *bytes, CUdevice) {
  *bytes = 1 << 30;
  return kSuccess;
}
CUresult retain(CUcontext *c, CUdevice) {
  *c = reinterpret_cast<CUcontext>(0x7);
  return kSuccess;
}
CUresult setCurrent(CUcontext) { return kSuccess; }
CUresult streamCreate(CUstream *s, unsigned) {
  *s = kStream;
  return kSuccess;
}
CUresult moduleLoad(CUmodule *m, const void *image) {
  gCalls.loadedImage = image;
  *m = reinterpret_cast<CUmodule>(0x1234);
  return kSuccess;
}
CUresult getFunction(CUfunction *f, CUmodule, const char *n) {
  ++gCalls.getFunction;
  gCalls.functionNames.push_back(n);
  *f = reinterpret_cast<CUfunction>(0x5678);
  return kSuccess;
}
CUresult launch(CUfunction, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                unsigned bz, unsigned, CUstream stream, void **params, void **) {
  ++gCalls.launches;
  unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
  std::memcpy(gCalls.grid, g, sizeof g);
  std::memcpy(gCalls.block, b, sizeof b);
  gCalls.launchStream = stream;
  gCalls.launchParams = params;
  return gCalls.launchResult;
}
CUresult other() { return kSuccess; }

class FakeDriver : public Loader {
 public:
  bool present = true;
  void *open(const char *) override { return present ? this : nullptr; }
  void *symbol(void *, const char *n) override {
    static const std::map<std::string, void *> table = {
        {"cuInit", reinterpret_cast<void *>(&ok0)},
        {"cuGetErrorString", reinterpret_cast<void *>(&errorString)},
        {"cuDeviceGetCount", reinterpret_cast<void *>(&count)},
        {"cuDeviceGet", reinterpret_cast<void *>(&deviceGet)},
        {"cuDeviceGetName", reinterpret_cast<void *>(&name)},
        {"cuDeviceGetAttribute", reinterpret_cast<void *>(&attribute)},
        {"cuDeviceTotalMem_v2", reinterpret_cast<void *>(&totalMem)},
        {"cuDevicePrimaryCtxRetain", reinterpret_cast<void *>(&retain)},
        {"cuCtxSetCurrent", reinterpret_cast<void *>(&setCurrent)},
        {"cuStreamCreate", reinterpret_cast<void *>(&streamCreate)},
        {"cuModuleLoadData", reinterpret_cast<void *>(&moduleLoad)},
        {"cuModuleGetFunction", reinterpret_cast<void *>(&getFunction)},
        {"cuLaunchKernel", reinterpret_cast<void *>(&launch)},
    };
    auto it = table.find(n);
    return it != table.end() ? it->second : reinterpret_cast<void *>(&other);
  }
  std::string error() override { return "libcuda.so.1: cannot open shared object file"; }
};

class CudaSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gCalls = Calls();
    Session::useLoaderForTesting(&fake);
  }
  void TearDown() override {
    mgpuModuleUnload(nullptr);  // clears the function cache
    Session::useLoaderForTesting(nullptr);
  }
  FakeDriver fake;
};

TEST_F(CudaSessionTest, LoadLookUpAndLaunch) {
  ASSERT_TRUE(Session::get().status().ok()) << Session::get().status().message();
  EXPECT_EQ(Session::get().device().arch(), "sm_99");
  static const char image[] = "fatbin";
  void *module = mgpuModuleLoad(const_cast<char *>(image), sizeof image);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(gCalls.loadedImage, image);
  void *f1 = mgpuModuleGetFunction(module, "kernel_3_generic");
  void *f2 = mgpuModuleGetFunction(module, "kernel_3_generic");
  EXPECT_EQ(f1, f2);
  EXPECT_EQ(gCalls.getFunction, 1);  // cached
  void *stream = mgpuStreamCreate();
  EXPECT_EQ(stream, kStream);  // the session's one stream
  float x = 1;
  void *params[] = {&x};
  mgpuLaunchKernel(f1, 56, 1, 1, 256, 1, 1, 0, stream, params, nullptr, 1);
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
  EXPECT_EQ(gCalls.launches, 1);
  EXPECT_EQ(gCalls.grid[0], 56u);
  EXPECT_EQ(gCalls.block[0], 256u);
  EXPECT_EQ(gCalls.launchStream, kStream);
  EXPECT_EQ(gCalls.launchParams, params);
  EXPECT_TRUE(Session::get().takeError().ok());
}

TEST_F(CudaSessionTest, FailedLaunchIsRecordedOnce) {
  void *module = mgpuModuleLoad(nullptr, 0);
  void *f = mgpuModuleGetFunction(module, "k");
  gCalls.launchResult = 700;
  mgpuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, mgpuStreamCreate(), nullptr, nullptr, 0);
  gCalls.launchResult = 701;
  mgpuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, mgpuStreamCreate(), nullptr, nullptr, 0);
  Status error = Session::get().takeError();
  EXPECT_EQ(error.message(), "cuLaunchKernel failed: fake launch failure (code 700)");
  EXPECT_TRUE(Session::get().takeError().ok());  // taken
}

TEST_F(CudaSessionTest, NoDriverIsRecordedNotFatal) {
  fake.present = false;
  Session::useLoaderForTesting(&fake);
  EXPECT_FALSE(Session::get().status().ok());
  void *module = mgpuModuleLoad(nullptr, 0);  // as from the global constructor
  EXPECT_EQ(module, nullptr);
  EXPECT_EQ(mgpuModuleGetFunction(module, "k"), nullptr);
  mgpuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, mgpuStreamCreate(), nullptr, nullptr, 0);
  EXPECT_EQ(gCalls.launches, 0);
  EXPECT_EQ(Session::get().takeError().message().rfind("no CUDA driver: cannot load libcuda.so.1", 0),
            0u);
}

}  // namespace
}  // namespace stepc::rt::cuda
