#!/usr/bin/env python3
"""Mutates the zoo's model files (deleted, duplicated and rewritten lines, injected tokens) and
runs `stepc check` and `stepc compile --emit=train` on each mutant: every run must exit 0 or 1,
and every exit 1 must print a located `file:line:col: error:`. Deterministic from the seed.

usage: fuzz_models.py STEPC SEED COUNT MODEL...
"""
import random
import subprocess
import sys
import tempfile

TOKENS = ["%x", "step.add", "step.repeat", "[", "]", "(", ")", "{", "}", "=", ",", "0", "-1",
          "999999999999", "f32", "i32", "bf16", "step.yield", "step.loss", "\"w\"", "@f", "dims",
          "over", "reverse", "backward", ":", "tensor<2x3xf32>", "step.param", "step.input",
          "1.0e400", "nan", "step.custom_grad", "step.call", "step.func"]


def mutate(rng, text):
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        r = rng.random()
        if r < 0.3:
            del lines[i]
        elif r < 0.6:
            words = lines[i].split(" ")
            words[rng.randrange(len(words))] = rng.choice(TOKENS)
            lines[i] = " ".join(words)
        elif r < 0.8:
            lines.insert(i, rng.choice(lines))
        else:
            k = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:k] + rng.choice(TOKENS) + lines[i][k:]
    return "\n".join(lines)


def main():
    stepc, seed, count, models = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    rng = random.Random(seed)
    sources = [open(m).read() for m in models]
    bad = 0
    for it in range(count):
        text = mutate(rng, rng.choice(sources))
        with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
            f.write(text)
            f.flush()
            for args in (["check", f.name], ["compile", f.name, "--emit=train", "-o", "/dev/null"]):
                run = subprocess.run([stepc] + args, capture_output=True, text=True, timeout=60)
                if run.returncode not in (0, 1) or (run.returncode == 1 and ": error: " not in run.stderr):
                    bad += 1
                    print(f"case {it} ({args[0]}): exit {run.returncode}\n{run.stderr[-500:]}\n--- input:\n{text}",
                          file=sys.stderr)
    print(f"{count} mutants, {bad} bad runs")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
