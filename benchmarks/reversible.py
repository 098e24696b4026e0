#!/usr/bin/python3
"""Reversible vs checkpointed vs stored layers: memory, step time and the gradient error.

models/byte_lm.mlir marks its MomentumNet repeat `reversible`: the backward rebuilds each
layer's inputs from its outputs (x = (x' - (1 - beta) a') / beta, a = a' - f(x)) and stores
nothing per layer (segments of 16 layers keep their input streams). Its twins are the same
function (the model stage, momentum(beta) written out as its coupling) without the keyword:
  * checkpointed: each layer's input is kept and the backward recomputes the layer
    (`step.saved_gemms = 0`);
  * stored: each layer's input and all its weight GEMMs' outputs are kept, the backward
    recomputes only the cheap ops around them (`step.saved_gemms = 99`).
For each depth and precision, and streams held in f64 (the model as written), in f32 (the
`streams` attribute removed) or exact (`streams = "exact"`: f64 fixed point, no segments), it
reports:
  * the planned arena (`--emit=plan`) and the peak RSS of a training run;
  * the median step time of `--steps` steps (after one warm-up), the three alternating;
  * the reconstruction error (`--rebuild-error`: the largest max |rebuilt - forward's input| /
    max |forward's input| over the streams and layers) on the batch below;
  * the relative L2 error of the reversible gradients against each twin's on the same batch at
    the same parameters (those after 5 checkpointed training steps, where every gradient is
    non-zero; SAM off so that only the backward differs), over all parameters. The
    checkpointed twin recomputes the same kernels as the rebuild does, so against it the error
    is the rebuild's alone: 0 means the rebuilt f32 inputs were the forward's bit for bit.

  benchmarks/reversible.py                         # small config, depths 8,64,256, f32 and bf16
  benchmarks/reversible.py --depths 8,64 --precisions f32 --streams f64 --steps 3
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
    """Runs cmd and returns its peak RSS in MiB, as /usr/bin/time -f %M reports it.

    Not this process's wait4: a child's ru_maxrss starts from the parent's RSS at the fork
    (Linux keeps the high-water mark across exec), and this script grows to gigabytes holding
    the deep models' gradients, which made every later run read as that size."""
    out = tempfile.NamedTemporaryFile(delete=False)
    out.close()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out.name, *cmd],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {p.stderr.decode()[-800:]}")
    with open(out.name) as f:
        kib = int(f.read().split()[-1])
    os.unlink(out.name)
    return kib / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--model", default=MODEL)
    ap.add_argument("--config", default="small")
    ap.add_argument("--depths", default="8,64,256")
    ap.add_argument("--precisions", default="f32,bf16")
    ap.add_argument("--streams", default="f64,f32")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    tmp = tempfile.mkdtemp(prefix="stepc_rev_")
    rows = []
    ways = ("reversible", "checkpointed", "stored")
    for streams in args.streams.split(","):
        for precision in args.precisions.split(","):
            for depth in (int(d) for d in args.depths.split(",")):
                rows.append(measure(args, env, tmp, streams, precision, depth, ways))
    print(json.dumps(rows))


def measure(args, env, tmp, streams, precision, depth, ways):
    r = {"streams": streams, "precision": precision, "depth": depth}
    tag = f"{streams}_{precision}_{depth}"
    flags = ["--sam-rho=0"] + (["--precision=bf16"] if precision == "bf16" else [])
    dump = run([STEPC, "compile", args.model, f"--config={args.config}", f"--dim=depth={depth}",
                "--emit=model"], env).stdout
    if streams == "f32":
        dump = dump.replace(", streams = f64}", "}").replace(" attributes {streams = f64}", "")
    elif streams == "exact":  # fixed-point streams, rebuilt bit for bit through the whole depth
        dump = dump.replace("streams = f64}", 'streams = "exact"}')
    def twin(saved_gemms):  # the repeat without `reversible`, keeping `saved_gemms` GEMM outputs
        def attrs(m):
            kept = [f"step.saved_gemms = {saved_gemms}"] + ([m.group(1)] if m.group(1) else [])
            return ") attributes {" + ", ".join(kept) + "} {"
        return re.sub(r"\) reversible(?: attributes \{([^}]*)\})? \{", attrs, dump, count=1)
    models = {"reversible": dump, "checkpointed": twin(0), "stored": twin(99)}
    exes = {}
    for way in ways:
        path = os.path.join(tmp, f"{way}_{tag}.mlir")
        with open(path, "w") as g:
            g.write(models[way])
        plan = run([STEPC, "compile", path, *flags, "--emit=plan"], env).stdout
        r[way + "_arena_mib"] = int(re.search(r"arena_bytes = (\d+)", plan).group(1)) / 2**20
        exe = os.path.join(tmp, f"{way}_{tag}")
        run([STEPC, "compile", path, *flags, "--export-grads", "-o", exe], env)
        exes[way] = exe
    times = {w: [] for w in exes}
    for _ in range(2):  # alternating, twice
        for way, exe in exes.items():
            metrics = exe + ".jsonl"
            if os.path.exists(metrics):
                os.remove(metrics)
            r[way + "_rss_mib"] = max(r.get(way + "_rss_mib", 0), peak_rss_run(
                [exe, "train", "--steps", str(args.steps + 1), "--threads", str(args.threads),
                 "--metrics", metrics], env))
            with open(metrics) as f:
                ms = [json.loads(l)["step_ms"] for l in f if l.strip()]
            times[way] += ms[1:]
    for way in exes:
        r[way + "_ms"] = statistics.median(times[way])
    # At parameters where every gradient is non-zero (the head starts at zero, which zeroes
    # all the others at step 0): after 5 training steps, the same for all.
    start = os.path.join(tmp, f"start_{tag}.safetensors")
    run([exes["checkpointed"], "train", "--steps", "5", "--threads", str(args.threads),
         "--save-params", start], env)
    grads = {}
    for way, exe in exes.items():
        path = exe + ".grads.safetensors"
        run([exe, "train", "--steps", "1", "--threads", str(args.threads), "--init-from", start,
             "--save-grads", path], env)
        grads[way] = read_safetensors(path)
    # The reconstruction error itself (--rebuild-error: max |rebuilt - forward's| / max |forward's|
    # over the carried streams and layers), from a separate executable so that the timed one
    # does no extra work.
    measured = os.path.join(tmp, f"rebuild_{tag}")
    run([STEPC, "compile", os.path.join(tmp, f"reversible_{tag}.mlir"), *flags, "--rebuild-error",
         "-o", measured], env)
    run([measured, "train", "--steps", "1", "--threads", str(args.threads), "--init-from", start,
         "--metrics", measured + ".jsonl"], env)
    with open(measured + ".jsonl") as f:
        r["rebuild_error"] = max(json.loads(l)["rebuild_error"] for l in f if l.strip())
    for twin in ways[1:]:
        num = den = 0.0
        for name, ref in grads[twin].items():
            got = grads["reversible"][name]
            num += sum((a - b) ** 2 for a, b in zip(got, ref))
            den += sum(b * b for b in ref)
        r["error_vs_" + twin] = math.sqrt(num / den) if den > 0 else float("nan")
    print(f"{streams} streams, {precision} depth {depth}: arena reversible / checkpointed / stored "
          f"{r['reversible_arena_mib']:.1f} / {r['checkpointed_arena_mib']:.1f} / "
          f"{r['stored_arena_mib']:.1f} MiB; peak RSS {r['reversible_rss_mib']:.0f} / "
          f"{r['checkpointed_rss_mib']:.0f} / {r['stored_rss_mib']:.0f} MiB; step "
          f"{r['reversible_ms']:.1f} / {r['checkpointed_ms']:.1f} / {r['stored_ms']:.1f} ms "
          f"(reversible {r['reversible_ms'] / r['stored_ms']:.2f}x stored); rebuilt-input error "
          f"{r['rebuild_error']:.2e}; gradient rel. L2 error "
          f"vs checkpointed {r['error_vs_checkpointed']:.2e}, vs stored {r['error_vs_stored']:.2e}",
          flush=True)
    return r


if __name__ == "__main__":
    main()
