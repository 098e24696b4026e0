// The CUDA step's overlapped collectives (runtime/hal/cuda/CollectiveStream.h, Nccl.h) with a
// fake libcuda whose "device" is host memory, logging every stream operation, and the fake
// libnccl (fake_nccl.cpp) over threads:
//   - a start records an event on the compute stream, the collectives' stream waits for it,
//     runs NCCL's collective there and records its done-event; the wait makes the compute
//     stream wait for that event, finding each start by where its buffer begins in the
//     wait's input (a stack of two starts' buffers here); the next step reuses the events;
//   - a reduce-scatter's owners pick NCCL's call: its reduce-scatter for N equal blocks from
//     rank 0, its reduce for a layer one rank owns (the sums themselves: nccl_test);
//   - a failed collective is the step's error and still joins its stream back;
//   - a wait whose input starts no collective, and an owner layout NCCL cannot run, are
//     errors of the step, not crashes or wrong sums.

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/hal/cuda/Nccl.h"
#include "runtime/hal/cuda/Session.h"
#include "tests/unit/runtime/fake_cuda_device.h"
#include "tests/unit/runtime/fake_nccl_library.h"
#include "tests/unit/runtime/memref_descriptor.h"
#include "tests/unit/runtime/thread_communicator.h"

namespace stepc::rt::cuda {
namespace {

CUstream const kCompute = reinterpret_cast<CUstream>(0x42);
CUstream const kCollectives = reinterpret_cast<CUstream>(0x44);

std::mutex gLogMutex;
std::vector<std::string> gLog;  // rank 0's
thread_local int tRank = 0;
int gStreams = 0, gEvents = 0;

void log(const std::string &line) {
  std::lock_guard<std::mutex> lock(gLogMutex);
  if (tRank == 0) gLog.push_back(line);
}
std::string streamName(CUstream s) {
  return s == kCompute ? "compute" : s == kCollectives ? "collectives" : "?";
}
std::string eventName(CUevent e) { return "e" + std::to_string(reinterpret_cast<uintptr_t>(e)); }

CUresult errorString(CUresult, const char **text) {
  *text = "fake failure";
  return kSuccess;
}
// The session's stream first, then the collectives' stream.
CUresult streamCreate(CUstream *s, unsigned) {
  *s = gStreams++ == 0 ? kCompute : kCollectives;
  return kSuccess;
}
CUresult d2d(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s) {
  std::memmove(reinterpret_cast<void *>(dst), reinterpret_cast<const void *>(src), bytes);
  log("copy " + std::to_string(bytes) + " on " + streamName(s));
  return kSuccess;
}
CUresult eventCreate(CUevent *e, unsigned) {
  *e = reinterpret_cast<CUevent>(static_cast<uintptr_t>(++gEvents));
  return kSuccess;
}
CUresult eventRecord(CUevent e, CUstream s) {
  log("record " + eventName(e) + " on " + streamName(s));
  return kSuccess;
}
CUresult streamWait(CUstream s, CUevent e, unsigned) {
  log(streamName(s) + " waits " + eventName(e));
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
        {"cuMemcpyDtoDAsync_v2", reinterpret_cast<void *>(&d2d)},
        {"cuEventCreate", reinterpret_cast<void *>(&eventCreate)},
        {"cuEventRecord", reinterpret_cast<void *>(&eventRecord)},
        {"cuStreamWaitEvent", reinterpret_cast<void *>(&streamWait)},
    };
    if (void *device = fake::deviceSymbol(n)) return device;
    auto it = table.find(n);
    return it != table.end() ? it->second : reinterpret_cast<void *>(&other);
  }
  std::string error() override { return ""; }
};

class CudaCollectivesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gLog.clear();
    gStreams = gEvents = 0;
    Session::useLoaderForTesting(&fake);
    ASSERT_TRUE(Session::get().status().ok());
    setenv("STEPC_NCCL_LIBRARY", fakeNcclLibrary().c_str(), 1);
    ThreadCommunicator one(boxes, 0, 1);
    ASSERT_TRUE(NcclCommunicator::open(one, nccl).ok());
    setNcclCommunicator(nccl.get());
    lastCall = fakeNcclHook<const char *(*)()>("fake_nccl_last_call");
    ASSERT_NE(lastCall, nullptr);
  }
  void TearDown() override {
    setNcclCommunicator(nullptr);
    unsetenv("STEPC_NCCL_LIBRARY");
    Session::useLoaderForTesting(nullptr);
  }
  FakeDriver fake;
  Mailboxes boxes;
  std::unique_ptr<NcclCommunicator> nccl;
  const char *(*lastCall)() = nullptr;
};

TEST_F(CudaCollectivesTest, StartsRunOnTheirStreamAndWaitsJoinIt) {
  // A layer loop's two starts stacked in one buffer, then the wait over the stack.
  float grads[6] = {1, 2, 3, 4, 5, 6}, started[6] = {}, out[6] = {};
  UnrankedView g0(grads, 3), g1(grads + 3, 3), s0(started, 3), s1(started + 3, 3),
      stack(started, 6), result(out, 6);
  for (int step = 0; step < 2; ++step) {
    gLog.clear();
    _mlir_ciface_stepc_cuda_all_reduce_start_f32(&g0.m, &s0.m, 1);
    _mlir_ciface_stepc_cuda_reduce_scatter_start_f32(&g1.m, &s1.m, 0, 3, 2);
    EXPECT_STREQ(lastCall(), "ncclReduceScatter");
    _mlir_ciface_stepc_cuda_all_reduce_wait_f32(&stack.m, &result.m, 3);
    ASSERT_TRUE(Session::get().takeError().ok());
    // The second step reuses the first's events in the same order (a captured graph's nodes).
    std::vector<std::string> expected = {
        "copy 12 on compute",  "record e1 on compute", "collectives waits e1",
        "record e2 on collectives", "copy 12 on compute", "record e3 on compute",
        "collectives waits e3", "record e4 on collectives", "compute waits e2",
        "compute waits e4",    "copy 24 on compute"};
    EXPECT_EQ(gLog, expected) << "step " << step;
    EXPECT_EQ(out[0], 1);  // one rank: the sums are the gradients
    EXPECT_EQ(out[5], 6);
  }
}

TEST_F(CudaCollectivesTest, AStartInPlaceCopiesNothing) {
  float grads[4] = {1, 2, 3, 4}, out[4] = {};
  UnrankedView g(grads, 4), result(out, 4);
  gLog.clear();
  _mlir_ciface_stepc_cuda_reduce_scatter_start_f32(&g.m, &g.m, 0, 4, 7);
  _mlir_ciface_stepc_cuda_all_reduce_wait_f32(&g.m, &result.m, 8);
  ASSERT_TRUE(Session::get().takeError().ok());
  EXPECT_EQ(gLog.front(), "record e1 on compute");
  EXPECT_EQ(out[3], 4);
}

// A failed collective is the step's error, and its done-event is still recorded, so that the
// wait joins the collectives' stream back (a graph capture needs that).
TEST_F(CudaCollectivesTest, AFailedCollectiveStillJoinsItsStream) {
  auto failNext = fakeNcclHook<void (*)(int)>("fake_nccl_fail_next");
  ASSERT_NE(failNext, nullptr);
  float grads[2] = {1, 2};
  UnrankedView g(grads, 2);
  gLog.clear();
  failNext(3);
  _mlir_ciface_stepc_cuda_all_reduce_start_f32(&g.m, &g.m, 9);
  EXPECT_EQ(Session::get().takeError().message(),
            "all-reduce 9: ncclAllReduce failed (NCCL 2.28.9): internal error - please report "
            "this issue to the NCCL developers");
  _mlir_ciface_stepc_cuda_all_reduce_wait_f32(&g.m, &g.m, 10);
  std::vector<std::string> expected = {"record e1 on compute", "collectives waits e1",
                                       "record e2 on collectives", "compute waits e2"};
  EXPECT_EQ(gLog, expected);
}

// Which NCCL call a reduce-scatter's owners map to, on 4 ranks: N equal blocks from rank 0
// (a whole gradient), one rank (a layer started inside the backward), or none.
TEST(CudaScatterLayout, OwnersMapToNcclsCalls) {
  EXPECT_EQ(scatterLayout(0, 4, 16, 4), ScatterLayout::kBlocks);
  EXPECT_EQ(scatterLayout(2, 16, 16, 4), ScatterLayout::kOneRank);
  EXPECT_EQ(scatterLayout(0, 16, 16, 4), ScatterLayout::kOneRank);
  EXPECT_EQ(scatterLayout(0, 16, 16, 1), ScatterLayout::kBlocks);
  EXPECT_EQ(scatterLayout(1, 4, 16, 4), ScatterLayout::kNotNccl);  // blocks from rank 1
  EXPECT_EQ(scatterLayout(0, 8, 16, 4), ScatterLayout::kNotNccl);  // 2 blocks on 4 ranks
  EXPECT_EQ(scatterLayout(4, 16, 16, 4), ScatterLayout::kNotNccl);  // no rank 4
}

TEST_F(CudaCollectivesTest, WhatNcclCannotRunIsAnErrorOfTheStep) {
  float grads[4] = {1, 2, 3, 4}, out[4] = {};
  UnrankedView g(grads, 4), half(grads, 2), result(out, 4);
  // Owners from rank 1 of 1: not NCCL's layout, and not a rank.
  _mlir_ciface_stepc_cuda_reduce_scatter_start_f32(&g.m, &g.m, 1, 2, 4);
  EXPECT_EQ(Session::get().takeError().message(),
            "reduce-scatter 4: NCCL reduces into N equal blocks in rank order or into one rank, "
            "but this one's 4 floats have owners from rank 1 in blocks of 2 (a compiler bug)");
  // A wait whose input starts no collective (its start's buffer was moved).
  _mlir_ciface_stepc_cuda_all_reduce_wait_f32(&g.m, &result.m, 5);
  EXPECT_EQ(Session::get().takeError().message(),
            "all-reduce wait 5: float 0 of its input starts no collective in flight (a compiler "
            "bug: the starts' buffers were moved or copied before the wait)");
  // Buffers of different sizes.
  _mlir_ciface_stepc_cuda_all_reduce_start_f32(&g.m, &half.m, 6);
  EXPECT_EQ(Session::get().takeError().message(),
            "all-reduce 6: expected two contiguous non-empty buffers of the same size (a "
            "compiler bug)");
}

}  // namespace
}  // namespace stepc::rt::cuda
