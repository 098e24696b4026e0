#!/usr/bin/env bash
# Compiles the GPU tests' executables on a machine without a GPU (this one), into build/gpu/:
# models/tiny/{mlp,byte_lm,gpt2}, models/byte_lm and models/gpt2_124m with --target=cuda (a
# CUDA step next to the CPU step), stripped and xz-compressed so that all of them travel to a
# GPU machine in a few MiB. The executables need nothing there but libcuda (the driver) and
# cuBLASLt. Then, on the GPU machine: tests/gpu/run.sh (see there).
#
#   tests/gpu/prepare.sh            # after tools/bazel.sh build //...
set -euo pipefail
cd "$(dirname "$0")/../.."
stepc=bazel-bin/compiler/Driver/stepc
[[ -x $stepc ]] || { echo "prepare.sh: build first: tools/bazel.sh build //..." >&2; exit 1; }
out=build/gpu
rm -rf "$out" && mkdir -p "$out"
for m in tiny/mlp tiny/byte_lm tiny/gpt2 byte_lm gpt2_124m; do
  n=$(echo "$m" | tr / _)
  "$stepc" compile "models/$m.mlir" --target=cuda --gpu-arch=sm_90 -o "$out/$n" 2> "$out/$n.compile.log" \
    || { cat "$out/$n.compile.log" >&2; exit 1; }
  strip "$out/$n"
  xz -9 -T2 "$out/$n"
done
cp tests/lit/Inputs/compare_runs.py "$out/"
du -sh "$out"
echo "prepare.sh: wrote $out; on a GPU machine run tests/gpu/run.sh"
