//===- Bf16.cpp - f32 -> bf16 rounding for CPUs without a bf16 instruction ===//
//
// LLVM lowers a compiled step's f32 -> bf16 truncation (--precision=bf16) to the bf16
// conversion instruction where the CPU has one (AVX512_BF16, e.g. Zen 4 and 5) and to a call of
// the compiler runtime's __truncsfbf2 elsewhere; Debian 12's libgcc (GCC 12) has none, so
// executables for AVX2-only CPUs did not link. This is that function: round to nearest even,
// NaN kept a (quiet) NaN. The result travels in xmm0 as a 16-bit float (the x86-64 psABI's
// __bf16), which GCC 12's C++ spells _Float16. Weak: a libgcc that has it may provide it.
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <cstring>

extern "C" __attribute__((weak)) _Float16 __truncsfbf2(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  uint16_t half;
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    half = static_cast<uint16_t>((bits >> 16) | 0x40u);  // NaN: keep it one, quiet
  else
    half = static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
  _Float16 out;
  std::memcpy(&out, &half, sizeof out);
  return out;
}
