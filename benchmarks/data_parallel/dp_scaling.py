#!/usr/bin/env python3
"""Weak scaling of data-parallel training on this machine: byte_lm_small (or --model NAME's small
configuration, e.g. byte_lm_moe, whose micro-batches are routed each on its own), one rank x 1 thread on
its batch of B rows against N ranks x 1 thread on a global batch of N*B rows (one micro-batch of
B per rank), and the same global batch in one process with N threads (what a user of one machine
runs otherwise). Alternating rounds, median step time of each side (the first steps of a run
left out as warm-up); the exposed all-reduce time is the time a rank spends inside the step's
all-reduce calls (STEPC_PROFILE; the rank that spends most), waiting for the others included.
With --shard-optimizer the N ranks' executable shards the optimizer state (ZeRO stage 1), and its
all-gathers of the updated parameters count as exposed too. A fourth side runs the N ranks with
every reduction after the backward, one at a time (`--overlap-reductions=false`, the same bits),
against the default, which starts each layer's reduction inside the backward on a thread of its
own.

  benchmarks/data_parallel/run_dp_benchmark.sh [--ranks 2] [--rounds 5] [--steps 12]
                                               [--shard-optimizer] [--model byte_lm] [--json F]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))
from cpu_vs_pytorch import machine_probe, stepc_info_flops  # noqa: E402
STEPC = os.path.join(REPO, "bazel-bin", "compiler", "Driver", "stepc")
WARMUP = 2


def run(cmd, env=None):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if r.returncode != 0:
        sys.exit("failed: " + " ".join(cmd) + "\n" + r.stdout[-3000:])
    return r.stdout


def step_ms(metrics):
    with open(metrics) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return statistics.median(r["step_ms"] for r in rows[WARMUP:])


def all_reduce_ms(output):
    # Each rank prints its own profile table at exit: one total per rank. The largest is
    # reported as exposed (the rank that waited most for the others, transfers included).
    # The all-gathers of --shard-optimizer are collectives too.
    tables = output.split("profile (STEPC_PROFILE)")[1:]
    totals = []
    for t in tables:
        totals.append(sum(float(m.group(1)) for m in re.finditer(
            r"^\s*([0-9.]+)\s+\d+\s+[0-9.]+%\s+all_(?:reduce|gather)(?:_start|_wait)? ", t, re.M)))
    return totals


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--shard-optimizer", action="store_true",
                   help="the N ranks' step shards the optimizer state (ZeRO stage 1)")
    p.add_argument("--model", default="byte_lm", help="models/NAME.mlir, at --config=small")
    p.add_argument("--json")
    a = p.parse_args()
    MODEL = [os.path.join(REPO, "models", a.model + ".mlir"), "--config=small"]
    n = a.ranks
    tmp = tempfile.mkdtemp(prefix="dp-bench-")
    one = os.path.join(tmp, "one")
    many = os.path.join(tmp, "many")
    run([STEPC, "compile", *MODEL, "-o", one])
    run([STEPC, "compile", *MODEL, f"--global-batch={16 * n}", "--data-parallel",
         *([f"--shard-optimizer={n}"] if a.shard_optimizer else []), "-o", many])
    # One process runs the global batch unsharded (a sharded step needs its N ranks).
    serial = os.path.join(tmp, "serial")
    run([STEPC, "compile", *MODEL, f"--global-batch={16 * n}", "--data-parallel",
         *([f"--shard-optimizer={n}"] if a.shard_optimizer else []), "--overlap-reductions=false",
         "-o", serial])
    whole = many
    if a.shard_optimizer:
        whole = os.path.join(tmp, "whole")
        run([STEPC, "compile", *MODEL, f"--global-batch={16 * n}",
             "--data-parallel", "-o", whole])
    info = run([many, "info"])
    reduce_line = next((l for l in info.splitlines() if l.startswith("data-parallel")), "")
    mpirun = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(n)]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OPENBLAS_L2_SIZE", None)
    sides = {"1 rank x 1 thread, batch 16": [], f"{n} ranks x 1 thread, batch {16 * n}": [],
             f"1 rank x {n} threads, batch {16 * n}": [],
             f"{n} ranks x 1 thread, reductions after the backward": []}
    names = list(sides)
    exposed, least, exposedSerial, leastSerial = [], [], [], []
    for r in range(a.rounds):
        m = os.path.join(tmp, "m.jsonl")
        run([one, "train", "--steps", str(a.steps), "--threads", "1", "--metrics", m], env)
        sides[names[0]].append(step_ms(m))
        out = run(mpirun + [many, "train", "--steps", str(a.steps), "--threads", "1",
                            "--metrics", m], dict(env, STEPC_PROFILE="1"))
        sides[names[1]].append(step_ms(m))
        totals = all_reduce_ms(out)
        # The profile leaves out the first step (the warm-up) when more follow.
        profiled = a.steps - 1 if a.steps > 1 else 1
        exposed.append(max(totals) / profiled if totals else float("nan"))
        least.append(min(totals) / profiled if totals else float("nan"))
        run([whole, "train", "--steps", str(a.steps), "--threads", str(n), "--metrics", m], env)
        sides[names[2]].append(step_ms(m))
        out = run(mpirun + [serial, "train", "--steps", str(a.steps), "--threads", "1",
                            "--metrics", m], dict(env, STEPC_PROFILE="1"))
        sides[names[3]].append(step_ms(m))
        totals = all_reduce_ms(out)
        exposedSerial.append(max(totals) / profiled if totals else float("nan"))
        leastSerial.append(min(totals) / profiled if totals else float("nan"))
        print(f"round {r + 1}: " + ", ".join(f"{k}: {v[-1]:.1f} ms" for k, v in sides.items()),
              flush=True)
    med = {k: statistics.median(v) for k, v in sides.items()}
    t1, tn, tt, ts = med[names[0]], med[names[1]], med[names[2]], med[names[3]]
    ex = statistics.median(exposed)
    floor = statistics.median(least)
    exs = statistics.median(exposedSerial)
    floors = statistics.median(leastSerial)
    # The GPU's side, predicted: the roofline of the CUDA step (PredictStepTime.cpp) for the
    # same per-rank work, beside the all-reduce of the step's bytes over NVLink (H200: 450 GB/s
    # each way per GPU) on 8 GPUs: this tree (log2 8 levels up and down, each the whole buffer)
    # and a ring (NCCL's, 2 (N-1)/N of it; not bit-stable).
    gpu = os.path.join(tmp, "gpu")
    run([STEPC, "compile", *MODEL, "--target=cuda", "-o", gpu])  # one rank's 16 rows
    predicted = re.search(r"predicted CUDA step ([0-9.]+) ms", run([gpu, "info"]))
    size = re.search(r"buffers, ([0-9.]+) (KiB|MiB|GiB)", reduce_line)
    reduce_bytes = float(size.group(1)) * {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30}[size.group(2)]
    nvlink = 450e9
    tree_us = 2 * 3 * reduce_bytes / nvlink * 1e6
    ring_us = 2 * 7 / 8 * reduce_bytes / nvlink * 1e6
    result = {
        "model": a.model + "_small", "ranks": n, "rounds": a.rounds, "steps": a.steps,
        "shard_optimizer": a.shard_optimizer,
        "median_step_ms": med, "min_max_step_ms": {k: [min(v), max(v)] for k, v in sides.items()},
        "weak_scaling_efficiency": t1 / tn,
        "throughput_vs_one_process_n_threads": tt / tn,
        "exposed_all_reduce_ms_per_step": ex, "exposed_share": ex / tn, "reductions": reduce_line,
        "least_waiting_rank_all_reduce_ms_per_step": floor,
        "reductions_after_backward": {
            "weak_scaling_efficiency": t1 / ts, "exposed_all_reduce_ms_per_step": exs,
            "exposed_share": exs / ts, "least_waiting_rank_all_reduce_ms_per_step": floors},
        "gpu_predicted_step_ms": float(predicted.group(1)) if predicted else None,
        "gpu_8x_h200_nvlink_all_reduce_us": {"tree": tree_us, "ring": ring_us},
    }
    # Achieved model FLOP/s of the global step against the machine's measured FMA peak.
    flops = stepc_info_flops(many)
    probe = machine_probe(n, tmp)
    if flops:
        rate = flops / (tn / 1e3) / 1e9
        result["model_gflops_per_s"] = rate
        peak = f", {100 * rate / probe['fma_gflops_t']:.0f}% of the measured FMA peak " \
               f"({probe['fma_gflops_t']:.0f} GFLOP/s on {n} threads)" if probe else ""
        print(f"{n} ranks: {rate:.1f} model GFLOP/s{peak}")
    print(f"weak scaling efficiency (1 rank / {n} ranks, same work per rank): {t1 / tn:.3f}")
    print(f"{n} ranks x 1 thread vs 1 process x {n} threads on the same global batch: "
          f"{tt / tn:.2f}x the throughput")
    print(f"exposed {'all-reduce and all-gather' if a.shard_optimizer else 'all-reduce'}: "
          f"{ex:.2f} ms per step, {100 * ex / tn:.1f}% of the step (the rank "
          f"that waits most; the other: {floor:.2f} ms) ({reduce_line})")
    print(f"reductions after the backward (--overlap-reductions=false): efficiency {t1 / ts:.3f}, "
          f"exposed {exs:.2f} ms per step, {100 * exs / ts:.1f}% (the other rank: {floors:.2f} ms)")
    if predicted:
        print(f"GPU, predicted: a rank's CUDA step on 16 rows {float(predicted.group(1)):.2f} ms "
              f"(roofline), the all-reduce of its {reduce_bytes / 2**20:.1f} MiB on 8x H200 over "
              f"NVLink {tree_us:.0f} us in this tree, {ring_us:.0f} us as a ring")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
