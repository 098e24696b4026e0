// The overlapped all-reduce (runtime/hal/cpu/BackgroundReductions.h): reductions started on
// ranks that are threads of this process run on each rank's own reduction thread, in place,
// in the order they were started, with the synchronous tree's bits; the step's wait finds
// them in a stack of the starts' results.
#include "runtime/hal/cpu/BackgroundReductions.h"
#include "runtime/hal/cpu/Collectives.h"
#include "tests/unit/runtime/memref_descriptor.h"
#include "tests/unit/runtime/thread_communicator.h"

#include <cstring>
#include <thread>

#include <gtest/gtest.h>

namespace stepc::rt {
namespace {

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Each of four ranks starts three reductions in place, in three buffers it leaves alone until
// it waits, and waits for them in another order, twice in a row (two steps: the tickets count
// from 0 again and the reductions are found by their buffers).
TEST(BackgroundReductions, StartedReductionsGiveTheTreesBitsOnEveryRank) {
  const std::vector<std::vector<float>> in = {
      {1e8f, 3.f, 1.f}, {1.f, -0.f, 2.f}, {-1e8f, -0.f, 3.f}, {1.f, 0.25f, 4.f}};
  volatile float a = 1e8f, b = 1.f, c = -1e8f, d = 1.f;
  float tree = (a + b) + (c + d);
  for (bool threaded : {true, false}) {
    Mailboxes boxes;
    std::vector<std::vector<float>> out(4, std::vector<float>(6));
    std::vector<std::string> errors(4);
    std::vector<std::thread> ranks;
    for (int r = 0; r < 4; ++r)
      ranks.emplace_back([&, r] {
        ThreadCommunicator comm(boxes, r, 4);
        BackgroundReductions reductions(comm, AllReduceMode::kTree, threaded);
        for (int step = 0; step < 2; ++step) {
          std::vector<float> buffer = in[r];
          int64_t t0 = reductions.start(&buffer[0], 1, 10);
          int64_t t1 = reductions.start(&buffer[1], 1, 11);
          int64_t t2 = reductions.start(&buffer[2], 1, 12);
          EXPECT_EQ(t0, 0);
          EXPECT_EQ(t2, 2);
          EXPECT_EQ(reductions.find(&buffer[1]), t1);
          EXPECT_EQ(reductions.find(in[r].data()), -1);
          EXPECT_EQ(reductions.elements(t1), 1);
          EXPECT_EQ(reductions.elements(3), -1);
          for (int64_t t : {t2, t0, t1}) {
            if (Status s = reductions.wait(t); !s.ok()) errors[r] = s.message();
            out[r][step * 3 + t] = buffer[static_cast<size_t>(t)];
          }
        }
      });
    for (std::thread &t : ranks) t.join();
    for (int r = 0; r < 4; ++r) {
      EXPECT_EQ(errors[r], "") << "rank " << r;
      for (int step = 0; step < 2; ++step) {
        EXPECT_EQ(bits(out[r][step * 3]), bits(tree)) << "rank " << r << " threaded " << threaded;
        EXPECT_EQ(out[r][step * 3 + 1], 3.25f);
        EXPECT_EQ(out[r][step * 3 + 2], 10.f);
      }
    }
  }
}

// The reduce-scatter (--shard-optimizer's gradients) gives each float's owner the bits the
// all-reduce's tree gives every rank: 4 thread ranks, values whose sums depend on the order,
// a whole tensor in 4 blocks (first 0) and one layer's tensor owned by one rank (first 2, the
// whole buffer one block), through the reduction thread and not.
TEST(BackgroundReductions, TheReduceScatterGivesEachOwnerTheAllReducesBits) {
  const int kRanks = 4;
  const int64_t n = 16;
  // Large terms that cancel and small ones the grouping loses or keeps: (1e8 + 1) + (-1e8 + 1)
  // is 0, ((1e8 + 1) - 1e8) + 1 is 1.
  auto value = [](int r, int64_t i) {
    float big = 1e8f * static_cast<float>(1 + i % 3), small = 1.f + 0.25f * static_cast<float>(i);
    return r == 0 ? big : r == 2 ? -big : small + static_cast<float>(r);
  };
  for (bool threaded : {true, false})
    for (int64_t first : {0, 2}) {
      int64_t per = first == 0 ? n / kRanks : n;
      Mailboxes boxes;
      std::vector<std::vector<float>> tree(kRanks), scattered(kRanks);
      std::vector<std::string> errors(kRanks);
      std::vector<std::thread> ranks;
      for (int r = 0; r < kRanks; ++r)
        ranks.emplace_back([&, r] {
          ThreadCommunicator comm(boxes, r, kRanks);
          std::vector<float> whole(n), mine(n), scratch;
          for (int64_t i = 0; i < n; ++i) whole[i] = mine[i] = value(r, i);
          if (Status s = allReduceSum(comm, whole.data(), n, 1, scratch); !s.ok())
            errors[r] = s.message();
          BackgroundReductions reductions(comm, AllReduceMode::kTree, threaded);
          int64_t t = reductions.start(mine.data(), n, 2, first, per);
          if (Status s = reductions.wait(t); !s.ok()) errors[r] = s.message();
          tree[r] = whole;
          scattered[r] = mine;
        });
      for (std::thread &t : ranks) t.join();
      int owned = 0;
      for (int r = 0; r < kRanks; ++r) {
        EXPECT_EQ(errors[r], "") << "rank " << r;
        for (int64_t i = 0; i < n; ++i) {
          if (first + i / per != r) continue;
          ++owned;
          EXPECT_EQ(bits(scattered[r][i]), bits(tree[r][i]))
              << "rank " << r << " float " << i << " first " << first << " threaded " << threaded;
        }
      }
      EXPECT_EQ(owned, n);  // every float has exactly one owner, and it was checked
    }
  // The grouping is what is checked: some of these sums differ from a left-to-right chain.
  int differ = 0;
  for (int64_t i = 0; i < n; ++i) {
    volatile float v0 = value(0, i), v1 = value(1, i), v2 = value(2, i), v3 = value(3, i);
    differ += bits((v0 + v1) + (v2 + v3)) != bits(((v0 + v1) + v2) + v3);
  }
  EXPECT_GT(differ, 0);
}

// Owners outside the ranks (another rank count than the program's) fail instead of sending.
TEST(BackgroundReductions, AReduceScatterWithOwnersBeyondTheRanksFails) {
  Mailboxes boxes;
  ThreadCommunicator comm(boxes, 0, 2);
  std::vector<float> data(8, 1.f), send, receive;
  Status s = reduceScatterSum(comm, data.data(), 8, 0, 2, 7, send, receive);  // 4 owners
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("do not fit 2 ranks"), std::string::npos) << s.message();
}

TEST(BackgroundReductions, RanksOutOfStepFailAtTheWaitAndStopTalking) {
  Mailboxes boxes;
  std::vector<std::string> first(2), second(2);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.emplace_back([&, r] {
      ThreadCommunicator comm(boxes, r, 2);
      BackgroundReductions reductions(comm, AllReduceMode::kTree, true);
      float x = 1.f, y = 2.f;
      int64_t t = reductions.start(&x, 1, 3 + r);  // rank 0 runs reduction 3, rank 1 runs 4
      int64_t u = reductions.start(&y, 1, 5);
      if (Status s = reductions.wait(t); !s.ok()) first[r] = s.message();
      if (Status s = reductions.wait(u); !s.ok()) second[r] = s.message();
    });
  for (std::thread &t : ranks) t.join();
  // Rank 0 receives rank 1's header and finds the mismatch; rank 1 only sends (and ends its
  // tree); the reduction after a failure is not attempted on the failed rank.
  EXPECT_NE(first[0].find("rank 1 sent collective 4 of 1 floats while rank 0 runs reduction 3"),
            std::string::npos)
      << first[0];
  EXPECT_EQ(second[0], first[0]);
}

// The step's calls on one rank of two, the other rank played by hand: two starts whose
// results a repeat stacked into one buffer (each copies its input there), and one wait on the
// stack, in place.
TEST(BackgroundReductions, TheWaitFindsTheReductionsOfAStackOfStarts) {
  Mailboxes boxes;
  ThreadCommunicator rank0(boxes, 0, 2);
  setCommunicator(&rank0);
  float layer0[2] = {1, 2}, layer1[2] = {3, 4}, stack[4] = {0, 0, 0, 0};
  int64_t d0[5], d1[5], s0[5], s1[5], whole[5];
  describe(layer0, 2, d0);
  describe(layer1, 2, d1);
  describe(stack, 2, s0);
  describe(stack + 2, 2, s1);
  describe(stack, 4, whole);
  StepcUnrankedF32 in0{1, d0}, in1{1, d1}, out0{1, s0}, out1{1, s1}, all{1, whole};
  // Rank 1's halves of the tree: its sums for both reductions (the results back go to it).
  struct Header {
    int64_t id, elements;
  };
  float theirs0[2] = {10, 20}, theirs1[2] = {30, 40};
  Header h0{7, 2}, h1{7, 2};
  boxes.put(1, 0, &h0, sizeof h0);
  boxes.put(1, 0, theirs0, sizeof theirs0);
  boxes.put(1, 0, &h1, sizeof h1);
  boxes.put(1, 0, theirs1, sizeof theirs1);
  _mlir_ciface_stepc_all_reduce_start_f32(&in0, &out0, 7);
  _mlir_ciface_stepc_all_reduce_start_f32(&in1, &out1, 7);
  _mlir_ciface_stepc_all_reduce_wait_f32(&all, &all, 8);
  std::string error;
  EXPECT_FALSE(takeCollectiveError(error)) << error;
  EXPECT_EQ(stack[0], 11.f);
  EXPECT_EQ(stack[1], 22.f);
  EXPECT_EQ(stack[2], 33.f);
  EXPECT_EQ(stack[3], 44.f);
  EXPECT_EQ(layer0[0], 1.f);  // the inputs were copied, not reduced in
  // A buffer where no reduction started (the starts' results copied elsewhere before the
  // wait) is a compiler bug the step reports.
  float moved[4] = {0, 0, 0, 0};
  int64_t dm[5];
  describe(moved, 4, dm);
  StepcUnrankedF32 m{1, dm};
  _mlir_ciface_stepc_all_reduce_wait_f32(&m, &m, 9);
  ASSERT_TRUE(takeCollectiveError(error));
  EXPECT_NE(error.find("all-reduce wait 9 on rank 0: float 0 of its input starts no reduction "
                       "in flight"),
            std::string::npos)
      << error;
  setCommunicator(nullptr);
  // One rank: start and wait copy.
  float x[2] = {5, 6}, t[2] = {0, 0}, y[2] = {0, 0};
  int64_t dx[5], dt[5], dy[5];
  describe(x, 2, dx);
  describe(t, 2, dt);
  describe(y, 2, dy);
  StepcUnrankedF32 vx{1, dx}, vt{1, dt}, vy{1, dy};
  _mlir_ciface_stepc_all_reduce_start_f32(&vx, &vt, 0);
  _mlir_ciface_stepc_all_reduce_wait_f32(&vt, &vy, 1);
  EXPECT_FALSE(takeCollectiveError(error)) << error;
  EXPECT_EQ(y[1], 6.f);
}

// --shard-optimizer's deferred gathers: three parameters as a step leaves them (an unstacked
// one, a stacked one with 3 layers per rank's block, another unstacked one) on 4 thread
// ranks. A wait on one layer's rows of every block returns with those rows gathered; once
// settled, every float of every parameter is its owner's. Through the thread and not.
TEST(BackgroundReductions, DeferredGathersDeliverEachLayersRowsAndThenEverything) {
  const int kRanks = 4;
  const int64_t kLayers = 3, kRow = 2;
  const int64_t block[3] = {2, kLayers * kRow, 5};  // floats per rank of each parameter
  auto value = [](int p, int64_t i) { return static_cast<float>(100 * p + i); };
  for (bool threaded : {true, false}) {
    Mailboxes boxes;
    std::vector<std::string> errors(kRanks);
    std::vector<std::vector<std::vector<float>>> params(kRanks);
    std::vector<int> layerChecked(kRanks, 0);
    std::vector<std::thread> ranks;
    for (int r = 0; r < kRanks; ++r)
      ranks.emplace_back([&, r] {
        ThreadCommunicator comm(boxes, r, kRanks);
        BackgroundReductions reductions(comm, AllReduceMode::kTree, threaded);
        auto &mine = params[r];
        mine.resize(3);
        for (int p = 0; p < 3; ++p) {
          mine[p].assign(static_cast<size_t>(block[p] * kRanks), -1.f);
          for (int64_t i = r * block[p]; i < (r + 1) * block[p]; ++i) mine[p][i] = value(p, i);
        }
        Status s;
        for (int p = 0; p < 3 && s.ok(); ++p)
          s = reductions.gatherLater(mine[p].data(), block[p], p == 1 ? kLayers : 1, 20 + p,
                                     p == 2);
        // Layer 1 of the stacked parameter: its rows in every rank's block.
        for (int q = 0; q < kRanks && s.ok(); ++q) {
          float *row = mine[1].data() + q * block[1] + 1 * kRow;
          s = reductions.awaitGathers(row, row + kRow);
          for (int64_t i = 0; i < kRow && s.ok(); ++i)
            layerChecked[r] += row[i] == value(1, q * block[1] + kRow + i);
        }
        if (s.ok()) s = reductions.settleGathers();
        if (!s.ok()) errors[r] = s.message();
        EXPECT_FALSE(reductions.gathersPending());
      });
    for (std::thread &t : ranks) t.join();
    for (int r = 0; r < kRanks; ++r) {
      EXPECT_EQ(errors[r], "") << "rank " << r;
      EXPECT_EQ(layerChecked[r], kRanks * kRow) << "rank " << r << " threaded " << threaded;
      for (int p = 0; p < 3; ++p)
        for (int64_t i = 0; i < block[p] * kRanks; ++i)
          EXPECT_EQ(params[r][p][i], value(p, i))
              << "rank " << r << " parameter " << p << " float " << i << " threaded " << threaded;
    }
  }
}

// A block that is not whole layers is a compiler bug, said so before anything is sent.
TEST(BackgroundReductions, ADeferredGatherWhoseBlockIsNotWholeLayersFails) {
  Mailboxes boxes;
  ThreadCommunicator comm(boxes, 0, 2);
  BackgroundReductions reductions(comm, AllReduceMode::kTree, true);
  std::vector<float> w(10);
  Status s = reductions.gatherLater(w.data(), 5, 2, 3, true);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("a block of 5 floats is not 2 layers"), std::string::npos)
      << s.message();
  EXPECT_FALSE(reductions.gathersPending());
}

}  // namespace
}  // namespace stepc::rt
