// The CUDA driver behind its dlopen seam (runtime/hal/cuda/Driver.h), with a fake libcuda: a
// missing library, a missing function, a driver without a device and one that reports none
// each give one clear error; a present device is described (name, sm_XY, memory). The real
// loader on a machine without a driver gives the missing-library error.
#include <cstring>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "runtime/hal/Device.h"
#include "runtime/hal/cuda/Driver.h"

namespace stepc::rt::cuda {
namespace {

// The fake driver's state.
CUresult gInitResult = kSuccess;
int gDeviceCount = 1;

CUresult fakeInit(unsigned) { return gInitResult; }
CUresult fakeErrorString(CUresult error, const char **text) {
  *text = error == kErrorNoDevice ? "no CUDA-capable device is detected" : "fake error";
  return kSuccess;
}
CUresult fakeDeviceGetCount(int *count) {
  *count = gDeviceCount;
  return kSuccess;
}
CUresult fakeDeviceGet(CUdevice *device, int ordinal) {
  *device = ordinal;
  return ordinal < gDeviceCount ? kSuccess : 101;
}
CUresult fakeDeviceGetName(char *name, int length, CUdevice) {
  std::strncpy(name, "Fake H200", static_cast<size_t>(length));
  return kSuccess;
}
CUresult fakeDeviceGetAttribute(int *value, int attribute, CUdevice) {
  *value = attribute == kAttrComputeCapabilityMajor ? 9 : 0;
  return kSuccess;
}
CUresult fakeTotalMem(size_t *bytes, CUdevice) {
  *bytes = size_t{141} << 30;
  return kSuccess;
}
CUresult fakeOther() { return kSuccess; }

class FakeLoader : public Loader {
 public:
  bool present = true;
  std::string missing;  // a function the fake library lacks
  void *open(const char *library) override {
    opened = library;
    return present ? this : nullptr;
  }
  void *symbol(void *, const char *name) override {
    if (name == missing) return nullptr;
    static const std::map<std::string, void *> table = {
        {"cuInit", reinterpret_cast<void *>(&fakeInit)},
        {"cuGetErrorString", reinterpret_cast<void *>(&fakeErrorString)},
        {"cuDeviceGetCount", reinterpret_cast<void *>(&fakeDeviceGetCount)},
        {"cuDeviceGet", reinterpret_cast<void *>(&fakeDeviceGet)},
        {"cuDeviceGetName", reinterpret_cast<void *>(&fakeDeviceGetName)},
        {"cuDeviceGetAttribute", reinterpret_cast<void *>(&fakeDeviceGetAttribute)},
        {"cuDeviceTotalMem_v2", reinterpret_cast<void *>(&fakeTotalMem)},
    };
    auto it = table.find(name);
    return it != table.end() ? it->second : reinterpret_cast<void *>(&fakeOther);
  }
  std::string error() override { return "libcuda.so.1: cannot open shared object file"; }
  std::string opened;
};

class CudaDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gInitResult = kSuccess;
    gDeviceCount = 1;
  }
  FakeLoader loader;
};

TEST_F(CudaDriverTest, MissingLibrary) {
  loader.present = false;
  DeviceInfo info;
  Status s = probeFirstDevice(loader, info);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(loader.opened, "libcuda.so.1");
  EXPECT_EQ(s.message(),
            "no CUDA driver: cannot load libcuda.so.1 (libcuda.so.1: cannot open shared object "
            "file); this machine has no NVIDIA GPU driver");
}

TEST_F(CudaDriverTest, MissingFunction) {
  loader.missing = "cuMemAlloc_v2";
  std::unique_ptr<Driver> driver;
  Status s = Driver::load(loader, driver);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "the CUDA driver libcuda.so.1 has no cuMemAlloc_v2 (a driver older "
                         "than CUDA 12?)");
  EXPECT_EQ(driver, nullptr);
}

TEST_F(CudaDriverTest, DriverWithoutDevice) {
  gInitResult = kErrorNoDevice;
  DeviceInfo info;
  Status s = probeFirstDevice(loader, info);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "no CUDA device: the driver is installed but finds no GPU (cuInit: cuInit failed: "
            "no CUDA-capable device is detected (code 100))");
}

TEST_F(CudaDriverTest, ZeroDevices) {
  gDeviceCount = 0;
  DeviceInfo info;
  Status s = probeFirstDevice(loader, info);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "no CUDA device: the driver reports 0 GPUs");
}

TEST_F(CudaDriverTest, OtherInitFailureNamesTheCallAndCode) {
  gInitResult = 999;
  std::unique_ptr<Driver> driver;
  Status s = Driver::load(loader, driver);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "cuInit failed: fake error (code 999)");
}

TEST_F(CudaDriverTest, DescribesTheDevice) {
  DeviceInfo info;
  Status s = probeFirstDevice(loader, info);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(info.name, "Fake H200");
  EXPECT_EQ(info.arch(), "sm_90");
  EXPECT_EQ(info.memoryBytes, size_t{141} << 30);
}

// On this machine, through dlopen: either a real driver (then a device or a clear error) or
// the missing-library error; never a crash.
TEST(CudaSystemLoader, ProbeSaysWhatThereIs) {
  DeviceInfo info;
  Status s = probeFirstDevice(systemLoader(), info);
  if (s.ok()) {
    EXPECT_FALSE(info.name.empty());
    EXPECT_EQ(info.arch().rfind("sm_", 0), 0u);
  } else {
    EXPECT_TRUE(s.message().rfind("no CUDA", 0) == 0 || s.message().find("failed") != std::string::npos)
        << s.message();
  }
  // --device: cpu and auto always run the CPU step; cuda never does.
  EXPECT_TRUE(selectCpuStepDevice("cpu").ok());
  EXPECT_TRUE(selectCpuStepDevice("auto").ok());
  EXPECT_FALSE(selectCpuStepDevice("cuda").ok());
  EXPECT_EQ(selectCpuStepDevice("tpu").message(), "expected cpu, cuda or auto, found 'tpu'");
}

}  // namespace
}  // namespace stepc::rt::cuda
