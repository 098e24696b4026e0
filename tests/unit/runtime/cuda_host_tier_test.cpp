// Planned offload on the CUDA executor (runtime/hal/cuda/HostTier.h) with a fake libcuda whose
// "device" is host memory and whose copies happen at once, logging every stream operation:
//   - the host tier is one pinned allocation per offloaded buffer, on a copy stream of its own;
//   - a fetch waits on the compute stream's event, copies on the copy stream and marks its
//     event; a wait makes the compute stream wait for that fetch's event; a flush (and the
//     step's end, which a captured graph needs) for the last transfer's;
//   - through CudaStep: an offloaded parameter has no device mirror (a null argument), the
//     first call fills the tier from the host buffer, a plan that doubles each layer in its
//     slot and writes it back changes the tier, and syncToHost brings the tier back;
//   - a wait for a layer never fetched and a transfer of a layer the buffer does not have are
//     errors of the step, not crashes.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/hal/cuda/CudaStep.h"
#include "runtime/hal/cuda/HostTier.h"
#include "runtime/hal/cuda/Session.h"
#include "tests/unit/runtime/fake_cuda_device.h"

namespace stepc::rt::cuda {
namespace {

CUstream const kCompute = reinterpret_cast<CUstream>(0x42);
CUstream const kCopy = reinterpret_cast<CUstream>(0x43);

std::vector<std::string> gLog;
std::vector<std::vector<char>> gMemory;  // device and pinned allocations, kept alive
int gStreams = 0, gEvents = 0, gPinned = 0;

std::string streamName(CUstream s) { return s == kCompute ? "compute" : s == kCopy ? "copy" : "?"; }
std::string eventName(CUevent e) { return "e" + std::to_string(reinterpret_cast<uintptr_t>(e)); }

CUresult errorString(CUresult, const char **text) {
  *text = "fake failure";
  return kSuccess;
}
// The session's stream first, then the tier's copy stream.
CUresult streamCreate(CUstream *s, unsigned) {
  *s = gStreams++ == 0 ? kCompute : kCopy;
  return kSuccess;
}
void *allocate(size_t bytes) {
  gMemory.emplace_back(bytes);
  return gMemory.back().data();
}
CUresult memAlloc(CUdeviceptr *p, size_t bytes) {
  *p = reinterpret_cast<CUdeviceptr>(allocate(bytes));
  return kSuccess;
}
CUresult hostAlloc(void **p, size_t bytes, unsigned) {
  ++gPinned;
  *p = allocate(bytes);
  return kSuccess;
}
CUresult h2d(CUdeviceptr dst, const void *src, size_t bytes, CUstream s) {
  std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  gLog.push_back("h2d " + std::to_string(bytes) + " on " + streamName(s));
  return kSuccess;
}
CUresult d2h(void *dst, CUdeviceptr src, size_t bytes, CUstream s) {
  std::memcpy(dst, reinterpret_cast<const void *>(src), bytes);
  gLog.push_back("d2h " + std::to_string(bytes) + " on " + streamName(s));
  return kSuccess;
}
CUresult eventCreate(CUevent *e, unsigned) {
  *e = reinterpret_cast<CUevent>(static_cast<uintptr_t>(++gEvents));
  return kSuccess;
}
CUresult eventRecord(CUevent e, CUstream s) {
  gLog.push_back("record " + eventName(e) + " on " + streamName(s));
  return kSuccess;
}
CUresult streamWait(CUstream s, CUevent e, unsigned) {
  gLog.push_back(streamName(s) + " waits " + eventName(e));
  return kSuccess;
}
CUresult eventElapsed(float *ms, CUevent, CUevent) {
  *ms = 1.0f;
  return kSuccess;
}
CUresult other() { return kSuccess; }

class FakeDriver : public Loader {
 public:
  void *open(const char *) override { return this; }
  void *symbol(void *, const char *n) override {
    static const std::map<std::string, void *> table = {
        {"cuGetErrorString", reinterpret_cast<void *>(&errorString)},
        {"cuStreamCreate", reinterpret_cast<void *>(&streamCreate)},
        {"cuMemAlloc_v2", reinterpret_cast<void *>(&memAlloc)},
        {"cuMemHostAlloc", reinterpret_cast<void *>(&hostAlloc)},
        {"cuMemcpyHtoDAsync_v2", reinterpret_cast<void *>(&h2d)},
        {"cuMemcpyDtoHAsync_v2", reinterpret_cast<void *>(&d2h)},
        {"cuEventCreate", reinterpret_cast<void *>(&eventCreate)},
        {"cuEventRecord", reinterpret_cast<void *>(&eventRecord)},
        {"cuStreamWaitEvent", reinterpret_cast<void *>(&streamWait)},
        {"cuEventElapsedTime", reinterpret_cast<void *>(&eventElapsed)},
    };
    if (void *device = fake::deviceSymbol(n)) return device;
    auto it = table.find(n);
    return it != table.end() ? it->second : reinterpret_cast<void *>(&other);
  }
  std::string error() override { return ""; }
};

// A memref<*xf32> descriptor of `n` floats at `data` (rank 1).
struct Slot {
  struct {
    float *allocated, *aligned;
    int64_t offset, sizes[1], strides[1];
  } d;
  StepcUnrankedF32 m;
  Slot(float *data, int64_t n) : d{data, data, 0, {n}, {1}}, m{1, &d} {}
};

// Three layers of four floats, offloaded, and one state buffer of the same shape.
ProgramInfo offloadInfo() {
  ProgramInfo info;
  ParamSpec p;
  p.name = "cell.w";
  p.shape = {3, 4};
  info.params.push_back(p);
  StateSpec st;
  st.slot = "m";
  st.param = "cell.w";
  st.shape = {3, 4};
  info.state.push_back(st);
  OffloadSpec o;
  o.index = 0;
  o.layers = 3;
  o.layerBytes = 16;
  info.offload.push_back(o);
  o.state = true;
  info.offload.push_back(o);
  return info;
}

class CudaHostTierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gLog.clear();
    gStreams = gEvents = gPinned = 0;
    unsetenv("STEPC_CUDA_GRAPH");
    Session::useLoaderForTesting(&fake);
    ASSERT_TRUE(Session::get().status().ok());
  }
  void TearDown() override {
    setHostTier(nullptr);
    Session::useLoaderForTesting(nullptr);
  }
  FakeDriver fake;
};

TEST_F(CudaHostTierTest, TransfersAreOrderedByEventsBetweenTheStreams) {
  std::unique_ptr<HostTier> tier;
  ASSERT_TRUE(HostTier::open(offloadInfo(), tier).ok());
  EXPECT_EQ(gPinned, 2);
  EXPECT_EQ(tier->idOf(false, 0), 0);
  EXPECT_EQ(tier->idOf(true, 0), 1);
  EXPECT_EQ(tier->idOf(true, 1), -1);
  for (int i = 0; i < 12; ++i) tier->tensor(0)[i] = static_cast<float>(i);
  float device[8] = {};
  Slot slot0(device, 4), slot1(device + 4, 4);
  setHostTier(tier.get());
  tier->beginStep();
  gLog.clear();
  _mlir_ciface_stepc_cuda_offload_fetch(0, 1, &slot0.m);
  stepc_cuda_offload_wait(0, 1);
  _mlir_ciface_stepc_cuda_offload_fetch(0, 2, &slot1.m);
  device[0] = 100;  // the "kernel" changes layer 1 in its slot
  _mlir_ciface_stepc_cuda_offload_store(0, 1, &slot0.m);
  stepc_cuda_offload_flush();
  tier->endStep();
  EXPECT_TRUE(Session::get().takeError().ok());
  std::vector<std::string> expected = {
      "record e1 on compute", "copy waits e1",    "h2d 16 on copy",       "record e2 on copy",
      "compute waits e2",     "record e3 on compute", "copy waits e3",    "h2d 16 on copy",
      "record e4 on copy",    "record e5 on compute", "copy waits e5",    "d2h 16 on copy",
      "record e6 on copy",    "compute waits e6",     "compute waits e6"};
  EXPECT_EQ(gLog, expected);
  EXPECT_EQ(device[1], 5);   // layer 1, element 1
  EXPECT_EQ(device[4], 8);   // layer 2, element 0
  EXPECT_EQ(tier->tensor(0)[4], 100);  // the written-back layer 1
  EXPECT_EQ(tier->tensor(0)[5], 5);
  // The next step reuses the same events, in the same order (a captured graph's nodes).
  tier->beginStep();
  gLog.clear();
  _mlir_ciface_stepc_cuda_offload_fetch(1, 0, &slot0.m);
  stepc_cuda_offload_wait(1, 0);
  tier->endStep();
  expected = {"record e1 on compute", "copy waits e1", "h2d 16 on copy", "record e2 on copy",
              "compute waits e2", "compute waits e2"};
  EXPECT_EQ(gLog, expected);
  EXPECT_TRUE(Session::get().takeError().ok());
}

TEST_F(CudaHostTierTest, BadTransfersAreErrorsOfTheStep) {
  std::unique_ptr<HostTier> tier;
  ASSERT_TRUE(HostTier::open(offloadInfo(), tier).ok());
  float device[4] = {};
  Slot slot(device, 4), wrong(device, 3);
  setHostTier(tier.get());
  tier->beginStep();
  stepc_cuda_offload_wait(0, 2);
  EXPECT_EQ(Session::get().takeError().message(),
            "the step waits for layer 2 of offloaded buffer 0, which it has not fetched");
  _mlir_ciface_stepc_cuda_offload_fetch(0, 3, &slot.m);
  EXPECT_EQ(Session::get().takeError().message(),
            "an offload transfer of buffer 0 asks for layer 3 of 3 with 16 bytes (a layer has 16)");
  _mlir_ciface_stepc_cuda_offload_fetch(2, 0, &slot.m);
  EXPECT_EQ(Session::get().takeError().message(),
            "an offload transfer names buffer 2, which the step does not have");
  _mlir_ciface_stepc_cuda_offload_store(1, 0, &wrong.m);
  EXPECT_EQ(Session::get().takeError().message(),
            "an offload transfer of buffer 1 asks for layer 0 of 3 with 12 bytes (a layer has 16)");
  tier->endStep();
}

// A host plan standing in for the compiled one: each layer of param 0 streams through two
// slots of its arena (double-buffered), is doubled there and written back.
std::vector<void *> gArgs;
void doublingPlan(void **args) {
  gArgs.assign(args, args + 2);
  static float arena[8];
  Slot slots[2] = {Slot(arena, 4), Slot(arena + 4, 4)};
  _mlir_ciface_stepc_cuda_offload_fetch(0, 0, &slots[0].m);
  for (int layer = 0; layer < 3; ++layer) {
    Slot &s = slots[layer % 2];
    stepc_cuda_offload_wait(0, layer);
    if (layer + 1 < 3) _mlir_ciface_stepc_cuda_offload_fetch(0, layer + 1, &slots[(layer + 1) % 2].m);
    for (int i = 0; i < 4; ++i) s.d.aligned[i] *= 2;
    _mlir_ciface_stepc_cuda_offload_store(0, layer, &s.m);
  }
  stepc_cuda_offload_flush();
}

TEST_F(CudaHostTierTest, CudaStepStreamsAnOffloadedParameterThroughTheTier) {
  setenv("STEPC_CUDA_GRAPH", "0", 1);  // the fake's graphs would not replay the copies
  ProgramInfo info = offloadInfo();
  info.offload.pop_back();  // the parameter only
  EntryDescription entry;
  entry.symbol = "stepc_cuda_train_step";
  Binding param, step, loss;
  param.kind = Binding::Kind::kParam;
  param.index = 0;
  step.kind = Binding::Kind::kStep;
  loss.kind = Binding::Kind::kMetric;
  loss.metric = "loss";
  entry.args = {param, step};
  entry.results = {loss};
  std::vector<float> w(12);
  for (int i = 0; i < 12; ++i) w[i] = static_cast<float>(i);
  TensorBuffer tw;
  tw.shape = {3, 4};
  tw.data = w.data();
  StepBuffers buffers;
  buffers.params = {tw};
  CudaStep cuda;
  std::vector<std::vector<float>> results;
  for (int i = 0; i < 3; ++i) {
    Status s = cuda.call(info, entry, doublingPlan, buffers, i, /*resident=*/true, results);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(gArgs[0], nullptr);  // no device mirror of the offloaded parameter
    EXPECT_NE(gArgs[1], nullptr);  // the step counter's
  }
  EXPECT_EQ(gPinned, 1);
  EXPECT_EQ(w[5], 5);  // the host buffer waits for syncToHost
  ASSERT_TRUE(cuda.syncToHost(doublingPlan, buffers).ok());
  for (int i = 0; i < 12; ++i) EXPECT_EQ(w[i], 8.0f * i) << i;
  unsetenv("STEPC_CUDA_GRAPH");
}

}  // namespace
}  // namespace stepc::rt::cuda
