#!/usr/bin/env python3
"""Planned offload against the in-memory step and against synchronous offload, on this machine.

byte_lm (the full model, SAM off for time) is compiled three ways: with everything in memory,
and with --device-memory set to leave at most 1/4 of its parameters + optimizer state in RAM
(the rest in the CPU target's host tier, a file read and written with O_DIRECT), once with the
planned (double-buffered) transfers and once with --offload=sync (HomebrewNLP's scheme: copy in
when used, back after). Rounds alternate the three; each side's figure is the median step time
over the steps after the warm-up. The exposed transfer time is the step's time waiting for its
transfers (the executable's offload_exposed_ms metric), the transfer bandwidth the bytes the plan
moves per step over the I/O thread's time in them, set against the file's bandwidth measured
here with dd (direct I/O). For the GPU the same bytes are set against PCIe 5 x16 beside the
compiler's roofline prediction of the CUDA step.

  benchmarks/offload/run_offload_benchmark.sh [--rounds 3] [--steps 4] [--json F]
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
sys.path.insert(0, os.path.join(REPO, "benchmarks", "data_parallel"))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))
from dp_scaling import run  # noqa: E402  (a command's output, or exit with it)
STEPC = os.path.join(REPO, "bazel-bin", "compiler", "Driver", "stepc")
WARMUP = 1


def mib(text):
    """The MiB of a size printed as '12.3 MiB', '4.0 KiB' or '1.2 GiB'."""
    m = re.match(r"([\d.]+) (KiB|MiB|GiB)", text)
    scale = {"KiB": 1 / 1024, "MiB": 1, "GiB": 1024}[m.group(2)]
    return float(m.group(1)) * scale


def compile_(args, output):
    """Compiles; returns the planned device peak in MiB, from the compiler's report."""
    out = run([STEPC, "compile"] + args + ["-o", output])
    return float(re.search(r"planned peak memory ([\d.]+) MiB", out).group(1))


def info(binary):
    out = run([binary, "info"])
    sizes = {}
    for key, pattern in [("params", r"^parameters \S+ \(([^)]+)\)"),
                         ("state", r"^optimizer state \S+ \(([^)]+)\)")]:
        m = re.search(pattern, out, re.M)
        sizes[key] = mib(m.group(1)) if m else None
    m = re.search(r"each step reads (\S+ \S+) and writes (\S+ \S+)", out)
    sizes["read"], sizes["written"] = (mib(m.group(1)), mib(m.group(2))) if m else (0.0, 0.0)
    m = re.search(r"^device memory: (.*)$", out, re.M)
    sizes["choice"] = m.group(1) if m else ""
    return sizes


def medians(metrics):
    with open(metrics) as f:
        rows = [json.loads(line) for line in f if line.strip()][WARMUP:]
    pick = lambda k: statistics.median(r[k] for r in rows) if rows and k in rows[0] else 0.0
    return {k: pick(k) for k in ("step_ms", "offload_exposed_ms", "offload_io_ms")}


def dd_bandwidth(directory):
    """Direct-I/O write and read bandwidth of a 512 MiB file in `directory` (bytes/s)."""
    path = os.path.join(directory, "stepc-dd-probe")
    rates = []
    for args in (["if=/dev/zero", "of=" + path, "oflag=direct"], ["if=" + path, "of=/dev/null", "iflag=direct"]):
        out = run(["dd", "bs=1M", "count=512"] + args)
        m = re.search(r"copied, ([\d.]+) s", out)
        rates.append(512 * 2**20 / float(m.group(1)))
    os.remove(path)
    return {"write": rates[0], "read": rates[1]}


def fitting_budget(args, budget, output):
    """`budget` (MiB), or if nothing fits it, the least the compiler says the device needs."""
    r = subprocess.run([STEPC, "compile"] + args + ["--device-memory=%dK" % int(budget * 1024), "-o", output],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode == 0:
        return budget, float(re.search(r"planned peak memory ([\d.]+) MiB", r.stdout).group(1))
    m = re.search(r"the device still needs ([\d.]+) MiB", r.stdout)
    if not m:
        sys.exit(r.stdout[-3000:])
    least = float(m.group(1)) + 1
    return least, compile_(args + ["--device-memory=%dK" % int(least * 1024)], output)


def cuda_prediction(model, flags):
    """The CUDA step in device memory and with 1/4 of its parameters + state there (or the least
    its plan needs): the roofline step and the offload's predicted transfer and exposed times
    over sm_90's host link (PCIe 5 x16, PredictStepTime.cpp)."""
    plan = run([STEPC, "compile", model] + flags + ["--target=cuda", "--emit=plan"])
    m = re.search(r"predicted @train_step on (.*?) \(roofline.*?: ([\d.]+) ms", plan)
    memory = {k: int(v) for k, v in re.findall(r"(\w+)_bytes = (\d+)", plan.split("\n")[0])}
    budget = (memory["peak"] - 0.75 * (memory["params"] + memory["state"])) / 2**20
    out = {"device": m.group(1), "predicted_step_ms": float(m.group(2)), "quarter_budget_mib": budget}
    for _ in range(2):
        r = subprocess.run([STEPC, "compile", model] + flags +
                           ["--target=cuda", "--device-memory=%dK" % int(budget * 1024), "--emit=plan"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode == 0:
            break
        least = re.search(r"the device still needs ([\d.]+) MiB", r.stdout)
        if not least:
            sys.exit(r.stdout[-3000:])
        budget = float(least.group(1)) + 1
    step = re.search(r"predicted @train_step on .*?: ([\d.]+) ms", r.stdout)
    off = re.search(r"predicted offload: transfers ([\d.]+) ms over the host link at ([\d.]+) GB/s, "
                    r"([\d.]+) ms of them exposed", r.stdout)
    out.update({"device_memory_mib": budget, "offload_step_ms": float(step.group(1)),
                "transfer_ms": float(off.group(1)), "link_gbs": float(off.group(2)),
                "exposed_ms": float(off.group(3))})
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch", type=int, default=16, help="byte_lm's batch (16: the model's)")
    p.add_argument("--no-gpu", action="store_true", help="leave out the GPU predictions (slow to compile)")
    p.add_argument("--json")
    a = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="offload-bench-", dir=os.environ.get("STEPC_OFFLOAD_DIR", "/var/tmp"))
    env = dict(os.environ, STEPC_OFFLOAD_DIR=tmp)
    model = os.path.join(REPO, "models", "byte_lm.mlir")
    flags = ["--sam-rho=0", "--batch=%d" % a.batch]
    resident = os.path.join(tmp, "resident")
    peak = compile_([model] + flags, resident)
    r = info(resident)
    r["planned"] = peak
    # At most 1/4 of parameters + state in RAM: the rest must go.
    # Where that is less than the planned offload's least device memory (its transfer slots
    # beside the step's arena), that least instead, for both modes alike.
    target = r["planned"] - 0.75 * (r["params"] + r["state"])
    sides = {"resident": resident, "planned": os.path.join(tmp, "planned"), "sync": os.path.join(tmp, "sync")}
    budget, peaks = fitting_budget([model] + flags + ["--offload=planned"], target, sides["planned"])
    compile_([model] + flags + ["--device-memory=%dK" % int(budget * 1024), "--offload=sync"], sides["sync"])
    o = info(sides["planned"])
    o["planned"] = peaks
    results = {k: [] for k in sides}
    for rnd in range(a.rounds):
        for name, binary in sides.items():
            metrics = os.path.join(tmp, "%s-%d.jsonl" % (name, rnd))
            run([binary, "train", "--steps", str(a.steps), "--threads", str(a.threads),
                 "--metrics", metrics], env=env)
            results[name].append(medians(metrics))
    med = {k: {m: statistics.median(x[m] for x in v) for m in v[0]} for k, v in results.items()}
    dd = dd_bandwidth(tmp)
    moved = (o["read"] + o["written"]) * 2**20
    io_s = med["planned"]["offload_io_ms"] / 1e3
    bound_s = o["read"] * 2**20 / dd["read"] + o["written"] * 2**20 / dd["write"]
    out = {
        "model": "byte_lm (F256 I512 K7 depth 8, B%d S256), --sam-rho=0, %d threads" % (a.batch, a.threads),
        "resident_planned_mib": r["planned"], "params_mib": r["params"], "state_mib": r["state"],
        "device_memory_mib": budget, "quarter_target_mib": target, "offload_choice": o["choice"],
        "offload_device_peak_mib": o["planned"],
        "moved_per_step_mib": {"read": o["read"], "written": o["written"]},
        "step_ms": {k: v["step_ms"] for k, v in med.items()},
        "exposed_ms": {k: med[k]["offload_exposed_ms"] for k in ("planned", "sync")},
        "io_ms": {k: med[k]["offload_io_ms"] for k in ("planned", "sync")},
        "file_bandwidth_direct": dd,
        "achieved_transfer_bandwidth": moved / io_s if io_s > 0 else None,
        "transfer_bound_ms": bound_s * 1e3,
        "rounds": results,
    }
    s = out["step_ms"]
    print("byte_lm, batch %d, --sam-rho=0: in memory %.0f MiB planned; --device-memory=%.0f MiB leaves %.0f MiB"
          % (a.batch, r["planned"], budget, o["planned"]))
    if budget > target:
        print("  (1/4 of parameters + state in RAM would be %.0f MiB, below the least the planned offload needs)"
              % target)
    print("  chosen: " + o["choice"])
    print("  moved per step: %.0f MiB read, %.0f MiB written" % (o["read"], o["written"]))
    print("  step (median of %d rounds): in memory %.0f ms, planned offload %.0f ms (%.2fx), sync %.0f ms (%.2fx)"
          % (a.rounds, s["resident"], s["planned"], s["planned"] / s["resident"], s["sync"], s["sync"] / s["resident"]))
    print("  planned vs sync: %.2fx faster" % (s["sync"] / s["planned"]))
    for k in ("planned", "sync"):
        print("  %s: exposed transfer %.0f ms = %.1f%% of its step; I/O thread busy %.0f ms"
              % (k, out["exposed_ms"][k], 100 * out["exposed_ms"][k] / s[k], out["io_ms"][k]))
    print("  file (direct I/O, dd 1 MiB blocks): write %.2f GB/s, read %.2f GB/s; the transfers achieved %.2f GB/s"
          % (dd["write"] / 1e9, dd["read"] / 1e9, (out["achieved_transfer_bandwidth"] or 0) / 1e9))
    print("  bound: the bytes at the file's bandwidth take %.0f ms against %.0f ms of in-memory step"
          % (bound_s * 1e3, s["resident"]))
    for name, mflags in (() if a.no_gpu else (("byte_lm", flags), ("gpt2_124m", []))):
        g = cuda_prediction(os.path.join(REPO, "models", name + ".mlir"), mflags)
        out["gpu_" + name] = g
        print("  GPU %s on %s: the CUDA step's roofline %.2f ms; with %.0f MiB of device memory "
              "(1/4 of parameters + state would be %.0f MiB) its transfers take %.2f ms over the "
              "host link at %.0f GB/s, %.2f ms of them exposed (predicted)"
              % (name, g["device"], g["predicted_step_ms"], g["device_memory_mib"],
                 g["quarter_budget_mib"], g["transfer_ms"], g["link_gbs"], g["exposed_ms"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
