#!/usr/bin/env bash
# The main job: build stepc, compile the default model (byte_lm) and print it, build its
# one-function training step, and train the tiny configuration for 30 steps in the reference
# interpreter on the built-in corpus. (Native training arrives with the CPU backend.)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
tools/setup.sh
tools/bazel.sh build //compiler/Driver:stepc //compiler/Driver:stepc-opt
stepc=./bazel-bin/compiler/Driver/stepc
model="${1:-models/byte_lm.mlir}"
$stepc check "$model"
$stepc compile "$model" --emit=model
echo
echo "== the training step (--emit=train): $($stepc compile "$model" --emit=train | grep -c 'step\.') step ops in one function =="
echo
echo "== training models/tiny/byte_lm.mlir for 30 steps in the reference interpreter =="
$stepc run models/tiny/byte_lm.mlir --steps=30
