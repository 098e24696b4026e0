#!/usr/bin/env bash
# Runs every test: builds everything with Bazel (and the runtime with its unit tests once more
# under AddressSanitizer and UndefinedBehaviorSanitizer, --config=asan), then runs the lit
# suites (FileCheck tests of the compiler in tests/lit, every gtest case in tests/unit, and the
# sanitized runtime's units and executables in tests/sanitized) under one lit summary.
# Ends with the line `N passed, N failed, N skipped` (skipped: lit's UNSUPPORTED, e.g. the GPU
# tests on a machine without a GPU, each named in lit's summary above it).
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
tools/setup.sh --tests || exit 1
if ! tools/bazel.sh build //...; then
  echo "0 passed, 1 failed, 0 skipped"
  exit 1
fi
mkdir -p build/asan
if ! tools/bazel.sh build --config=asan //runtime:stepc_rt //tests/unit/runtime:all; then
  echo "the sanitized build (--config=asan) failed"
  echo "0 passed, 1 failed, 0 skipped"
  exit 1
fi
llvm_version="$(sed -n 's/^LLVM_VERSION = "\([0-9]*\)"/\1/p' third_party/versions.bzl)"
lit="/usr/lib/llvm-${llvm_version}/build/utils/lit/lit.py"
out="$(mktemp)"
python3 "$lit" -sv tests/lit tests/unit tests/sanitized/unit tests/sanitized/executable 2>&1 | tee "$out"
status=${PIPESTATUS[0]}
passed=$(sed -n 's/^ *Passed *: *\([0-9]*\).*/\1/p' "$out" | tail -1)
skipped=$(awk '/^ *(Unsupported|Skipped|Excluded) *:/ {split($0, a, ":"); n += a[2]} END {print n + 0}' "$out")
failed=$(awk '/^ *(Failed|Unresolved|Timed Out|Unexpectedly Passed) *:/ {split($0, a, ":"); n += a[2]} END {print n + 0}' "$out")
rm -f "$out"
passed=${passed:-0}
failed=${failed:-0}
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "${passed} passed, ${failed} failed, ${skipped} skipped"
[ "$status" -eq 0 ]
