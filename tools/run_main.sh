#!/usr/bin/env bash
# The main job: build stepc and compile the default model (byte_lm). Until the CPU backend
# lands, "compile" means: verify the model and print it at the `model` stage.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
tools/setup.sh
tools/bazel.sh build //compiler/Driver:stepc //compiler/Driver:stepc-opt
model="${1:-models/byte_lm.mlir}"
./bazel-bin/compiler/Driver/stepc check "$model"
./bazel-bin/compiler/Driver/stepc compile "$model" --emit=model
