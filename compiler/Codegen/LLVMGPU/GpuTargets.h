//===- GpuTargets.h - what each --gpu-arch is ------------------*- C++ -*-===//
//
// One table of NVIDIA architectures stepc generates code for, with the properties the CUDA
// mapping and the reports use. `--gpu-arch` is validated against it in one place
// (lookupGpuTarget); the kernels' grid sizes follow its SM count, and the GPU tests' MFU is taken
// against its peaks. The figures are the vendor's data-sheet numbers for the part named, dense
// (no sparsity).
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_LLVMGPU_GPUTARGETS_H
#define STEPC_COMPILER_CODEGEN_LLVMGPU_GPUTARGETS_H

#include <cstdint>
#include <string>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace stepc::codegen {

struct GpuTarget {
  const char *arch;           // --gpu-arch, as ptxas takes it: "sm_90"
  const char *part;           // the part the figures are for: "H100 SXM"
  int64_t sms;                // streaming multiprocessors
  int64_t sharedBytesPerSm;   // shared memory a block can be given per SM
  int64_t registersPerSm;     // 32-bit registers per SM
  double fp32Flops;           // peak FP32 FLOP/s (CUDA cores)
  double bf16Flops;           // peak dense BF16 FLOP/s (tensor cores, f32 accumulate)
  double hbmBytesPerSecond;   // peak device-memory bandwidth
  double hostLinkBytesPerSecond;  // host <-> device copies of pinned memory, one direction
};

/// Every architecture stepc accepts, oldest first.
llvm::ArrayRef<GpuTarget> allGpuTargets();

/// The table's entry for `arch`, or null with `error` saying what was expected.
const GpuTarget *lookupGpuTarget(llvm::StringRef arch, std::string &error);

/// Threads per block of the CUDA kernels (at most; KernelsToGpu.cpp).
constexpr int64_t kGpuBlockThreads = 256;
/// Threads an SM keeps resident (sm_80 to sm_100 alike).
constexpr int64_t kGpuThreadsPerSm = 2048;

/// One wave: the blocks of kGpuBlockThreads all SMs hold at once (8 per SM). A grid-stride
/// kernel is given one wave, so each thread still takes several elements.
inline int64_t maxGridBlocks(const GpuTarget &target) {
  return target.sms * (kGpuThreadsPerSm / kGpuBlockThreads);
}

/// Tiles (= blocks) a large tiled kernel is split into for this GPU: two waves, so the last
/// wave's stragglers and the SMs' uneven progress cost at most half a wave (the CPU's tiling,
/// 64 tiles for two cores, would leave most of a 132-SM part idle). A tile keeps at least a
/// block's worth of iterations (kGpuBlockThreads).
inline int64_t gpuTargetTiles(const GpuTarget &target) { return 2 * maxGridBlocks(target); }

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_LLVMGPU_GPUTARGETS_H
