#!/usr/bin/python3
"""Generation speed of a stepc executable, incrementally and recomputing the whole window.

`NAME sample` feeds one position per token when the model carries @sample_step (byte_lm_residual: its
causal convolutions' and running sums' state), or recomputes the whole window for each token
(`--full-window`, and every model whose ops mix positions, e.g. attention). This benchmark
compiles the model, trains it briefly (so the logits are not flat and the token comparison
means something), then runs both ways alternately, `--repeats` times each, and prints the median
tokens/s of each, their ratio, and whether both produced the same text (they must).

  benchmarks/sample_speed.py                          # byte_lm_residual_small, 400 tokens, 5 pairs
  benchmarks/sample_speed.py --tokens 1000 --samples 16 --threads 2

The environment is the same for both ways (one executable); OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE
are unset.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPC = os.path.join(REPO, "bazel-bin", "compiler", "Driver", "stepc")
MODELS = {
    "byte_lm_residual_small": [os.path.join(REPO, "models", "byte_lm_residual.mlir"), "--config=small"],
    "byte_lm_residual_tiny": [os.path.join(REPO, "models", "byte_lm_residual.mlir"), "--config=tiny"],
    "byte_lm_residual": [os.path.join(REPO, "models", "byte_lm_residual.mlir")],
}
RATE = re.compile(r"\(([0-9.]+) tokens/s; (.*)\)$")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="byte_lm_residual_small", choices=sorted(MODELS))
    ap.add_argument("--tokens", type=int, default=400)
    ap.add_argument("--samples", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--train-steps", type=int, default=30)
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, args.model)
        subprocess.run([STEPC, "compile", *MODELS[args.model], "-o", exe], check=True,
                       capture_output=True, env=env)
        subprocess.run([exe, "train", "--steps", str(args.train_steps), "--threads",
                        str(args.threads), "--checkpoint-dir", os.path.join(tmp, "ck")],
                       check=True, capture_output=True, env=env)
        info = subprocess.run([exe, "info"], check=True, capture_output=True, text=True).stdout
        print("\n".join(l for l in info.splitlines() if l.startswith("sample")))
        base = [exe, "sample", "--checkpoint-dir", os.path.join(tmp, "ck"), "--prompt", "The ",
                "--tokens", str(args.tokens), "--samples", str(args.samples), "--temperature",
                "0.8", "--seed", "1", "--threads", str(args.threads)]
        rates = {"incremental": [], "full window": []}
        texts = {}
        for _ in range(args.repeats):
            for way, extra in (("incremental", []), ("full window", ["--full-window"])):
                run = subprocess.run(base + extra, capture_output=True, env=env)
                if run.returncode != 0:
                    sys.exit(f"{way}: {run.stderr.decode(errors='replace')}")
                m = RATE.search(run.stderr.decode().strip().splitlines()[-1])
                rates[way].append(float(m.group(1)))
                texts.setdefault(way, run.stdout)
                if texts[way] != run.stdout:
                    sys.exit(f"{way}: two runs of the same seed differ")
        inc, full = (statistics.median(rates[w]) for w in ("incremental", "full window"))
        print(f"{args.model}: {args.tokens} tokens x {args.samples} sample(s), {args.threads} "
              f"thread(s), median of {args.repeats} alternating runs each")
        for way in rates:
            print(f"  {way:12s} {statistics.median(rates[way]):9.1f} tokens/s "
                  f"(min {min(rates[way]):.1f}, max {max(rates[way]):.1f})")
        print(f"  incremental / full window: {inc / full:.1f}x")
        same = texts["incremental"] == texts["full window"]
        print(f"  same text both ways: {'yes' if same else 'NO'}")
        if not same:
            sys.exit(1)


if __name__ == "__main__":
    main()
