//===- sampling_test.cpp - how `sample` draws a token from logits ---------===//
#include "runtime/harness/Sampling.h"

#include <gtest/gtest.h>

#include <cmath>

namespace stepc::rt {
namespace {

// Logits of probabilities 1/2, 1/4, 1/4.
const float kLogits[] = {std::log(0.5f), std::log(0.25f), std::log(0.25f)};

TEST(Sampling, DrawsByTheCumulativeProbability) {
  SampleOptions o;  // temperature 1, no cut
  EXPECT_EQ(drawToken(kLogits, 3, o, 0.0), 0);
  EXPECT_EQ(drawToken(kLogits, 3, o, 0.49), 0);
  EXPECT_EQ(drawToken(kLogits, 3, o, 0.51), 1);
  EXPECT_EQ(drawToken(kLogits, 3, o, 0.74), 1);
  EXPECT_EQ(drawToken(kLogits, 3, o, 0.76), 2);
  EXPECT_EQ(drawToken(kLogits, 3, o, 0.999999), 2);
}

TEST(Sampling, GreedyTopKAndTopPCut) {
  SampleOptions o;
  o.temperature = 0;
  for (double u : {0.0, 0.5, 0.99}) EXPECT_EQ(drawToken(kLogits, 3, o, u), 0);
  o.temperature = 1;
  o.topK = 1;
  for (double u : {0.0, 0.5, 0.99}) EXPECT_EQ(drawToken(kLogits, 3, o, u), 0);
  // Top-2: 2/3 and 1/3 after renormalising (ties broken by id: token 1 before token 2).
  o.topK = 2;
  EXPECT_EQ(drawToken(kLogits, 3, o, 0.6), 0);
  EXPECT_EQ(drawToken(kLogits, 3, o, 0.7), 1);
  EXPECT_EQ(drawToken(kLogits, 3, o, 0.99), 1);
  // Top-p 0.5: the first token alone reaches it.
  o.topK = 0;
  o.topP = 0.5;
  for (double u : {0.0, 0.5, 0.99}) EXPECT_EQ(drawToken(kLogits, 3, o, u), 0);
  // Top-p 0.7: the first two (0.75), renormalised.
  o.topP = 0.7;
  EXPECT_EQ(drawToken(kLogits, 3, o, 0.7), 1);
  EXPECT_EQ(drawToken(kLogits, 3, o, 0.99), 1);
}

// Two near-equal logits that swap order under a last-bit difference (as a GEMM over one row
// and one over a whole window may round) draw the same token for every u away from a boundary.
TEST(Sampling, ARoundingSwapMovesNoDraw) {
  const float a[] = {0.0f, 1.0f, std::nextafter(1.0f, 2.0f), 0.5f};
  const float b[] = {0.0f, std::nextafter(1.0f, 2.0f), 1.0f, 0.5f};
  SampleOptions o;
  o.temperature = 2;
  int changed = 0;
  for (int i = 0; i < 1000; ++i) {
    double u = (i + 0.5) / 1000;
    changed += drawToken(a, 4, o, u) != drawToken(b, 4, o, u);
  }
  EXPECT_EQ(changed, 0);
  // Top-k keeps the two either way; the draw among the kept is in id order too.
  o.topK = 2;
  for (int i = 0; i < 1000; ++i) {
    double u = (i + 0.5) / 1000;
    changed += drawToken(a, 4, o, u) != drawToken(b, 4, o, u);
  }
  EXPECT_EQ(changed, 0);
}

TEST(Sampling, TemperatureSharpens) {
  SampleOptions o;
  // T = 0.5 squares the probabilities: 1/4, 1/16, 1/16 -> 2/3, 1/6, 1/6.
  o.temperature = 0.5;
  EXPECT_EQ(drawToken(kLogits, 3, o, 0.65), 0);
  EXPECT_EQ(drawToken(kLogits, 3, o, 0.68), 1);
  EXPECT_EQ(drawToken(kLogits, 3, o, 0.84), 2);
}

}  // namespace
}  // namespace stepc::rt
