#!/usr/bin/python3
"""Renders a CPU benchmark's results (`cpu_vs_pytorch.py --json FILE`) as a figure.

  benchmarks/plot_benchmark.py RESULTS.json -o bench.png

One row per model: the median step time of each side (eager, traced, stepc; with the speedup
of stepc over each PyTorch side written on its bar) and each side's peak RSS. A model run at
several depths (`cpu_vs_pytorch.py --depths 4,8,16`, results keyed "MODEL@depth=N") gets one row
of lines instead: step time vs depth and peak RSS vs depth, a line per side. Needs
python3-matplotlib (tools/plot_metrics.py installs it the same way).
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from plot_metrics import ensure_matplotlib  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("results", help="the JSON cpu_vs_pytorch.py --json wrote")
    p.add_argument("-o", "--output", required=True)
    a = p.parse_args()
    try:
        results = json.load(open(a.results))
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"plot_benchmark: error: cannot read '{a.results}': {e}")
    if not isinstance(results, dict) or not [k for k in results if k != "machine"]:
        sys.exit(f"plot_benchmark: error: {a.results}: expected {{model: {{side: result}}}}")
    ensure_matplotlib()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = {k: v for k, v in results.items() if k != "machine"}  # the probe's numbers
    # "MODEL@depth=N" entries: one sweep per model.
    sweeps, single = {}, {}
    for key, sides in results.items():
        model, _, depth = key.partition("@depth=")
        if depth.isdigit():
            sweeps.setdefault(model, {})[int(depth)] = sides
        else:
            single[key] = sides
    rows = len(single) + len(sweeps)
    fig, axes = plt.subplots(rows, 2, figsize=(9, 2.8 * rows), squeeze=False)
    for row, (model, by_depth) in enumerate(sweeps.items(), start=len(single)):
        depths = sorted(by_depth)
        names = sorted({s for d in depths for s in by_depth[d]})
        for name in names:
            color = {"stepc": "#1f77b4", "eager": "#888888", "traced": "#d62728"}.get(name)
            pts = [(d, by_depth[d][name]) for d in depths if name in by_depth[d]]
            ms = [(d, r["ms"]) for d, r in pts if isinstance(r.get("ms"), (int, float))
                  and not math.isnan(r["ms"])]
            rss = [(d, r["rss"]) for d, r in pts if isinstance(r.get("rss"), (int, float))]
            if ms:
                axes[row, 0].plot(*zip(*ms), marker="o", label=name, color=color)
            if rss:
                axes[row, 1].plot(*zip(*rss), marker="o", label=name, color=color)
        for col, (ylabel, title) in enumerate((("ms / step (median)", model + ": step time vs depth"),
                                               ("peak RSS MiB", model + ": memory vs depth"))):
            ax = axes[row, col]
            ax.set_xlabel("depth (layers)")
            ax.set_ylabel(ylabel)
            ax.set_title(title)
            ax.set_xticks(depths)
            ax.legend(fontsize=8)
    for row, (model, sides) in enumerate(single.items()):
        names = [s for s in sides if isinstance(sides[s].get("ms"), (int, float))
                 and not math.isnan(sides[s]["ms"])]
        ms = [sides[s]["ms"] for s in names]
        rss = [sides[s].get("rss") or 0 for s in names]
        colors = ["#888888" if s != "stepc" else "#1f77b4" for s in names]
        ax = axes[row, 0]
        bars = ax.bar(names, ms, color=colors)
        ax.set_ylabel("ms / step (median)")
        ax.set_title(model)
        stepc = sides.get("stepc", {}).get("ms")
        for name, bar, value in zip(names, bars, ms):
            label = f"{value:.0f}"
            if stepc and name != "stepc":
                label += f"\n(stepc {value / stepc:.2f}x)"
            ax.annotate(label, (bar.get_x() + bar.get_width() / 2, value), ha="center",
                        va="bottom", fontsize=8)
        ax.margins(y=0.25)
        ax = axes[row, 1]
        ax.bar(names, rss, color=colors)
        ax.set_ylabel("peak RSS MiB")
        ax.set_title(model + ": memory")
    fig.tight_layout()
    fig.savefig(a.output, dpi=110)
    print(a.output)


if __name__ == "__main__":
    main()
