//===- GpuTargets.cpp - what each --gpu-arch is ----------------------------===//
#include "compiler/Codegen/LLVMGPU/GpuTargets.h"

namespace stepc::codegen {

// Data-sheet figures (dense). sm_90's row is the H100 SXM; an H200 has the same SMs and peaks
// with 4.8 TB/s of HBM3e, which the GPU tests measure rather than assume. The host link is what
// pinned copies reach in one direction, about 80% of the PCIe link's rate: 25 GB/s on PCIe 4
// x16 (A100, A40, L40S), 50 GB/s on PCIe 5 x16 (H100, B200).
static const GpuTarget kGpuTargets[] = {
    {"sm_80", "A100 SXM", 108, 164 * 1024, 65536, 19.5e12, 312e12, 2.039e12, 25e9},
    {"sm_86", "A40", 84, 100 * 1024, 65536, 37.4e12, 149.7e12, 0.696e12, 25e9},
    {"sm_89", "L40S", 142, 100 * 1024, 65536, 91.6e12, 362e12, 0.864e12, 25e9},
    {"sm_90", "H100 SXM", 132, 228 * 1024, 65536, 66.9e12, 989e12, 3.35e12, 50e9},
    {"sm_100", "B200", 148, 228 * 1024, 65536, 80e12, 2250e12, 8e12, 50e9},
};

llvm::ArrayRef<GpuTarget> allGpuTargets() { return kGpuTargets; }

const GpuTarget *lookupGpuTarget(llvm::StringRef arch, std::string &error) {
  for (const GpuTarget &target : kGpuTargets)
    if (arch == target.arch) return &target;
  error = "--gpu-arch expects an NVIDIA architecture like sm_90, found '" + arch.str() +
          "' (known:";
  for (const GpuTarget &target : kGpuTargets) error += std::string(" ") + target.arch;
  error += ")";
  return nullptr;
}

}  // namespace stepc::codegen
