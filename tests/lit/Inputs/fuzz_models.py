#!/usr/bin/env python3
"""Mutates the zoo's model files (deleted, duplicated and rewritten lines, injected tokens) and
runs `stepc check` and `stepc compile --emit=train` on each mutant, and a mutant that checks
clean is compiled to a training executable too: every run must exit 0 or 1, and every exit 1
must print an error located in the mutant (`FILE:LINE:COL: error:`). Deterministic from the seed.

usage: fuzz_models.py STEPC SEED COUNT MODEL[:CONFIG]...   (CONFIG: the model's --config)
"""
import os
import random
import re
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
    specs = [m.rsplit(":", 1) if ":" in m else [m, ""] for m in models]
    sources = [(open(path).read(), config) for path, config in specs]
    bad = executables = 0
    workdir = tempfile.mkdtemp()
    for it in range(count):
        source, config = rng.choice(sources)
        text = mutate(rng, source)
        flags = [f"--config={config}"] if config else []
        with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
            f.write(text)
            f.flush()
            located = re.compile(re.escape(f.name) + r":\d+:\d+: error: ")
            exe = os.path.join(workdir, f"m{it}")
            runs = [["check", f.name], ["compile", f.name, "--emit=train", "-o", "/dev/null"]]
            for i, args in enumerate(runs):
                run = subprocess.run([stepc] + args + flags, capture_output=True, text=True,
                                     timeout=300)
                if run.returncode not in (0, 1) or (run.returncode == 1 and not located.search(run.stderr)):
                    bad += 1
                    print(f"case {it} ({' '.join(args[:2])}): exit {run.returncode}\n"
                          f"{run.stderr[-500:]}\n--- input:\n{text}", file=sys.stderr)
                # What checks clean must also compile to an executable, or be refused where.
                if i == 0 and run.returncode == 0:
                    runs.append(["compile", f.name, "-o", exe])
            if os.path.exists(exe):
                executables += 1
                os.unlink(exe)
    print(f"{count} mutants, {bad} bad runs")
    print(f"{executables} compiled to executables", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
