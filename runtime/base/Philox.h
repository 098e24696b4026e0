//===- Philox.h - the counter-based RNG (Philox4x32-10) ---------*- C++ -*-===//
//
// Philox4x32-10 (Salmon et al., SC'11): a pure function of (key, counter), so every element of
// an initialiser, a data window or a dropout mask is drawn independently of thread and device
// order, and CPU and GPU draw the same numbers. Plain C++, shared by compiler and runtime.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_PHILOX_H
#define STEPC_RUNTIME_PHILOX_H

#include <array>
#include <cstdint>

namespace stepc::rt {

/// Four 32-bit random words for (key, counter).
std::array<uint32_t, 4> philox4x32(uint64_t key, uint64_t counterHi, uint64_t counterLo);

/// A uniform double in [0, 1) for (key, stream, index): one draw of 53 random bits.
double uniform01(uint64_t key, uint64_t stream, uint64_t index);

/// Who draws: each consumer of per-step randomness has its own streams, so for the same key
/// and step a dropout mask never repeats the numbers that chose the batch's windows or labels.
enum class RngPurpose : uint64_t {
  kTokenWindows = 1,   // where each row's token window starts (Data.h, DataFile.h)
  kClassification = 2, // the built-in classification set's labels and noise
  kDropout = 3,        // dropout masks (the interpreter and the compiled step alike)
  kHeldOutClassification = 4,  // the classification set's validation points
  kSampling = 5,               // `sample`'s token draws (stream: the token index)
  kJitter = 6,                 // step.jitter's factors (the interpreter and the compiled step)
};

/// The stream of `purpose` for `step` (steps below 2^56): the purpose in the top byte.
inline uint64_t rngStream(RngPurpose purpose, uint64_t step) {
  return (static_cast<uint64_t>(purpose) << 56) ^ step;
}

/// step.jitter's factor for (key, stream, index): 1 - eps + 2 eps u, with u the top 24 bits of
/// Philox word 0 scaled by 2^-24. u is exact in f32, so the compiled step (f32 arithmetic) and
/// this (double) differ only by the f32 rounding of the product.
double jitterFactor(uint64_t key, uint64_t stream, uint64_t index, double eps);

/// A standard normal double for (key, stream, index) (Box–Muller on two uniforms). It uses the
/// same Philox block as uniform01 with the same arguments: draw both at distinct indices.
double standardNormal(uint64_t key, uint64_t stream, uint64_t index);

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_PHILOX_H
