#!/usr/bin/python3
"""Plots training runs from their metrics files (`NAME train --metrics RUN.jsonl`).

  tools/plot_metrics.py RUN.jsonl [RUN2.jsonl ...] -o run.png [--smooth 0.9] [--title T]

One panel each for the training loss (raw, faint, and an exponential moving average), the
validation loss (`train --eval-every`), the learning rate, the gradient norm and the throughput
(tokens or examples per second); several runs are overlaid, each named after its file (or
--names a,b). A panel whose metric no run has is left out. Needs python3-matplotlib; it is
installed from Debian when missing (as root), otherwise the command to install it is printed.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys


def ensure_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return
    except ImportError:
        pass
    # Debian's matplotlib is for Debian's python3; another python3 first on PATH (pyenv) lacks it.
    system = "/usr/bin/python3"
    if os.path.realpath(sys.executable) != os.path.realpath(system) and os.path.exists(system):
        os.execv(system, [system] + sys.argv)
    install = ["apt-get", "install", "-y", "-qq", "python3-matplotlib"]
    if os.geteuid() == 0 and shutil.which("apt-get"):
        print("plot_metrics: installing python3-matplotlib", file=sys.stderr)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        if subprocess.call(install, env=env, stdout=subprocess.DEVNULL) == 0:
            return
    sys.exit("plot_metrics: error: needs python3-matplotlib: sudo " + " ".join(install))


def read_run(path):
    rows = []
    try:
        with open(path) as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    sys.exit(f"plot_metrics: error: {path}:{number}: not a JSON object ({e.msg})")
    except OSError as e:
        sys.exit(f"plot_metrics: error: cannot read '{path}': {e.strerror}")
    if not rows:
        sys.exit(f"plot_metrics: error: {path}: no metrics (an empty file)")
    return rows


def series(rows, key):
    xs, ys = [], []
    for r in rows:
        v = r.get(key)
        if isinstance(v, (int, float)):
            xs.append(r.get("step", len(xs)) + 1)  # steps done, as the progress line counts
            ys.append(v)
    return xs, ys


def ema(values, alpha):
    out, acc = [], None
    for v in values:
        acc = v if acc is None else alpha * acc + (1 - alpha) * v
        out.append(acc)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", help="metrics JSONL files")
    p.add_argument("-o", "--output", required=True, help="the image to write (.png, .svg, .pdf)")
    p.add_argument("--smooth", type=float, default=0.9,
                   help="EMA factor of the smoothed loss, in [0, 1) (default 0.9)")
    p.add_argument("--names", help="comma-separated run names (default: the file names)")
    p.add_argument("--title", default="", help="the figure's title")
    a = p.parse_args()
    if not 0 <= a.smooth < 1:
        sys.exit(f"plot_metrics: error: --smooth expects a factor in [0, 1), found {a.smooth}")
    names = a.names.split(",") if a.names else [os.path.basename(r).split(".")[0] for r in a.runs]
    if len(names) != len(a.runs):
        sys.exit(f"plot_metrics: error: --names gives {len(names)} names for {len(a.runs)} runs")
    runs = [read_run(r) for r in a.runs]

    ensure_matplotlib()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [("loss", "train loss"), ("val_loss", "validation loss"), ("lr", "learning rate"),
              ("grad_norm", "gradient norm"), ("tokens_per_s", "tokens (examples) / s")]
    panels = [(k, t) for k, t in panels if any(series(rows, k)[0] for rows in runs)]
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 2.4 * len(panels)), sharex=True,
                             squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, (key, title) in zip(axes[:, 0], panels):
        for i, (name, rows) in enumerate(zip(names, runs)):
            xs, ys = series(rows, key)
            if not xs:
                continue
            c = colors[i % len(colors)]
            if key == "loss":
                ax.plot(xs, ys, color=c, alpha=0.25, linewidth=0.8)
                ax.plot(xs, ema(ys, a.smooth), color=c, label=f"{name} (EMA {a.smooth})")
            else:
                ax.plot(xs, ys, color=c, marker="o" if key == "val_loss" else None,
                        markersize=3, label=name)
        ax.set_ylabel(title)
        ax.grid(alpha=0.3)
        if key == "lr":
            ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 3))
        ax.legend(fontsize=8, loc="best")
    axes[-1, 0].set_xlabel("step")
    if a.title:
        fig.suptitle(a.title)
    fig.tight_layout()
    try:
        fig.savefig(a.output, dpi=110)
    except (OSError, ValueError) as e:
        sys.exit(f"plot_metrics: error: cannot write '{a.output}': {e}")
    print(a.output)


if __name__ == "__main__":
    main()
