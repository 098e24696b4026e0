#!/usr/bin/env bash
# The GPU tests, on a machine with an NVIDIA GPU, from the executables tests/gpu/prepare.sh
# wrote into build/gpu/ (carry that folder there). Without a GPU it says so and skips (exit 0).
#
#   tests/gpu/run.sh
#
# 1. For every model at --config=tiny: 3 training steps with --device=cuda equal 3 with
#    --device=cpu (the same executable, the same data and initialisation): every metric and
#    every parameter within atol 1e-4 + rtol 1e-3. Both are float32; they differ in summation
#    order (cuBLASLt against OpenBLAS, block reductions in 256 strided partials against
#    in-order vectorised loops), which after 3 Adam steps stays well inside that.
#    tiny_gpt2_bf16 and tiny_byte_lm_residual_bf16 (--precision=bf16) the same way, each CUDA step
#    against its CPU step. tiny_gpt2_moe and tiny_byte_lm_moe too: their CUDA step routes with
#    the parallel kernels (ParallelRoutingPatterns.cpp), their CPU step with the CPU's loops,
#    which give the same integers for the same scores (--target=cuda-emulated checks the
#    kernels bit for bit: tests/lit/executable/moe.test); a failure here with a large
#    difference may be a router score that the two GEMM libraries round to the other side of a
#    tie, which changes a token's expert: look at the first step's metrics.
# 2. byte_lm_residual and gpt2_124m: the median step time of steps 2-6 on the GPU, tokens/s, and MFU
#    against the FP32 peak (H200: 67 TFLOP/s; FP32 GEMMs on cuBLASLt); byte_lm_residual_bf16 and
#    gpt2_124m_bf16 against the dense BF16 peak (989 TFLOP/s; bf16 GEMMs on the tensor cores),
#    and the measured step beside the compiler's roofline prediction (`info`: predicted CUDA
#    step, tests/lit/compiler/Codegen/LLVMGPU/predict_step_time.test).
# 3. Data-parallel through NCCL (tiny_byte_lm_dp): `mpirun -np N` on N GPUs (2 where there
#    are 2 or more, else 1, which still runs the NCCL path: unique id, communicator, a sum over
#    one rank) against one process, 100 steps: every loss within 1e-6 relative, and each rank
#    says it sums with NCCL. Skipped, saying so, where mpirun is missing (Debian: openmpi-bin).
# 4. Planned offload (--device-memory): tiny byte_lm widened, its stacked layers' state and
#    parameters streamed from pinned host memory, against the same model in device memory.
# 5. ZeRO-1 through NCCL (tiny_byte_lm_zero, --shard-optimizer=2: NCCL's reduce-scatter of
#    the gradients and all-gather of the updated parameters): 2 ranks on 2 GPUs against
#    tiny_byte_lm_dp in one process, 100 steps, every loss within 1e-6 relative. NCCL puts
#    one rank on each GPU, so it is skipped, saying so, on a machine with one.
#    (--target=cuda-emulated runs the same sharded program on the CPU bit for bit:
#    tests/lit/executable/shard_optimizer.test.)
# Ends with "N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")/../.."
dir=build/gpu
[[ -d $dir ]] || { echo "run.sh: no $dir: run tests/gpu/prepare.sh first (on any machine)"; exit 1; }
work=$(mktemp -d)
for f in "$dir"/*.xz; do xz -dc "$f" > "$work/$(basename "$f" .xz)"; chmod +x "$work/$(basename "$f" .xz)"; done
cp "$dir/compare_runs.py" "$work/"
# Skip only when there is no GPU to test on: `info` probes the driver and the device ("gpu none
# (why)"). With a GPU there, every failure below, the first CUDA step's included, is a failure.
gpu=$("$work/tiny_mlp" info | grep '^gpu ')
if [[ $gpu == "gpu none"* ]]; then
  echo "run.sh: no usable GPU: ${gpu#gpu none }"
  echo "GPU tests skipped"
  echo "0 passed, 0 failed, 14 skipped"
  exit 0
fi
echo "$gpu"
passed=0 failed=0
for m in tiny_mlp tiny_byte_lm_residual tiny_gpt2 tiny_gpt2_bf16 tiny_byte_lm_residual_bf16 \
         tiny_gpt2_moe tiny_byte_lm_moe; do
  for dev in cpu cuda; do
    "$work/$m" train --steps 3 --device $dev --metrics "$work/$m.$dev.jsonl" \
      --save-params "$work/$m.$dev.st" > "$work/$m.$dev.log" 2>&1
  done
  echo "== $m: CUDA step vs CPU step, 3 steps"
  if python3 "$work/compare_runs.py" "$work/$m.cpu.jsonl" "$work/$m.cpu.st" "$work/$m.cuda.jsonl" \
       "$work/$m.cuda.st" --rtol 1e-3 --atol 1e-4 --metrics loss,grad_norm,lr; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); tail -5 "$work/$m.cuda.log"
  fi
done
for m in byte_lm_residual gpt2_124m byte_lm_residual_bf16 gpt2_124m_bf16; do
  peak=67e12 peakName="67 TFLOP/s FP32"
  [[ $m == *_bf16 ]] && peak=989e12 peakName="989 TFLOP/s dense BF16"
  if "$work/$m" train --steps 6 --device cuda --metrics "$work/$m.jsonl" > "$work/$m.log" 2>&1; then
    if python3 - "$work/$m.jsonl" "$m" "$("$work/$m" info | grep '^FLOPs per step')" "$peak" "$peakName" \
         "$("$work/$m" info | grep '^predicted CUDA step')" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ms = statistics.median(r["step_ms"] for r in rows[1:])
tps = statistics.median(r["tokens_per_s"] for r in rows[1:])
flops = float(sys.argv[3].split()[-1])  # "FLOPs per step N" from `NAME info`
mfu = flops / (ms / 1e3) / float(sys.argv[4])
dev = [r["device_ms"] for r in rows[1:] if "device_ms" in r]
device = ""
if dev:  # the step on the device alone (CUDA events), without the host's batch copy and sync
    dms = statistics.median(dev)
    device = f"; on the device {dms:.1f} ms, MFU {100 * flops / (dms / 1e3) / float(sys.argv[4]):.1f}%"
print(f"== {sys.argv[2]}: median step {ms:.1f} ms, {tps:.0f} tokens/s, "
      f"{flops / 1e12:.2f} TFLOP/step, MFU {100 * mfu:.1f}% of {sys.argv[5]}{device}")
# The compiler's roofline ("predicted CUDA step X ms on ..."), written before the run.
if sys.argv[6]:
    predicted = float(sys.argv[6].split()[3])
    print(f"   measured {ms:.1f} ms vs predicted {predicted:.1f} ms: {ms / predicted:.2f}x the roofline")
# Floors, so a run that "finished" with nonsense fails: finite losses, a real rate.
bad = [r["step"] for r in rows if not (r["loss"] == r["loss"] and abs(r["loss"]) < float("inf"))]
if bad or not (mfu > 0 and tps > 0):
    print(f"   FAIL: non-finite loss at steps {bad}" if bad else f"   FAIL: MFU {mfu}, tokens/s {tps}")
    sys.exit(1)
PY
    then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  else
    echo "== $m: the CUDA step failed:"; tail -5 "$work/$m.log"; failed=$((failed + 1))
  fi
done
skipped=0
m=tiny_byte_lm_dp
if ! command -v mpirun > /dev/null; then
  echo "== $m: skipped: no mpirun on this machine (Debian: openmpi-bin)"; skipped=1
else
  gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU' || true)
  n=1; [[ ${gpus:-0} -ge 2 ]] && n=2
  "$work/$m" train --steps 100 --device cuda --metrics "$work/$m.1.jsonl" > "$work/$m.1.log" 2>&1
  mpirun --oversubscribe --allow-run-as-root -np $n "$work/$m" train --steps 100 --device cuda \
    --metrics "$work/$m.n.jsonl" > "$work/$m.n.log" 2>&1
  echo "== $m: $n rank(s) through NCCL vs one process, 100 steps"
  if [[ $(grep -c 'sums with NCCL' "$work/$m.n.log") == "$n" ]] &&
     python3 "$work/compare_runs.py" "$work/$m.1.jsonl" - "$work/$m.n.jsonl" - --metrics-only \
       --metrics loss --rtol 1e-6 --atol 0; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); tail -5 "$work/$m.1.log" "$work/$m.n.log"
  fi
fi
# 4. Planned offload: the widened tiny byte_lm with its stacked state and parameters in pinned
#    host memory (the copy stream's transfers, events between the streams, inside the step's
#    CUDA graph) against the same model in device memory, both on the GPU, 20 steps: within
#    rtol 1e-5 + atol 1e-6 (the kernels are the same and --target=cuda-emulated gives the same
#    bits, offload_emulated.test; cuBLASLt may pick another algorithm for a slot's alignment
#    than for a layer of a parameter buffer).
m=tiny_byte_lm_offload
for e in tiny_byte_lm_wide $m; do
  "$work/$e" train --steps 20 --device cuda --metrics "$work/$e.jsonl" --save-params "$work/$e.st" \
    > "$work/$e.log" 2>&1
done
echo "== $m: planned offload from pinned host memory vs in device memory, 20 steps"
if "$work/$m" info | grep -q '^offload: .* buffers in host memory' &&
   python3 "$work/compare_runs.py" "$work/tiny_byte_lm_wide.jsonl" "$work/tiny_byte_lm_wide.st" \
     "$work/$m.jsonl" "$work/$m.st" --rtol 1e-5 --atol 1e-6 --metrics loss,grad_norm; then
  passed=$((passed + 1))
else
  failed=$((failed + 1)); tail -5 "$work/$m.log"
fi
# 5. ZeRO-1 through NCCL on 2 GPUs.
m=tiny_byte_lm_zero
gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU' || true)
if ! command -v mpirun > /dev/null; then
  echo "== $m: skipped: no mpirun on this machine (Debian: openmpi-bin)"; skipped=$((skipped + 1))
elif [[ ${gpus:-0} -lt 2 ]]; then
  echo "== $m: skipped: needs 2 GPUs (NCCL puts one rank on each), found ${gpus:-0}"
  skipped=$((skipped + 1))
else
  [[ -f $work/tiny_byte_lm_dp.1.jsonl ]] ||
    "$work/tiny_byte_lm_dp" train --steps 100 --device cuda --metrics "$work/tiny_byte_lm_dp.1.jsonl" \
      > /dev/null 2>&1
  mpirun --oversubscribe --allow-run-as-root -np 2 "$work/$m" train --steps 100 --device cuda \
    --metrics "$work/$m.jsonl" > "$work/$m.log" 2>&1
  echo "== $m: the optimizer state on 2 ranks through NCCL vs one unsharded process, 100 steps"
  if [[ $(grep -c 'sums with NCCL' "$work/$m.log") == 2 ]] &&
     python3 "$work/compare_runs.py" "$work/tiny_byte_lm_dp.1.jsonl" - "$work/$m.jsonl" - \
       --metrics-only --metrics loss --rtol 1e-6 --atol 0; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); tail -5 "$work/$m.log"
  fi
fi
echo "$passed passed, $failed failed, $skipped skipped"
[[ $failed == 0 ]]
