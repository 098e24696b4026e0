// The data-parallel all-reduce (runtime/hal/cpu/Collectives.h): its fixed tree, and the
// all-gather of --shard-optimizer, checked on ranks that are threads of this process, and the
// MPI loader's errors.
#include "runtime/hal/cpu/Collectives.h"
#include "tests/unit/runtime/memref_descriptor.h"
#include "tests/unit/runtime/thread_communicator.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <gtest/gtest.h>

namespace stepc::rt {
namespace {

// Runs allReduceSum on `size` thread ranks, rank r starting from inputs[r]; returns each
// rank's result (and its status in `errors`).
std::vector<std::vector<float>> reduceOnThreads(const std::vector<std::vector<float>> &inputs,
                                                std::vector<int64_t> ids,
                                                std::vector<std::string> *errors = nullptr) {
  int size = static_cast<int>(inputs.size());
  Mailboxes boxes;
  std::vector<std::vector<float>> data = inputs;
  std::vector<std::string> status(size);
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      ThreadCommunicator c(boxes, r, size);
      std::vector<float> scratch;
      Status s = allReduceSum(c, data[r].data(), static_cast<int64_t>(data[r].size()), ids[r], scratch);
      if (!s.ok()) status[r] = s.message();
    });
  for (std::thread &t : threads) t.join();
  if (errors) *errors = status;
  return data;
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(Collectives, FourRanksSumInTheFixedTreeOnEveryRank) {
  // Float addition is not associative here: the chain ((1e8 + 1) - 1e8) + 1 gives 1, the tree
  // (1e8 + 1) + (-1e8 + 1) gives 0 (each inner sum rounds its 1 away).
  std::vector<std::vector<float>> in = {{1e8f, 3.f}, {1.f, -0.f}, {-1e8f, -0.f}, {1.f, 0.25f}};
  auto out = reduceOnThreads(in, {7, 7, 7, 7});
  volatile float a = 1e8f, b = 1.f, c = -1e8f, d = 1.f;
  float tree = (a + b) + (c + d), chain = ((a + b) + c) + d;
  ASSERT_NE(bits(tree), bits(chain));
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(bits(out[r][0]), bits(tree)) << "rank " << r;
    EXPECT_EQ(out[r][1], 3.25f) << "rank " << r;
  }
}

// A buffer of kSplitAllReduceFloats or more runs as a reduce-scatter and an all-gather: every
// float, on every rank, has the tree's bits, on 2 and 4 ranks (-0 where every rank has it).
TEST(Collectives, ALargeBufferSplitIntoBlocksKeepsTheTreesBits) {
  for (int size : {2, 4}) {
    int64_t n = kSplitAllReduceFloats * 2;
    std::vector<std::vector<float>> in(size, std::vector<float>(n));
    for (int r = 0; r < size; ++r)
      for (int64_t i = 0; i < n; ++i) {
        float big = 1e8f * static_cast<float>(1 + i % 5);
        in[r][i] = i % 7 == 0 ? -0.f : r % 2 == 0 ? (r == 0 ? big : -big) : 1.f + 0.5f * r;
      }
    auto out = reduceOnThreads(in, std::vector<int64_t>(size, 3));
    int differ = 0;
    for (int64_t i = 0; i < n; ++i) {
      float tree;
      if (size == 2) {
        volatile float a = in[0][i], b = in[1][i];
        tree = a + b;
      } else {
        volatile float a = in[0][i], b = in[1][i], c = in[2][i], d = in[3][i];
        tree = (a + b) + (c + d);
        differ += bits(tree) != bits(((a + b) + c) + d);
      }
      for (int r = 0; r < size; ++r) {
        ASSERT_EQ(bits(out[r][i]), bits(tree)) << size << " ranks, rank " << r << " float " << i;
      }
    }
    if (size == 4) {
      EXPECT_GT(differ, 0);  // the grouping is what was checked
    }
  }
}

TEST(Collectives, NegativeZeroIsKeptWhereEveryRankHasIt) {
  auto out = reduceOnThreads({{-0.f}, {-0.f}}, {0, 0});
  EXPECT_EQ(bits(out[0][0]), bits(-0.f));
  EXPECT_EQ(bits(out[1][0]), bits(-0.f));
}

TEST(Collectives, ThreeRanksSumAsAPartialTree) {
  volatile float a = 1e8f, b = 1.f, c = 1.f;
  auto out = reduceOnThreads({{a}, {b}, {c}}, {0, 0, 0});
  float expected = (a + b) + c;
  for (int r = 0; r < 3; ++r) EXPECT_EQ(bits(out[r][0]), bits(expected)) << "rank " << r;
}

TEST(Collectives, RanksThatIssueDifferentReductionsFail) {
  std::vector<std::string> errors;
  reduceOnThreads({{1.f}, {2.f}}, {3, 4}, &errors);
  EXPECT_NE(errors[0].find("rank 1 sent collective 4 of 1 floats while rank 0 runs reduction 3"),
            std::string::npos)
      << errors[0];
}

// Runs allGather on `size` thread ranks: rank r's buffer holds `block` floats r·1000 + i in
// its block r and NaN elsewhere; returns each rank's buffer (and its status in `errors`).
std::vector<std::vector<float>> gatherOnThreads(int size, int64_t block, std::vector<int64_t> ids,
                                                std::vector<std::string> *errors = nullptr) {
  Mailboxes boxes;
  std::vector<std::vector<float>> data(size, std::vector<float>(size * block, std::nanf("")));
  for (int r = 0; r < size; ++r)
    for (int64_t i = 0; i < block; ++i) data[r][r * block + i] = static_cast<float>(r * 1000 + i);
  std::vector<std::string> status(size);
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      ThreadCommunicator c(boxes, r, size);
      Status s = allGather(c, data[r].data(), block, ids[r]);
      if (!s.ok()) status[r] = s.message();
    });
  for (std::thread &t : threads) t.join();
  if (errors) *errors = status;
  return data;
}

TEST(Collectives, AllGatherPutsEveryRanksBlockInItsRowsOnEveryRank) {
  for (int size : {1, 2, 4, 8}) {
    auto out = gatherOnThreads(size, 3, std::vector<int64_t>(size, 5));
    for (int r = 0; r < size; ++r)
      for (int b = 0; b < size; ++b)
        for (int64_t i = 0; i < 3; ++i)
          EXPECT_EQ(out[r][b * 3 + i], static_cast<float>(b * 1000 + i))
              << size << " ranks: rank " << r << ", block " << b << ", element " << i;
  }
}

TEST(Collectives, AllGatherRefusesRanksOutOfStepAndOddCounts) {
  std::vector<std::string> errors;
  gatherOnThreads(2, 2, {3, 4}, &errors);
  // Rank 1 receives first (rank 0 sends first), so it is the one that finds the mismatch.
  EXPECT_NE(errors[1].find("rank 0 sent collective 3 of 2 floats while rank 1 runs all-gather 4"),
            std::string::npos)
      << errors[1];
  gatherOnThreads(3, 2, {0, 0, 0}, &errors);
  EXPECT_NE(errors[0].find("the all-gather needs a power-of-two rank count, found 3"),
            std::string::npos)
      << errors[0];
}

TEST(Collectives, OneRankCopiesAndRunsEveryMicroBatch) {
  setCommunicator(nullptr);
  EXPECT_EQ(stepc_micro_batch_begin(8), 0);
  EXPECT_EQ(stepc_micro_batch_end(8), 8);
  float in[3] = {1, 2, 3}, out[3] = {0, 0, 0};
  int64_t inDesc[5], outDesc[5];
  describe(in, 3, inDesc);
  describe(out, 3, outDesc);
  StepcUnrankedF32 a{1, inDesc}, b{1, outDesc};
  _mlir_ciface_stepc_all_reduce_sum_f32(&a, &b, 0);
  std::string error;
  EXPECT_FALSE(takeCollectiveError(error)) << error;
  EXPECT_EQ(out[2], 3.f);
  // A strided view is a compiler bug the step reports, not a silent wrong sum.
  inDesc[4] = 2;
  _mlir_ciface_stepc_all_reduce_sum_f32(&a, &b, 5);
  ASSERT_TRUE(takeCollectiveError(error));
  EXPECT_NE(error.find("all-reduce 5: expected two contiguous buffers"), std::string::npos) << error;
}

// --all-reduce=fast: the step's call goes to the communicator's own all-reduce (here a chain,
// whose bits differ from the tree's), on every rank.
TEST(Collectives, FastModeUsesTheCommunicatorsAllReduce) {
  Mailboxes boxes;
  std::vector<std::vector<float>> data = {{1e8f}, {1.f}, {-1e8f}, {1.f}};
  std::vector<std::string> errors(4);
  setAllReduceMode(AllReduceMode::kFast);
  std::vector<std::thread> threads;
  for (int r = 0; r < 4; ++r)
    threads.emplace_back([&, r] {
      ThreadCommunicator c(boxes, r, 4);
      Status s = c.allReduceSumFast(data[r].data(), 1, 0);
      if (!s.ok()) errors[r] = s.message();
    });
  for (std::thread &t : threads) t.join();
  volatile float a = 1e8f, b = 1.f, c = -1e8f, d = 1.f;
  float chain = ((a + b) + c) + d;
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(errors[r], "");
    EXPECT_EQ(bits(data[r][0]), bits(chain)) << "rank " << r;
  }
  // The step's call on one rank of two: the mode picks the communicator's all-reduce, which
  // here waits for rank 1's message and sums it.
  ThreadCommunicator rank0(boxes, 0, 2);
  float one = 2.f;
  boxes.put(1, 0, &one, sizeof one);
  setCommunicator(&rank0);
  float in[1] = {5}, out[1] = {0};
  int64_t inDesc[5], outDesc[5];
  describe(in, 1, inDesc);
  describe(out, 1, outDesc);
  StepcUnrankedF32 x{1, inDesc}, y{1, outDesc};
  _mlir_ciface_stepc_all_reduce_sum_f32(&x, &y, 0);
  setCommunicator(nullptr);
  setAllReduceMode(AllReduceMode::kTree);
  std::string error;
  EXPECT_FALSE(takeCollectiveError(error)) << error;
  EXPECT_EQ(out[0], 7.f);
}

TEST(Collectives, RanksRunAlignedBlocksOfTheMicroBatches) {
  Mailboxes boxes;
  ThreadCommunicator rank2(boxes, 2, 4);
  setCommunicator(&rank2);
  EXPECT_EQ(stepc_micro_batch_begin(8), 4);
  EXPECT_EQ(stepc_micro_batch_end(8), 6);
  setCommunicator(nullptr);
}

TEST(Collectives, WithoutMpirunThereIsNoCommunicator) {
  unsetenv("OMPI_COMM_WORLD_SIZE");
  unsetenv("PMI_SIZE");
  unsetenv("PMIX_RANK");
  std::unique_ptr<Communicator> c;
  ASSERT_TRUE(openCommunicator(c).ok());
  EXPECT_EQ(c, nullptr);
}

TEST(Collectives, MpirunWithoutUsableLibmpiIsAClearError) {
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  setenv("STEPC_MPI_LIBRARY", "/nonexistent/libmpi.so.40", 1);
  std::unique_ptr<Communicator> c;
  Status s = openCommunicator(c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("mpirun started this process (OMPI_COMM_WORLD_SIZE=2) but "
                             "/nonexistent/libmpi.so.40 cannot be loaded"),
            std::string::npos)
      << s.message();
  // A library that is not Open MPI's.
  setenv("STEPC_MPI_LIBRARY", "libm.so.6", 1);
  s = openCommunicator(c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("lacks the MPI functions"), std::string::npos) << s.message();
  unsetenv("OMPI_COMM_WORLD_SIZE");
  unsetenv("STEPC_MPI_LIBRARY");
}

TEST(Collectives, AnotherMpiLauncherIsNamed) {
  unsetenv("OMPI_COMM_WORLD_SIZE");
  setenv("PMI_SIZE", "2", 1);
  std::unique_ptr<Communicator> c;
  Status s = openCommunicator(c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("other than Open MPI's mpirun"), std::string::npos) << s.message();
  unsetenv("PMI_SIZE");
}

}  // namespace
}  // namespace stepc::rt
