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
};

/// Every architecture stepc accepts, oldest first.
llvm::ArrayRef<GpuTarget> allGpuTargets();

/// The table's entry for `arch`, or null with `error` saying what was expected.
const GpuTarget *lookupGpuTarget(llvm::StringRef arch, std::string &error);

/// Blocks a grid-stride kernel is given: 8 per SM, so each SM has several resident blocks and
/// each thread still takes several elements.
inline int64_t maxGridBlocks(const GpuTarget &target) { return 8 * target.sms; }

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_LLVMGPU_GPUTARGETS_H
