#!/usr/bin/env bash
# Compiles the GPU tests' executables on a machine without a GPU (this one), into build/gpu/:
# mlp, byte_lm_residual and gpt2_124m at --config=tiny, models/byte_lm_residual and models/gpt2_124m with --target=cuda (a
# CUDA step next to the CPU step), and tiny/gpt2, tiny/byte_lm_residual, gpt2_124m and byte_lm_residual again
# with --precision=bf16, tiny/byte_lm data-parallel (NCCL) and widened tiny/byte_lm in and out of
# device memory (planned offload), tiny/gpt2_moe and tiny/byte_lm_moe, stripped and xz-compressed so that all of them travel to a GPU machine
# in a few MiB. The executables need nothing there but libcuda (the driver) and
# cuBLASLt. Then, on the GPU machine: tests/gpu/run.sh (see there).
#
#   tests/gpu/prepare.sh            # after tools/bazel.sh build //...
set -euo pipefail
cd "$(dirname "$0")/../.."
stepc=bazel-bin/compiler/Driver/stepc
[[ -x $stepc ]] || { echo "prepare.sh: build first: tools/bazel.sh build //..." >&2; exit 1; }
out=build/gpu
rm -rf "$out" && mkdir -p "$out"
# NAME:MODEL[:PRECISION[:FLAGS]]; the _bf16 ones are --precision=bf16 (bf16 GEMMs on the tensor
# cores); tiny_byte_lm_dp sums its ranks with NCCL under mpirun, tiny_byte_lm_zero shards its
# optimizer over 2 (NCCL's reduce-scatter and all-gather); tiny_byte_lm_offload streams its
# stacked layers' state and parameters from pinned host memory (--device-memory), against
# tiny_byte_lm_wide, the same model in device memory. tiny_gpt2_moe and tiny_byte_lm_moe route
# with the GPU's parallel kernels (token and expert choice) in their CUDA step and with the
# CPU's loops in their CPU step.
for spec in tiny_mlp:tiny/mlp tiny_byte_lm_residual:tiny/byte_lm_residual tiny_gpt2:tiny/gpt2 byte_lm_residual:byte_lm_residual \
            gpt2_124m:gpt2_124m tiny_gpt2_bf16:tiny/gpt2:bf16 gpt2_124m_bf16:gpt2_124m:bf16 \
            tiny_byte_lm_residual_bf16:tiny/byte_lm_residual:bf16 byte_lm_residual_bf16:byte_lm_residual:bf16 \
            "tiny_byte_lm_dp:tiny/byte_lm::--data-parallel --batch=8 --micro-batches=4 --sam-rho=0" \
            "tiny_byte_lm_zero:tiny/byte_lm::--data-parallel --batch=8 --micro-batches=4 --sam-rho=0 --shard-optimizer=2" \
            "tiny_byte_lm_wide:tiny/byte_lm::--dim=F=64,I=32,depth=4" \
            "tiny_byte_lm_offload:tiny/byte_lm::--dim=F=64,I=32,depth=4 --device-memory=3.25M" \
            tiny_gpt2_moe:tiny/gpt2_moe tiny_byte_lm_moe:tiny/byte_lm_moe; do
  IFS=: read -r n m precision extra <<< "$spec"
  # shellcheck disable=SC2046  # the zoo prints the model file and its --config
  "$stepc" compile $(sh tests/lit/Inputs/zoo.sh "$m") --target=cuda --gpu-arch=sm_90 --precision="${precision:-f32}" \
    ${extra:-} -o "$out/$n" 2> "$out/$n.compile.log" || { cat "$out/$n.compile.log" >&2; exit 1; }
  strip "$out/$n"
  xz -9 -T2 "$out/$n"
done
cp tests/lit/Inputs/compare_runs.py "$out/"
du -sh "$out"
echo "prepare.sh: wrote $out; on a GPU machine run tests/gpu/run.sh"
