#!/usr/bin/env python3
"""Reads `stepc run` output and asserts the loss falls: the mean of the last N losses is below
the mean of the first N by at least MARGIN.  usage: loss_falls.py FILE N MARGIN"""
import sys

path, n, margin = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
losses = []
for line in open(path):
    fields = line.split()
    if fields and fields[0] == "step":
        losses.append(float(fields[fields.index("loss") + 1]))
if len(losses) < 2 * n:
    sys.exit(f"expected at least {2 * n} steps, found {len(losses)}")
first, last = sum(losses[:n]) / n, sum(losses[-n:]) / n
print(f"first {n} mean {first:.4f}, last {n} mean {last:.4f}, drop {first - last:.4f}")
if not first - last >= margin:
    sys.exit(f"loss did not fall by {margin}: {first:.4f} -> {last:.4f}")
print("loss falls")
