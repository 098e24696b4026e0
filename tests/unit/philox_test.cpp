// Philox4x32-10 against Random123's known-answer vectors, and the distributions built on it.
#include "runtime/base/Philox.h"

#include <gtest/gtest.h>

#include <cmath>

namespace stepc::rt {
namespace {

using Words = std::array<uint32_t, 4>;

// Random123 kat_vectors: philox4x32 10 rounds, counter 0 and key 0.
TEST(Philox, KnownAnswerZeroCounterZeroKey) {
  EXPECT_EQ(philox4x32(0, 0, 0), (Words{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
}

// Random123 kat_vectors: every counter and key word 0xffffffff.
TEST(Philox, KnownAnswerAllOnes) {
  EXPECT_EQ(philox4x32(~0ull, ~0ull, ~0ull),
            (Words{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
}

// Random123 kat_vectors: the pi-digits case, counter {243f6a88, 85a308d3, 13198a2e, 03707344},
// key {a4093822, 299f31d0}; checks the word order of counters and key.
TEST(Philox, KnownAnswerPiDigits) {
  uint64_t counterLo = (uint64_t{0x85a308d3u} << 32) | 0x243f6a88u;
  uint64_t counterHi = (uint64_t{0x03707344u} << 32) | 0x13198a2eu;
  uint64_t key = (uint64_t{0x299f31d0u} << 32) | 0xa4093822u;
  EXPECT_EQ(philox4x32(key, counterHi, counterLo),
            (Words{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(Philox, IsAPureFunctionOfItsInputs) {
  EXPECT_EQ(philox4x32(7, 3, 11), philox4x32(7, 3, 11));
  EXPECT_NE(philox4x32(7, 3, 11), philox4x32(7, 3, 12));
  EXPECT_NE(philox4x32(7, 3, 11), philox4x32(7, 4, 11));
  EXPECT_NE(philox4x32(7, 3, 11), philox4x32(8, 3, 11));
}

TEST(Uniform01, StaysInTheHalfOpenUnitIntervalWithMeanOneHalf) {
  constexpr int kDraws = 100000;
  double sum = 0.0, lowest = 1.0, highest = 0.0;
  for (int i = 0; i < kDraws; ++i) {
    double u = uniform01(42, 1, i);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    lowest = std::min(lowest, u);
    highest = std::max(highest, u);
  }
  EXPECT_NEAR(sum / kDraws, 0.5, 0.005);  // std of the mean: 0.29 / sqrt(1e5) ~ 0.001
  EXPECT_LT(lowest, 1e-3);
  EXPECT_GT(highest, 1.0 - 1e-3);
}

TEST(StandardNormal, HasMeanZeroAndVarianceOne) {
  constexpr int kDraws = 100000;
  double sum = 0.0, sumSq = 0.0;
  int beyondTwoSigma = 0;
  for (int i = 0; i < kDraws; ++i) {
    double z = standardNormal(5, 9, i);
    ASSERT_TRUE(std::isfinite(z));
    sum += z;
    sumSq += z * z;
    beyondTwoSigma += std::abs(z) > 2.0;
  }
  double mean = sum / kDraws, var = sumSq / kDraws - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.015);
  EXPECT_NEAR(var, 1.0, 0.02);
  // P(|z| > 2) = 4.55% for a Gaussian (a uniform of the same variance gives 0%).
  EXPECT_NEAR(static_cast<double>(beyondTwoSigma) / kDraws, 0.0455, 0.004);
}

}  // namespace
// Each consumer of per-step randomness has its own streams: for the same key, step and index,
// token windows, the classification set and dropout masks draw different numbers (they used to
// share (key, step), so a dropout seed equal to the run's seed repeated the batch's draws).
TEST(Philox, PurposesNeverShareAStream) {
  for (uint64_t step : {0ull, 1ull, 12345ull}) {
    uint64_t w = rngStream(RngPurpose::kTokenWindows, step);
    uint64_t c = rngStream(RngPurpose::kClassification, step);
    uint64_t d = rngStream(RngPurpose::kDropout, step);
    EXPECT_NE(w, c);
    EXPECT_NE(w, d);
    EXPECT_NE(c, d);
    EXPECT_NE(w, step);  // nor the plain step counter other draws are keyed by
    for (uint64_t i = 0; i < 8; ++i) {
      EXPECT_NE(uniform01(3, w, i), uniform01(3, d, i));
      EXPECT_NE(uniform01(3, c, i), uniform01(3, d, i));
    }
  }
  // The step stays readable in the low bits: consecutive steps are consecutive streams.
  EXPECT_EQ(rngStream(RngPurpose::kDropout, 5) - rngStream(RngPurpose::kDropout, 4), 1u);
}

}  // namespace stepc::rt
