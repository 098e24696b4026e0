#!/usr/bin/env python3
"""Prints a metrics JSONL file (an executable's --metrics) as `stepc run` prints its steps:
`step N loss X grad_norm Y lr Z [name value ...]`, six decimals, extra metrics in file order.
Timing fields (tokens_per_s, step_ms) are left out: they are not the step's numbers."""
import json
import sys

for line in open(sys.argv[1]):
    if not line.strip():
        continue
    m = json.loads(line)
    out = [f"step {m['step']}"] + [f"{k} {m[k]:.6f}" for k in ("loss", "grad_norm", "lr")]
    out += [f"{k} {v:.6f}" for k, v in m.items()
            if k not in ("step", "loss", "grad_norm", "lr", "tokens_per_s", "step_ms")]
    print(" ".join(out))
