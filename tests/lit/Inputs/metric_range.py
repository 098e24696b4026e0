#!/usr/bin/env python3
"""Checks one metric of an executable's --metrics JSONL against a range: every step's value must
lie in [--min, --max] (a step without it fails). Prints `NAME max X` (the largest value, %.3e)
and `OK`, or says which step is out of range and exits 1."""
import argparse
import json
import sys

p = argparse.ArgumentParser()
p.add_argument("metrics")
p.add_argument("name")
p.add_argument("--min", type=float, default=float("-inf"))
p.add_argument("--max", type=float, default=float("inf"))
a = p.parse_args()

values = []
for line in open(a.metrics):
    if not line.strip():
        continue
    m = json.loads(line)
    if a.name not in m:
        sys.exit(f"step {m.get('step')}: no metric {a.name!r}")
    values.append(m[a.name])
if not values:
    sys.exit(f"{a.metrics}: no steps")
print(f"{a.name} max {max(values):.3e}")
for i, v in enumerate(values):
    if not a.min <= v <= a.max:
        sys.exit(f"step {i}: {a.name} = {v!r} outside [{a.min}, {a.max}]")
print("OK")
