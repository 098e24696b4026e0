# Compiled models linked with the runtime built under AddressSanitizer and
# UndefinedBehaviorSanitizer (build/asan: tools/test.sh builds it with --config=asan): training,
# checkpoints, resume, validation and eval of real executables, with every runtime memory error,
# leak and undefined behaviour fatal. The compiler is the normal build; the generated step code
# is not instrumented (the runtime, which reads every file and owns every buffer, is).
import os

import lit.formats

config.name = "stepc-sanitized"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".test"]
config.test_source_root = os.path.dirname(__file__)
repo = os.path.abspath(os.path.join(config.test_source_root, "..", "..", ".."))
config.test_exec_root = os.path.join(repo, "build", "lit-sanitized")
config.excludes = ["lit.cfg.py"]

config.substitutions.append(("%stepc", os.path.join(repo, "bazel-bin", "compiler", "Driver", "stepc")))
config.substitutions.append(("%models", os.path.join(repo, "models")))
archive = os.path.join(repo, "build", "asan", "bazel-bin", "runtime", "libstepc_rt.a")
config.substitutions.append(("%asan_runtime", archive))
# `stepc compile` links with $CXX: the sanitizers' runtimes linked in, and the instrumented
# runtime archive instead of the normal one.
config.environment["STEPC_RUNTIME_ARCHIVE"] = archive
config.environment["CXX"] = os.path.join(repo, "tools", "asan_cxx.sh")
config.environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"
config.environment["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1"
# GEMMs on the linked OpenBLAS, not the dlopen'ed oneDNN: its OpenMP runtime's dynamic TLS
# leaves an entry LeakSanitizer's exit-time scan reads as garbage ("DTLS 5 at 0xea-0x24000011ec"
# with LSAN_OPTIONS=verbosity=1), and its tracer then crashes ("Tracer caught signal 11"),
# depending on the binary's layout. What these suites check is stepc's own runtime code.
config.environment["STEPC_GEMM"] = "openblas"
config.substitutions.append(("%python", "/usr/bin/python3"))
llvm_bin = os.environ.get("LLVM_BIN_DIR", "/usr/lib/llvm-19/bin")
config.environment["PATH"] = os.pathsep.join([llvm_bin, config.environment.get("PATH", "/usr/bin:/bin")])
