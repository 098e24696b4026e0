#!/usr/bin/python3
"""Reversible vs checkpointed layers: memory, step time and the gradient error of rebuilding.

models/byte_lm.mlir marks its MomentumNet repeat `reversible`: the backward rebuilds
each layer's inputs from its outputs (x = (x' - (1 - beta) a') / beta, a = a' - f(x)) and stores
nothing per layer. The same file with the keyword removed is the same function differentiated
the default way: each layer's input and its weight GEMMs' outputs are saved ("checkpointed").
For each depth this compiles both (with --export-grads), and reports:
  * the planned arena (`--emit=plan`) and the peak RSS of a training run;
  * the median step time of `--steps` steps (after one warm-up), the two alternating;
  * the relative L2 error of the reversible gradients against the checkpointed ones on the same
    batch at the same parameters (those after 5 checkpointed training steps, where every
    gradient is non-zero; SAM off so that only the backward differs), over all parameters, and
    the worst tensor's. In exact arithmetic they are equal; in floating point
    the rebuilt inputs carry the rounding of (a + f) - f and of the division by beta, which
    grows with depth.

  benchmarks/reversible.py                         # small config, depths 8,64,256, f32 and bf16
  benchmarks/reversible.py --depths 8,64 --precisions f32 --steps 3
"""
import argparse
import json
import math
import os
import re
import statistics
import struct
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPC = os.path.join(REPO, "bazel-bin", "compiler", "Driver", "stepc")
MODEL = os.path.join(REPO, "models", "byte_lm.mlir")


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = {}
    for name, info in header.items():
        if name != "__metadata__":
            begin, end = info["data_offsets"]
            raw = data[8 + n + begin:8 + n + end]
            out[name] = struct.unpack(f"<{len(raw) // 4}f", raw)
    return out


def run(cmd, env):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: {r.stderr[-800:]}")
    return r


def peak_rss_run(cmd, env):
    """Runs cmd and returns its peak RSS in MiB (wait4)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)} failed: {p.stderr.read().decode()[-800:]}")
    return ru.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=MODEL)
    ap.add_argument("--config", default="small")
    ap.add_argument("--depths", default="8,64,256")
    ap.add_argument("--precisions", default="f32,bf16")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    tmp = tempfile.mkdtemp(prefix="stepc_rev_")
    rows = []
    for precision in args.precisions.split(","):
        for depth in (int(d) for d in args.depths.split(",")):
            r = {"precision": precision, "depth": depth}
            flags = [f"--config={args.config}", f"--dim=depth={depth}", "--sam-rho=0"]
            if precision == "bf16":
                flags.append("--precision=bf16")
            # The checkpointed twin: the model stage (momentum(beta) written out as its
            # coupling) without the `reversible` keyword.
            stored = os.path.join(tmp, f"checkpointed_{precision}_{depth}.mlir")
            dump = run([STEPC, "compile", args.model, f"--config={args.config}", f"--dim=depth={depth}",
                        "--emit=model"], env).stdout
            with open(stored, "w") as g:
                g.write(re.sub(r"\) reversible( attributes \{[^}]*\})? \{", ") {", dump))
            exes = {}
            for way, model in (("reversible", args.model), ("checkpointed", stored)):
                mflags = flags if way == "reversible" else flags[2:]
                plan = run([STEPC, "compile", model, *mflags, "--emit=plan"], env).stdout
                r[way + "_arena_mib"] = int(re.search(r"arena_bytes = (\d+)", plan).group(1)) / 2**20
                exe = os.path.join(tmp, f"{way}_{precision}_{depth}")
                run([STEPC, "compile", model, *mflags, "--export-grads", "-o", exe], env)
                exes[way] = exe
            times = {w: [] for w in exes}
            for _ in range(2):  # alternating, twice
                for way, exe in exes.items():
                    metrics = exe + ".jsonl"
                    if os.path.exists(metrics):
                        os.remove(metrics)
                    r[way + "_rss_mib"] = max(r.get(way + "_rss_mib", 0), peak_rss_run(
                        [exe, "train", "--steps", str(args.steps + 1), "--threads",
                         str(args.threads), "--metrics", metrics], env))
                    with open(metrics) as f:
                        ms = [json.loads(l)["step_ms"] for l in f if l.strip()]
                    times[way] += ms[1:]
            for way in exes:
                r[way + "_ms"] = statistics.median(times[way])
            # At parameters where every gradient is non-zero (the head starts at zero, which
            # zeroes all the others at step 0): after 5 training steps, the same for both.
            start = os.path.join(tmp, f"start_{precision}_{depth}.safetensors")
            run([exes["checkpointed"], "train", "--steps", "5", "--threads", str(args.threads),
                 "--save-params", start], env)
            grads = {}
            for way, exe in exes.items():
                path = exe + ".grads.safetensors"
                run([exe, "train", "--steps", "1", "--threads", str(args.threads), "--init-from",
                     start, "--save-grads", path], env)
                grads[way] = read_safetensors(path)
            num = den = 0.0
            worst, worst_name = 0.0, ""
            for name, ref in grads["checkpointed"].items():
                got = grads["reversible"][name]
                d = sum((a - b) ** 2 for a, b in zip(got, ref))
                s = sum(b * b for b in ref)
                num, den = num + d, den + s
                rel = math.sqrt(d / s) if s > 0 else 0.0
                if rel > worst:
                    worst, worst_name = rel, name
            r["grad_rel_l2"] = math.sqrt(num / den) if den > 0 else float("nan")
            r["worst_tensor"], r["worst_rel_l2"] = worst_name, worst
            rows.append(r)
            print(f"{precision} depth {depth}: arena reversible {r['reversible_arena_mib']:.1f} MiB "
                  f"/ checkpointed {r['checkpointed_arena_mib']:.1f} MiB; peak RSS "
                  f"{r['reversible_rss_mib']:.0f} / {r['checkpointed_rss_mib']:.0f} MiB; step "
                  f"{r['reversible_ms']:.1f} / {r['checkpointed_ms']:.1f} ms "
                  f"({r['reversible_ms'] / r['checkpointed_ms']:.2f}x); gradient rel. L2 error "
                  f"{r['grad_rel_l2']:.2e} (worst {worst_name} {worst:.2e})", flush=True)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
