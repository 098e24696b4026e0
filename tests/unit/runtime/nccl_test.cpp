// NCCL behind its dlopen seam (runtime/hal/cuda/Nccl.h), with a fake libnccl
// (fake_nccl.cpp, built next to this test): the loader's errors, the unique id passed over
// the ranks' communicator, the in-place sum on every rank, and NCCL's errors by name.
#include "runtime/hal/cuda/Nccl.h"


#include <cstdlib>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "tests/unit/runtime/fake_nccl_library.h"
#include "tests/unit/runtime/thread_communicator.h"

namespace stepc::rt::cuda {
namespace {

TEST(Nccl, AMissingLibraryIsAClearError) {
  setenv("STEPC_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
  Mailboxes boxes;
  ThreadCommunicator one(boxes, 0, 1);
  std::unique_ptr<NcclCommunicator> c;
  Status s = NcclCommunicator::open(one, c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("sums with NCCL, but /nonexistent/libnccl.so.2 cannot be loaded"),
            std::string::npos)
      << s.message();
  setenv("STEPC_NCCL_LIBRARY", "libm.so.6", 1);
  s = NcclCommunicator::open(one, c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("lacks NCCL's functions"), std::string::npos) << s.message();
  unsetenv("STEPC_NCCL_LIBRARY");
}

TEST(Nccl, FourRanksJoinThroughTheUniqueIdAndSumInPlace) {
  setenv("STEPC_NCCL_LIBRARY", fakeNcclLibrary().c_str(), 1);
  Mailboxes boxes;
  std::vector<std::vector<float>> data = {{1, 2, 3}, {10, 20, 30}, {100, 200, 300}, {-1, -2, -3}};
  std::vector<std::string> errors(4), versions(4);
  std::vector<std::thread> threads;
  for (int r = 0; r < 4; ++r)
    threads.emplace_back([&, r] {
      ThreadCommunicator ranks(boxes, r, 4);
      std::unique_ptr<NcclCommunicator> c;
      Status s = NcclCommunicator::open(ranks, c);
      // Two rounds: the second starts from the first's sums.
      for (int round = 0; round < 2 && s.ok(); ++round)
        s = c->allReduceSum(data[r].data(), 3, reinterpret_cast<void *>(0x5));
      if (c) versions[r] = c->version();
      if (!s.ok()) errors[r] = s.message();
    });
  for (std::thread &t : threads) t.join();
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(errors[r], "") << "rank " << r;
    EXPECT_EQ(versions[r], "NCCL 2.28.9");
    EXPECT_EQ(data[r], (std::vector<float>{440, 880, 1320})) << "rank " << r;
  }
  // The reduction is queued on the stream it was given.
  auto lastStream = fakeNcclHook<void *(*)()>("fake_nccl_last_stream");
  ASSERT_NE(lastStream, nullptr);
  EXPECT_EQ(lastStream(), reinterpret_cast<void *>(0x5));
  unsetenv("STEPC_NCCL_LIBRARY");
}

// --shard-optimizer on CUDA: rank r gets the sums of block r in place, then the all-gather
// hands every rank every block, in place; a layer one rank owns is reduced to it alone.
TEST(Nccl, ReduceScatterAllGatherAndReduceInPlace) {
  setenv("STEPC_NCCL_LIBRARY", fakeNcclLibrary().c_str(), 1);
  Mailboxes boxes;
  constexpr int kRanks = 4, kBlock = 2;
  std::vector<std::vector<float>> data(kRanks), scattered(kRanks), reduced(kRanks);
  for (int r = 0; r < kRanks; ++r)
    for (int i = 0; i < kRanks * kBlock; ++i) data[r].push_back(float((r + 1) * (i + 1)));
  std::vector<std::string> errors(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r)
    threads.emplace_back([&, r] {
      ThreadCommunicator ranks(boxes, r, kRanks);
      std::unique_ptr<NcclCommunicator> c;
      Status s = NcclCommunicator::open(ranks, c);
      if (s.ok()) s = c->reduceScatterSum(data[r].data(), kBlock, nullptr);
      scattered[r] = data[r];
      if (s.ok()) s = c->allGather(data[r].data(), kBlock, nullptr);
      // A layer one rank owns: the sums on rank 2 only.
      std::vector<float> layer = {float(r), float(10 * r)};
      if (s.ok()) s = c->reduceSum(layer.data(), 2, 2, nullptr);
      reduced[r] = layer;
      if (!s.ok()) errors[r] = s.message();
    });
  for (std::thread &t : threads) t.join();
  std::vector<float> sums;
  for (int i = 0; i < kRanks * kBlock; ++i) sums.push_back(float(10 * (i + 1)));  // 1+2+3+4
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(errors[r], "") << "rank " << r;
    for (int i = 0; i < kRanks * kBlock; ++i) {
      // Block r: the sums; the others: still this rank's own gradient.
      float expected = i / kBlock == r ? sums[i] : float((r + 1) * (i + 1));
      EXPECT_EQ(scattered[r][i], expected) << "rank " << r << " float " << i;
    }
    EXPECT_EQ(data[r], sums) << "rank " << r;
    std::vector<float> mine = {float(r), float(10 * r)}, sum = {6, 60};  // 0+1+2+3
    EXPECT_EQ(reduced[r], r == 2 ? sum : mine) << "rank " << r;
  }
  unsetenv("STEPC_NCCL_LIBRARY");
}

TEST(Nccl, ErrorsAreNamedByNccl) {
  setenv("STEPC_NCCL_LIBRARY", fakeNcclLibrary().c_str(), 1);
  auto failNext = fakeNcclHook<void (*)(int)>("fake_nccl_fail_next");
  ASSERT_NE(failNext, nullptr);
  Mailboxes boxes;
  ThreadCommunicator one(boxes, 0, 1);
  std::unique_ptr<NcclCommunicator> c;
  failNext(3);  // ncclInternalError from ncclGetUniqueId
  Status s = NcclCommunicator::open(one, c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("ncclGetUniqueId failed (NCCL 2.28.9): internal error"),
            std::string::npos)
      << s.message();
  ASSERT_TRUE(NcclCommunicator::open(one, c).ok());
  float x[2] = {1, 2};
  failNext(3);
  s = c->allReduceSum(x, 2, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("ncclAllReduce failed (NCCL 2.28.9): internal error"),
            std::string::npos)
      << s.message();
  failNext(3);
  s = c->reduceScatterSum(x, 2, nullptr);
  EXPECT_NE(s.message().find("ncclReduceScatter failed (NCCL 2.28.9): internal error"),
            std::string::npos)
      << s.message();
  failNext(3);
  s = c->reduceSum(x, 2, 0, nullptr);
  EXPECT_NE(s.message().find("ncclReduce failed (NCCL 2.28.9): internal error"), std::string::npos)
      << s.message();
  failNext(3);
  s = c->allGather(x, 2, nullptr);
  EXPECT_NE(s.message().find("ncclAllGather failed (NCCL 2.28.9): internal error"),
            std::string::npos)
      << s.message();
  // One rank sums to itself.
  ASSERT_TRUE(c->allReduceSum(x, 2, nullptr).ok());
  EXPECT_EQ(x[1], 2.f);
  unsetenv("STEPC_NCCL_LIBRARY");
}

TEST(Nccl, TheRanksGpuIsItsLocalRank) {
  unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  EXPECT_EQ(localRank(), 0);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3", 1);
  EXPECT_EQ(localRank(), 3);
  unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
}

}  // namespace
}  // namespace stepc::rt::cuda
