# The one place the toolchain versions are pinned. tools/setup.sh reads LLVM_VERSION from here too.
LLVM_VERSION = "19"
LLVM_ROOT = "/usr/lib/llvm-" + LLVM_VERSION
CUDA_ROOT = "/usr/local/cuda"
