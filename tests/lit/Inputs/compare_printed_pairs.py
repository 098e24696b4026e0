#!/usr/bin/env python3
"""Compares consecutive pairs of tensors printed by mlir-cpu-runner's printMemrefF32.

The program prints the value under test, then its reference, for each case. Each pair must
have the same sizes and agree within `tolerance` times the pair's largest magnitude. Prints
"N pairs agree (worst relative difference X)" and exits 0, or names the first pair that does
not and exits 1.
"""
import argparse
import re
import sys


def tensors(text):
    out = []
    for chunk in text.split("Unranked Memref")[1:]:
        sizes = [int(s) for s in re.search(r"sizes = \[([0-9, ]*)\]", chunk).group(1).split(",") if s.strip()]
        data = chunk.split("data =", 1)[1]
        values = [float(v) for v in re.findall(r"[-+]?(?:nan|inf|\d+\.?\d*(?:[eE][-+]?\d+)?)", data)]
        out.append((sizes, values))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("output")
    p.add_argument("--pairs", type=int, required=True, help="how many pairs the program prints")
    p.add_argument("--tolerance", type=float, required=True)
    a = p.parse_args()
    found = tensors(open(a.output).read())
    if len(found) != 2 * a.pairs:
        print(f"expected {2 * a.pairs} printed tensors, found {len(found)}")
        return 1
    worst = 0.0
    for n in range(a.pairs):
        (s1, v1), (s2, v2) = found[2 * n], found[2 * n + 1]
        if s1 != s2 or len(v1) != len(v2):
            print(f"pair {n}: sizes {s1} against {s2}")
            return 1
        scale = max(max(abs(x) for x in v1 + v2), 1e-30)
        diff = max(abs(x - y) for x, y in zip(v1, v2)) / scale
        worst = max(worst, diff)
        if not diff <= a.tolerance:
            print(f"pair {n} (sizes {s1}): relative difference {diff:.3g} over {a.tolerance}")
            return 1
    print(f"{a.pairs} pairs agree (worst relative difference {worst:.3g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
