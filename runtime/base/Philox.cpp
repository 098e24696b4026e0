//===- Philox.cpp - Philox4x32-10 and the draws built on it --------------===//
//
// The block function follows Random123's philox4x32 exactly (same multipliers, Weyl key
// increments and round structure), so its published known-answer vectors check it and a CUDA
// kernel written from the same paper draws the same numbers.
//
//===----------------------------------------------------------------------===//
#include "runtime/base/Philox.h"

#include <cmath>

namespace stepc::rt {
namespace {

constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // round multipliers
constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // key schedule (golden ratio, sqrt 3)
constexpr int kRounds = 10;

struct Block {
  uint32_t c[4];
};

Block philoxRound(const Block &in, uint32_t k0, uint32_t k1) {
  uint64_t p0 = uint64_t{kM0} * in.c[0];
  uint64_t p1 = uint64_t{kM1} * in.c[2];
  auto hi = [](uint64_t p) { return static_cast<uint32_t>(p >> 32); };
  auto lo = [](uint64_t p) { return static_cast<uint32_t>(p); };
  return Block{{hi(p1) ^ in.c[1] ^ k0, lo(p1), hi(p0) ^ in.c[3] ^ k1, lo(p0)}};
}

// 53 random bits from two words, scaled into [0, 1): every double in the grid k * 2^-53.
double toUnit(uint32_t high, uint32_t low) {
  uint64_t bits = ((uint64_t{high} << 32) | low) >> 11;
  return static_cast<double>(bits) * 0x1.0p-53;
}

}  // namespace

std::array<uint32_t, 4> philox4x32(uint64_t key, uint64_t counterHi, uint64_t counterLo) {
  // Word order as in Random123: counter word 0 is the least significant.
  Block block{{static_cast<uint32_t>(counterLo), static_cast<uint32_t>(counterLo >> 32),
               static_cast<uint32_t>(counterHi), static_cast<uint32_t>(counterHi >> 32)}};
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < kRounds; ++round) {
    if (round > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    block = philoxRound(block, k0, k1);
  }
  return {block.c[0], block.c[1], block.c[2], block.c[3]};
}

double uniform01(uint64_t key, uint64_t stream, uint64_t index) {
  std::array<uint32_t, 4> w = philox4x32(key, stream, index);
  return toUnit(w[0], w[1]);
}

double jitterFactor(uint64_t key, uint64_t stream, uint64_t index, double eps) {
  double u = std::ldexp(static_cast<double>(philox4x32(key, stream, index)[0] >> 8), -24);
  return 1.0 - eps + 2.0 * eps * u;
}

double standardNormal(uint64_t key, uint64_t stream, uint64_t index) {
  // Box-Muller on the two halves of one block. 1 - u1 lies in (0, 1], so the log is finite.
  std::array<uint32_t, 4> w = philox4x32(key, stream, index);
  double u1 = toUnit(w[0], w[1]), u2 = toUnit(w[2], w[3]);
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  return std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(kTwoPi * u2);
}

}  // namespace stepc::rt
