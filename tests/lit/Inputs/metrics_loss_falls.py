#!/usr/bin/env python3
"""Checks that a training run's loss fell: the mean loss of the last N steps of a metrics JSONL
is at least MIN_DROP below the mean of the first N. Prints both means; exits 1 if not."""
import argparse
import json
import sys

p = argparse.ArgumentParser()
p.add_argument("metrics")
p.add_argument("--window", type=int, default=10)
p.add_argument("--min-drop", type=float, required=True)
a = p.parse_args()
losses = [json.loads(line)["loss"] for line in open(a.metrics) if line.strip()]
if len(losses) < 2 * a.window:
    sys.exit(f"{a.metrics}: {len(losses)} steps, need at least {2 * a.window}")
first = sum(losses[:a.window]) / a.window
last = sum(losses[-a.window:]) / a.window
print(f"loss: first {a.window} steps {first:.4f}, last {a.window} steps {last:.4f}, "
      f"drop {first - last:.4f} (required {a.min_drop})")
if first - last < a.min_drop:
    print("LOSS DID NOT FALL")
    sys.exit(1)
print("LOSS FELL")
