# lit configuration for stepc's FileCheck tests (tests/lit) and model checks.
# The tools come from the Bazel build: set STEPC_BIN_DIR to override where they are looked up.
import os

import lit.formats

config.name = "stepc"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
# Test outputs (%t) go outside the source tree, under bazel-out's neighbour build/lit.
config.test_exec_root = os.path.join(os.path.dirname(os.path.dirname(config.test_source_root)),
                                     "build", "lit")
config.excludes = ["Inputs", "lit.cfg.py"]

repo = os.path.abspath(os.path.join(config.test_source_root, "..", ".."))
bin_dir = os.environ.get("STEPC_BIN_DIR", os.path.join(repo, "bazel-bin", "compiler", "Driver"))
llvm_bin = os.environ.get("LLVM_BIN_DIR", "/usr/lib/llvm-19/bin")

config.substitutions.append(("%stepc-opt", os.path.join(bin_dir, "stepc-opt")))
config.substitutions.append(("%stepc", os.path.join(bin_dir, "stepc")))
config.substitutions.append(("%models", os.path.join(repo, "models")))

# Running lowered code on the CPU (tests/lit/compiler/Conversion/StepToLinalg/*_run_*.mlir and
# the emulation tests): stepc-opt's registered stepc-runner-llvm pipeline (Pipelines.cpp) takes
# linalg on tensors to the LLVM dialect, mlir-cpu-runner JIT-runs @main with the runner libraries
# (printMemrefF32). The runner comes with Debian's mlir-N-tools / libmlir-N-dev.
llvm_lib = os.path.join(os.path.dirname(llvm_bin), "lib")
runner_libs = ",".join(os.path.join(llvm_lib, lib) for lib in
                       ["libmlir_runner_utils.so", "libmlir_c_runner_utils.so"])
config.substitutions.append(("%linalg-to-llvm",
                             "%s --pass-pipeline='builtin.module(stepc-runner-llvm)'"
                             % os.path.join(bin_dir, "stepc-opt")))
config.substitutions.append(("%run-cpu",
                             "%s -e main -entry-point-result=void -shared-libs=%s"
                             % (os.path.join(llvm_bin, "mlir-cpu-runner"), runner_libs)))
config.environment["PATH"] = os.pathsep.join([llvm_bin, config.environment.get("PATH", "/usr/bin:/bin")])
config.substitutions.append(("%python", "/usr/bin/python3"))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
# The lit tree's root, for tests that read another test's cases (it mirrors the source tree).
config.substitutions.append(("%tests", config.test_source_root))
# The zoo by name (tiny/gpt2, byte_lm_residual_small, ...): `$(%zoo NAME)` is the model file and its
# --config; `%zoo --all` lists the names.
config.substitutions.append(("%zoo", "sh " + os.path.join(config.test_source_root, "Inputs", "zoo.sh")))

# The CUDA toolkit's ptxas assembles the PTX stepc emits (tests/lit/compiler/Codegen/LLVMGPU/). It comes with the
# machine image (/usr/local/cuda, CUDA 13), not with a GPU: these tests need no device. Set
# PTXAS to use another; without one they are reported UNSUPPORTED (lit's summary names them).
ptxas = os.environ.get("PTXAS", "/usr/local/cuda/bin/ptxas")
if os.path.exists(ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

# The runtime's own GEMM kernels (runtime/hal/cpu/PackedGemm.h) need AVX-512F.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        if " avx512f" in cpuinfo.read():
            config.available_features.add("avx512")
except OSError:
    pass

# A usable NVIDIA GPU (the driver loads, cuInit succeeds, a device is there): the GPU tests in
# tests/lit/gpu/ need one and are UNSUPPORTED elsewhere (CI has none). tests/gpu/run.sh is the
# same check outside lit.
def _cuda_gpu():
    try:
        import ctypes
        cuda = ctypes.CDLL("libcuda.so.1")
        count = ctypes.c_int(0)
        return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0
    except OSError:
        return False

if _cuda_gpu():
    config.available_features.add("cuda-gpu")
config.substitutions.append(("%repo", repo))

# Data-parallel runs (tests/lit/executable/data_parallel.test): Open MPI's mpirun, which the
# test command installs (tools/setup.sh --tests). CI runs as root on 2 cores: allow both.
config.substitutions.append(("%mpirun", "mpirun --oversubscribe --allow-run-as-root"))
for name in ["OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"]:
    config.environment[name] = "1"
if "HOME" in os.environ:
    config.environment["HOME"] = os.environ["HOME"]
