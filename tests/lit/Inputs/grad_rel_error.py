#!/usr/bin/python3
"""The relative L2 distance of two gradient files (train --save-grads), over all tensors.

  grad_rel_error.py REF.safetensors OUT.safetensors --max E [--min M]

Prints `grad rel. L2 error X` and `OK` when M <= X <= E (so a test can also require a
difference, e.g. that a less accurate variant really is less accurate), else `OUT OF RANGE`.
Every tensor of REF must be in OUT with the same size.
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_runs import read_safetensors  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ref")
    ap.add_argument("out")
    ap.add_argument("--max", type=float, required=True)
    ap.add_argument("--min", type=float, default=0.0)
    a = ap.parse_args()
    ref, out = read_safetensors(a.ref), read_safetensors(a.out)
    num = den = 0.0
    for name, r in ref.items():
        if name not in out or len(out[name]) != len(r):
            sys.exit(f"{name}: missing or of another size in {a.out}")
        num += sum((x - y) ** 2 for x, y in zip(out[name], r))
        den += sum(y * y for y in r)
    if den == 0:
        sys.exit("the reference gradients are all zero")
    err = math.sqrt(num / den)
    print(f"grad rel. L2 error {err:.3e}")
    print("OK" if a.min <= err <= a.max else "OUT OF RANGE")


if __name__ == "__main__":
    main()
