#!/usr/bin/env python3
"""Compares two training runs of the same model: their metrics JSONL (--metrics) and final
parameters (--save-params, safetensors). Used to check the compiled executable against the
reference interpreter (`stepc interpret`). Exits 1 and says where if any value differs by more
than atol + rtol * |reference|.

  compare_runs.py REF.jsonl REF.safetensors OUT.jsonl OUT.safetensors --rtol R --atol A
"""
import argparse
import json
import math
import struct
import sys


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            sys.exit(f"{path}: tensor {name} is {info['dtype']}, expected F32")
        begin, end = info["data_offsets"]
        raw = data[base + begin:base + end]
        tensors[name] = struct.unpack(f"<{len(raw) // 4}f", raw)
    return tensors


def read_metrics(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("ref_metrics")
    p.add_argument("ref_params")
    p.add_argument("out_metrics")
    p.add_argument("out_params")
    p.add_argument("--rtol", type=float, required=True)
    p.add_argument("--atol", type=float, required=True)
    p.add_argument("--metrics", default="loss,grad_norm,lr",
                   help="comma-separated metric keys to compare")
    p.add_argument("--metrics-only", action="store_true",
                   help="compare the metrics alone (the parameters' tolerance is another's)")
    a = p.parse_args()
    failures = []

    def close(x, y):
        return math.isfinite(y) and abs(x - y) <= a.atol + a.rtol * abs(x)

    ref, out = read_metrics(a.ref_metrics), read_metrics(a.out_metrics)
    if len(ref) != len(out) or not ref:
        failures.append(f"metrics: {len(ref)} reference steps, {len(out)} compared steps")
    worst_metric = 0.0
    for r, o in zip(ref, out):
        for key in a.metrics.split(","):
            if key not in r:
                continue
            x, y = r[key], o.get(key, float("nan"))
            worst_metric = max(worst_metric, abs(x - y))
            if not close(x, y):
                failures.append(f"step {r['step']} {key}: reference {x!r}, compared {y!r}")
    rp, op = ({}, {}) if a.metrics_only else (read_safetensors(a.ref_params),
                                              read_safetensors(a.out_params))
    if sorted(rp) != sorted(op):
        failures.append(f"parameter names differ: {sorted(rp)} vs {sorted(op)}")
    worst_param, count = 0.0, 0
    for name in sorted(set(rp) & set(op)):
        if len(rp[name]) != len(op[name]):
            failures.append(f"parameter {name}: sizes differ")
            continue
        bad = 0
        for x, y in zip(rp[name], op[name]):
            count += 1
            worst_param = max(worst_param, abs(x - y))
            if not close(x, y):
                bad += 1
        if bad:
            failures.append(f"parameter {name}: {bad} of {len(rp[name])} values differ beyond "
                            f"atol={a.atol} rtol={a.rtol}")
    print(f"compared {len(ref)} steps and {count} parameter values: max |metric diff| "
          f"{worst_metric:.3g}, max |param diff| {worst_param:.3g} (atol {a.atol}, rtol {a.rtol})")
    for f in failures[:20]:
        print("MISMATCH:", f)
    if failures:
        sys.exit(1)
    print("MATCH")


if __name__ == "__main__":
    main()
