# The runtime's gtest units again, built with --config=asan (.bazelrc: AddressSanitizer and
# UndefinedBehaviorSanitizer on runtime/ and tests/unit/runtime/) into build/asan/bazel-bin by
# tools/test.sh: a memory error or undefined behaviour fails a case even when it would not crash.
import os

import lit.formats

config.name = "stepc-sanitized-unit"
repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
config.test_source_root = os.path.join(repo, "build", "asan", "bazel-bin", "tests", "unit", "runtime")
config.test_exec_root = config.test_source_root
config.test_format = lit.formats.GoogleTest(".", "_test")
config.excludes = []
for root, dirs, _ in os.walk(config.test_source_root):
    config.excludes += [d for d in dirs if d.endswith(".runfiles") or d == "_objs"]
    dirs[:] = [d for d in dirs if not d.endswith(".runfiles") and d != "_objs"]
# Leaks are errors too; UBSan stops at the first report (the code is also built with
# -fno-sanitize-recover=all).
config.environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"
config.environment["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1"
# GEMMs on the linked OpenBLAS, not the dlopen'ed oneDNN: its OpenMP runtime's dynamic TLS
# leaves an entry LeakSanitizer's exit-time scan reads as garbage ("DTLS 5 at 0xea-0x24000011ec"
# with LSAN_OPTIONS=verbosity=1), and its tracer then crashes ("Tracer caught signal 11"),
# depending on the binary's layout. What these suites check is stepc's own runtime code.
config.environment["STEPC_GEMM"] = "openblas"
