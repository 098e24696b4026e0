// The CPU host tier of offloaded buffers (runtime/hal/cpu/Offload.h): the file it keeps, the
// transfers in issue order, what the training loop sees through the mapping, and its errors.
#include "runtime/hal/cpu/Offload.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <vector>

namespace stepc::rt {
namespace {

// Two stacked tensors: a param of 3 layers of 1024 floats (4 KiB layers: direct I/O where the
// file system has it) and a state of 2 layers of 5 floats (buffered).
ProgramInfo twoBuffers() {
  ProgramInfo info;
  info.params.push_back({"cell.w", {3, 32, 32}});
  info.state.push_back({"m", "cell.w", {2, 5}});
  info.offload.push_back({false, 0, 3, 1024 * 4});
  info.offload.push_back({true, 0, 2, 5 * 4});
  return info;
}

float *pageAligned(std::vector<float> &keep, size_t n) {
  keep.assign(n + 1024, 0.0f);
  uintptr_t p = reinterpret_cast<uintptr_t>(keep.data());
  return reinterpret_cast<float *>((p + 4095) / 4096 * 4096);
}

TEST(Offload, FetchesWhatTheMappingHoldsAndStoresBackInOrder) {
  std::unique_ptr<FarStore> store;
  ASSERT_TRUE(FarStore::open(twoBuffers(), store).ok());
  float *w = store->hostTensor(false, 0);
  float *m = store->hostTensor(true, 0);
  ASSERT_NE(w, nullptr);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(store->hostTensor(false, 1), nullptr);  // not offloaded
  for (int i = 0; i < 3 * 1024; ++i) w[i] = static_cast<float>(i);
  for (int i = 0; i < 10; ++i) m[i] = -static_cast<float>(i);
  ASSERT_TRUE(store->begin().ok());
  std::vector<float> keep;
  float *slot = pageAligned(keep, 2048);
  store->fetch(0, 2, slot, 1024);
  store->wait(0, 2);
  EXPECT_EQ(slot[0], 2048.0f);
  EXPECT_EQ(slot[1023], 3071.0f);
  // A write-back, then a fetch into the same slot: the fetch sees what was written.
  for (int i = 0; i < 1024; ++i) slot[i] = 7.0f;
  store->store(0, 1, slot, 1024);
  store->fetch(0, 1, slot + 1024, 1024);
  store->wait(0, 1);
  EXPECT_EQ(slot[1024 + 5], 7.0f);
  float small[5];
  store->fetch(1, 1, small, 5);
  store->wait(1, 1);
  EXPECT_EQ(small[4], -9.0f);
  small[0] = 42.0f;
  store->store(1, 0, small, 5);
  ASSERT_TRUE(store->end().ok());
  // After the step the mapping shows the write-backs.
  EXPECT_EQ(w[1024], 7.0f);
  EXPECT_EQ(w[0], 0.0f);
  EXPECT_EQ(m[0], 42.0f);
  OffloadStats s = store->stats();
  EXPECT_EQ(s.transfers, 5);
  EXPECT_EQ(s.fetchedBytes, 2 * 4096 + 20);
  EXPECT_EQ(s.storedBytes, 4096 + 20);
}

TEST(Offload, ABadTransferFailsTheStepWithTheReason) {
  std::unique_ptr<FarStore> store;
  ASSERT_TRUE(FarStore::open(twoBuffers(), store).ok());
  ASSERT_TRUE(store->begin().ok());
  float small[5];
  store->fetch(1, 2, small, 5);  // layer 2 of 2
  Status s = store->end();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("asks for layer 2 of 2"), std::string::npos) << s.message();
  // The next step starts clean.
  ASSERT_TRUE(store->begin().ok());
  store->fetch(7, 0, small, 5);
  s = store->end();
  EXPECT_NE(s.message().find("names buffer 7"), std::string::npos) << s.message();
}

// The emulator's check (FarStore::access): a command touching the slot of a prefetch not yet
// waited for is a race, reading or writing; beside a write-back only writing is; a wait retires
// its transfer and every one issued before it (they complete in issue order), a flush all.
TEST(Offload, TheAccessCheckNamesTheCommandAndTheTransferThatRaced) {
  std::unique_ptr<FarStore> store;
  ASSERT_TRUE(FarStore::open(twoBuffers(), store).ok());
  std::vector<float> keep;
  float *slot = pageAligned(keep, 2048);
  auto at = [&](int i) { return reinterpret_cast<uintptr_t>(slot + i); };
  ASSERT_TRUE(store->begin().ok());
  store->fetch(0, 1, slot, 1024);            // transfer 1: slot[0, 1024)
  store->fetch(0, 2, slot + 1024, 1024);     // transfer 2: slot[1024, 2048)
  store->access(at(2048), at(2100), true, "kernel @beside");  // elsewhere: fine
  store->wait(0, 1);
  store->access(at(0), at(1024), true, "kernel @first");      // waited for: fine
  ASSERT_TRUE(store->end().ok());
  ASSERT_TRUE(store->begin().ok());
  store->fetch(0, 0, slot, 1024);            // this call's transfer 1
  store->access(at(1000), at(1030), false, "kernel @early");
  Status s = store->end();
  EXPECT_EQ(s.message(),
            "offload race: kernel @early reads bytes 4000..4096 of its slot while the prefetch of "
            "param:cell.w layer 0 (transfer 1 of this call) is in flight: the plan has not waited "
            "for it before this command");
  ASSERT_TRUE(store->begin().ok());
  store->store(0, 0, slot, 1024);            // a write-back reads its slot
  store->access(at(0), at(1024), false, "kernel @reader");  // reading beside it: fine
  store->fetch(1, 1, slot + 1536, 5);        // a later transfer
  store->wait(1, 1);                         // retires the write-back too
  store->access(at(0), at(1024), true, "kernel @writer");   // so writing is fine now
  store->store(1, 0, slot + 1536, 5);
  store->access(at(1530), at(1540), true, "call of @stepc_matmul_f32");
  s = store->end();
  EXPECT_EQ(s.message(),
            "offload race: call of @stepc_matmul_f32 writes bytes 0..16 of its slot while the "
            "write-back of state:m/cell.w layer 0 (transfer 3 of this call) is in flight: the "
            "plan has not flushed it before this command");
  ASSERT_TRUE(store->begin().ok());
  store->store(0, 2, slot, 1024);
  store->flush();
  store->access(at(0), at(1024), true, "kernel @after_flush");
  EXPECT_TRUE(store->end().ok());
}

TEST(Offload, AHostTierThatCannotBeMadeIsAnError) {
  setenv("STEPC_OFFLOAD_DIR", "/nonexistent/stepc", 1);
  std::unique_ptr<FarStore> store;
  Status s = FarStore::open(twoBuffers(), store);
  unsetenv("STEPC_OFFLOAD_DIR");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot create the offload file in /nonexistent/stepc"),
            std::string::npos);
}

TEST(Offload, ABadDescriptionIsRefused) {
  ProgramInfo info = twoBuffers();
  info.offload[1].index = 3;  // no state 3
  std::unique_ptr<FarStore> store;
  EXPECT_FALSE(FarStore::open(info, store).ok());
}

}  // namespace
}  // namespace stepc::rt
