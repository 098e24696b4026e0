// MLIR's GPU runtime ABI (mgpu*, what --target=cuda host code calls) on stepc's CUDA session,
// with a fake libcuda: the kernels' module loads through cuModuleLoadData, functions are looked
// up once and cached, launches reach cuLaunchKernel with their grid, block, parameters and the
// session's one stream, and failures (no driver, a failed launch) are recorded for the step to
// report instead of crashing. CudaStep: buffers mirrored once; params on the device between
// steps of a resident entry (copied back by syncToHost), copied in every call otherwise; the
// step run directly once, then captured as a CUDA graph and replayed (or run directly when
// graphs are off or the capture fails).
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/hal/cuda/CudaStep.h"
#include "runtime/hal/cuda/Session.h"
#include "tests/unit/runtime/fake_cuda_device.h"

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

CUresult errorString(CUresult, const char **text) {
  *text = "fake launch failure";
  return kSuccess;
}
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

// Memory, copies and graphs for CudaStep.
struct GraphCalls {
  unsigned long long next = 0x10000;
  int allocs = 0, h2d = 0, d2h = 0, begin = 0, end = 0, instantiate = 0, graphLaunch = 0;
  CUresult endResult = kSuccess;
} gGraph;
CUresult memAlloc(CUdeviceptr *p, size_t bytes) {
  *p = gGraph.next;
  gGraph.next += (bytes + 255) / 256 * 256;
  ++gGraph.allocs;
  return kSuccess;
}
CUresult h2d(CUdeviceptr, const void *, size_t, CUstream) {
  ++gGraph.h2d;
  return kSuccess;
}
CUresult d2h(void *, CUdeviceptr, size_t, CUstream) {
  ++gGraph.d2h;
  return kSuccess;
}
int gPinned = 0;
std::vector<std::vector<char>> gPinnedMemory;
CUresult hostAlloc(void **p, size_t bytes, unsigned) {
  ++gPinned;
  gPinnedMemory.emplace_back(bytes);
  *p = gPinnedMemory.back().data();
  return kSuccess;
}
CUresult beginCapture(CUstream, int) {
  ++gGraph.begin;
  return kSuccess;
}
CUresult endCapture(CUstream, CUgraph *g) {
  ++gGraph.end;
  *g = reinterpret_cast<CUgraph>(0x99);
  return gGraph.endResult;
}
CUresult instantiate(CUgraphExec *e, CUgraph, unsigned long long) {
  ++gGraph.instantiate;
  *e = reinterpret_cast<CUgraphExec>(0x98);
  return kSuccess;
}
CUresult graphLaunch(CUgraphExec, CUstream) {
  ++gGraph.graphLaunch;
  return kSuccess;
}

// Events: created once, recorded around every step (before and after its launches); the
// device time between them is 1.5 ms.
struct EventCalls {
  int create = 0, record = 0;
};
EventCalls gEvents;
CUresult eventCreate(CUevent *e, unsigned) {
  ++gEvents.create;
  *e = reinterpret_cast<CUevent>(0x100 + gEvents.create);
  return kSuccess;
}
CUresult eventRecord(CUevent, CUstream) {
  ++gEvents.record;
  return kSuccess;
}
CUresult eventElapsed(float *ms, CUevent, CUevent) {
  *ms = 1.5f;
  return kSuccess;
}

class FakeDriver : public Loader {
 public:
  bool present = true;
  void *open(const char *) override { return present ? this : nullptr; }
  void *symbol(void *, const char *n) override {
    static const std::map<std::string, void *> table = {
        {"cuGetErrorString", reinterpret_cast<void *>(&errorString)},
        {"cuStreamCreate", reinterpret_cast<void *>(&streamCreate)},
        {"cuModuleLoadData", reinterpret_cast<void *>(&moduleLoad)},
        {"cuModuleGetFunction", reinterpret_cast<void *>(&getFunction)},
        {"cuLaunchKernel", reinterpret_cast<void *>(&launch)},
        {"cuMemAlloc_v2", reinterpret_cast<void *>(&memAlloc)},
        {"cuMemcpyHtoDAsync_v2", reinterpret_cast<void *>(&h2d)},
        {"cuMemHostAlloc", reinterpret_cast<void *>(&hostAlloc)},
        {"cuMemcpyDtoHAsync_v2", reinterpret_cast<void *>(&d2h)},
        {"cuStreamBeginCapture_v2", reinterpret_cast<void *>(&beginCapture)},
        {"cuStreamEndCapture", reinterpret_cast<void *>(&endCapture)},
        {"cuGraphInstantiateWithFlags", reinterpret_cast<void *>(&instantiate)},
        {"cuGraphLaunch", reinterpret_cast<void *>(&graphLaunch)},
        {"cuEventCreate", reinterpret_cast<void *>(&eventCreate)},
        {"cuEventRecord", reinterpret_cast<void *>(&eventRecord)},
        {"cuEventElapsedTime", reinterpret_cast<void *>(&eventElapsed)},
    };
    if (void *device = fake::deviceSymbol(n)) return device;
    auto it = table.find(n);
    return it != table.end() ? it->second : reinterpret_cast<void *>(&other);
  }
  std::string error() override { return "libcuda.so.1: cannot open shared object file"; }
};

class CudaSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gCalls = Calls();
    gGraph = GraphCalls();
    gEvents = EventCalls();
    gPinned = 0;
    unsetenv("STEPC_CUDA_GRAPH");
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

// A packed entry point standing in for the compiled host plan: it launches one kernel.
int gEntryCalls = 0;
std::vector<void *> gEntryArgs;
void fakeEntry(void **args) {
  ++gEntryCalls;
  gEntryArgs.assign(args, args + 3);
  void *module = mgpuModuleLoad(nullptr, 0);
  mgpuLaunchKernel(mgpuModuleGetFunction(module, "k"), 1, 1, 1, 32, 1, 1, 0, mgpuStreamCreate(),
                   nullptr, nullptr, 0);
}

struct StepFixture {
  ProgramInfo info;
  EntryDescription entry;
  std::vector<float> w = {1, 2, 3, 4};
  std::vector<float> x = {5, 6};
  StepBuffers buffers;
  StepFixture() {
    ParamSpec p;
    p.name = "w";
    p.shape = {4};
    info.params.push_back(p);
    entry.symbol = "stepc_cuda_train_step";
    Binding param;
    param.kind = Binding::Kind::kParam;
    param.index = 0;
    Binding batch;
    batch.kind = Binding::Kind::kBatch;
    batch.index = 0;
    Binding loss;
    loss.kind = Binding::Kind::kMetric;
    loss.metric = "loss";
    entry.args = {param, batch};
    entry.results = {loss};
    TensorBuffer tw;
    tw.shape = {4};
    tw.data = w.data();
    TensorBuffer tx;
    tx.shape = {2};
    tx.data = x.data();
    buffers.params = {tw};
    buffers.batch = {tx};
  }
};

TEST_F(CudaSessionTest, StepRunsDirectlyThenCapturesThenReplaysItsGraph) {
  gEntryCalls = 0;
  StepFixture f;
  CudaStep step;
  std::vector<std::vector<float>> results;
  EXPECT_EQ(step.lastDeviceMs(), -1);
  for (int i = 0; i < 4; ++i) {
    Status s = step.call(f.info, f.entry, fakeEntry, f.buffers, i, /*resident=*/true, results);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  // Two events, made once, recorded around each of the 4 steps; the device time read back.
  EXPECT_EQ(gEvents.create, 2);
  EXPECT_EQ(gEvents.record, 8);
  EXPECT_DOUBLE_EQ(step.lastDeviceMs(), 1.5);
  // Step 0 direct, step 1 captured (the host plan runs once more, inside the capture), steps
  // 2 and 3 replay the graph without running the host plan.
  EXPECT_EQ(gEntryCalls, 2);
  EXPECT_EQ(gGraph.begin, 1);
  EXPECT_EQ(gGraph.end, 1);
  EXPECT_EQ(gGraph.instantiate, 1);
  EXPECT_EQ(gGraph.graphLaunch, 3);
  // Mirrors are allocated once (param, batch, loss) and are the entry's arguments; the batch
  // goes through one pinned staging buffer.
  EXPECT_EQ(gGraph.allocs, 3);
  EXPECT_EQ(gPinned, 1);
  ASSERT_EQ(gEntryArgs.size(), 3u);
  EXPECT_NE(gEntryArgs[0], gEntryArgs[1]);
  // Resident: the param goes in once and stays on the device; the batch goes in and the loss
  // comes out every step; syncToHost brings the param back.
  EXPECT_EQ(gGraph.h2d, 1 + 4);
  EXPECT_EQ(gGraph.d2h, 4);
  ASSERT_EQ(results.size(), 1u);
  ASSERT_TRUE(step.syncToHost(fakeEntry, f.buffers).ok());
  EXPECT_EQ(gGraph.d2h, 4 + 1);
}

TEST_F(CudaSessionTest, StepWithoutGraphsAndAfterAFailedCapture) {
  StepFixture f;
  std::vector<std::vector<float>> results;
  gEntryCalls = 0;
  setenv("STEPC_CUDA_GRAPH", "0", 1);
  {
    CudaStep step;
    for (int i = 0; i < 3; ++i)
      ASSERT_TRUE(step.call(f.info, f.entry, fakeEntry, f.buffers, i, false, results).ok());
    // Not resident (an eval entry): the param goes in every call and never comes back.
    EXPECT_EQ(gGraph.h2d, 3 * 2);
    EXPECT_EQ(gGraph.d2h, 3);
    ASSERT_TRUE(step.syncToHost(fakeEntry, f.buffers).ok());
    EXPECT_EQ(gGraph.d2h, 3);
  }
  EXPECT_EQ(gEntryCalls, 3);
  EXPECT_EQ(gGraph.begin, 0);
  unsetenv("STEPC_CUDA_GRAPH");
  // A capture that fails: that step runs directly after it, and so do all later ones.
  gEntryCalls = 0;
  gGraph.endResult = 900;
  CudaStep step;
  for (int i = 0; i < 4; ++i)
    ASSERT_TRUE(step.call(f.info, f.entry, fakeEntry, f.buffers, i, true, results).ok());
  EXPECT_EQ(gGraph.begin, 1);
  EXPECT_EQ(gGraph.instantiate, 0);
  EXPECT_EQ(gGraph.graphLaunch, 0);
  EXPECT_EQ(gEntryCalls, 1 + 2 + 1 + 1);  // direct, captured + rerun, direct, direct
}

}  // namespace
}  // namespace stepc::rt::cuda
