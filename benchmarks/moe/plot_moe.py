#!/usr/bin/python3
"""Renders the MoE benchmark's results (`moe_vs_dense.py --json FILE`) as a figure.

  benchmarks/moe/plot_moe.py RESULTS.json -o moe.png

Left: the step time of each configuration (routing, skew, E, k, h) for stepc's MoE, the dense
layer of equal active FLOPs and PyTorch's fastest MoE, R_dense = t_MoE / t_dense written on the
MoE bar. Right: the MoE's routing share and its arena against the dense layer's. Needs
python3-matplotlib (tools/plot_metrics.py installs it the same way).
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from plot_metrics import ensure_matplotlib  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("results", help="the JSON moe_vs_dense.py --json wrote")
    p.add_argument("-o", "--output", required=True)
    a = p.parse_args()
    try:
        rows = json.load(open(a.results))["results"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as e:
        sys.exit(f"plot_moe: error: cannot read results from '{a.results}': {e}")
    if not rows:
        sys.exit(f"plot_moe: error: {a.results} has no results")
    ensure_matplotlib()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['routing'][0]}c {r['skew'][:4]} E{r['E']} k{r['k']} h{r['h']}" for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 0.32 * len(rows) + 1.8))
    y = range(len(rows))
    h = 0.27
    left.barh([i - h for i in y], [r["moe_ms"] for r in rows], h, label="stepc MoE")
    left.barh(list(y), [r["dense_ms"] for r in rows], h, label="stepc dense (k*h)")
    torch = [r["torch_best_ms"] if not math.isnan(r["torch_best_ms"]) else 0 for r in rows]
    left.barh([i + h for i in y], torch, h, label="PyTorch MoE (best form)")
    for i, r in enumerate(rows):
        left.text(r["moe_ms"], i - h, f" {r['r_dense']:.2f}x", va="center", fontsize=7)
    left.set_yticks(list(y), labels, fontsize=7)
    left.invert_yaxis()
    left.set_xlabel("ms per step (forward + backward + AdamW)")
    left.legend(fontsize=7, loc="lower right")
    left.set_title("step time; R_dense on the MoE bar", fontsize=9)
    right.barh([i - h / 2 for i in y], [100 * r["routing_share"] for r in rows], h,
               label="routing share of kernel time (%)")
    right.barh([i + h / 2 for i in y], [100 * r["arena_moe_mib"] / r["arena_dense_mib"] for r in rows],
               h, label="arena MoE / dense (%)")
    right.set_yticks(list(y), [""] * len(rows))
    right.invert_yaxis()
    right.axvline(10, color="gray", lw=0.5, ls="--")
    right.legend(fontsize=7, loc="lower right")
    right.set_title("routing share and activation memory", fontsize=9)
    fig.tight_layout()
    fig.savefig(a.output, dpi=120)
    print(f"plot: {a.output}")


if __name__ == "__main__":
    main()
