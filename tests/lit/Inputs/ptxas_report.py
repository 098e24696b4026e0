#!/usr/bin/env python3
"""Registers and spills per kernel, from `ptxas -v` output; fails on spills or register use
above the budgets.

Usage: ptxas_report.py LOG [--max-spill-bytes N] [--max-registers N] [--min-kernels N]

ptxas -v prints, per kernel:
  ptxas info    : Compiling entry function 'kernel_3_generic' for 'sm_90'
  ptxas info    : Function properties for kernel_3_generic
      0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  ptxas info    : Used 18 registers, used 0 barriers, 400 bytes cmem[0]
Prints one line per kernel and a summary, then OK or FAIL lines.
"""
import argparse
import re
import sys


def parse(text):
    kernels = {}
    current = None
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            current = m.group(1)
            kernels[current] = {"registers": None, "spill_stores": 0, "spill_loads": 0, "stack": 0}
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            kernels[current].update(stack=int(m.group(1)), spill_stores=int(m.group(2)),
                                    spill_loads=int(m.group(3)))
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m:
            kernels[current]["registers"] = int(m.group(1))
    return kernels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--max-spill-bytes", type=int, default=0)
    ap.add_argument("--max-registers", type=int, default=128)
    ap.add_argument("--min-kernels", type=int, default=1)
    args = ap.parse_args()
    kernels = parse(open(args.log).read())
    failures = []
    if len(kernels) < args.min_kernels:
        failures.append(f"{len(kernels)} kernels in the log, expected at least {args.min_kernels}")
    for name, k in sorted(kernels.items()):
        if k["registers"] is None:
            failures.append(f"{name}: no register count in the log")
            continue
        print(f"{name}: {k['registers']} registers, {k['spill_stores']} B spill stores, "
              f"{k['spill_loads']} B spill loads, {k['stack']} B stack")
        spill = k["spill_stores"] + k["spill_loads"]
        if spill > args.max_spill_bytes:
            failures.append(f"{name}: {spill} bytes of spills (budget {args.max_spill_bytes})")
        if k["registers"] > args.max_registers:
            failures.append(f"{name}: {k['registers']} registers (budget {args.max_registers})")
    regs = [k["registers"] for k in kernels.values() if k["registers"] is not None]
    if regs:
        print(f"kernels {len(kernels)}, registers max {max(regs)}, "
              f"spill bytes total {sum(k['spill_stores'] + k['spill_loads'] for k in kernels.values())}")
    for f in failures:
        print("FAIL: " + f)
    print("OK" if not failures else "FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
