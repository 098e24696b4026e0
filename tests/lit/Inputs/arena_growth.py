"""Reads `stepc compile --emit=plan` outputs (files given in depth order) and prints each one's
planned arena and its ratio to the first: `arena_growth.py d8.plan d64.plan ...`. With --max R
it exits non-zero unless every ratio is <= R; with --min R unless the last ratio is >= R."""
import re
import sys

args = sys.argv[1:]
limit = lower = None
if "--max" in args:
    i = args.index("--max")
    limit = float(args[i + 1])
    del args[i:i + 2]
if "--min" in args:
    i = args.index("--min")
    lower = float(args[i + 1])
    del args[i:i + 2]
arenas = []
for path in args:
    m = re.search(r"arena_bytes = (\d+)", open(path).read())
    if not m:
        sys.exit(f"{path}: no `// memory: {{arena_bytes = ...}}` line")
    arenas.append(int(m.group(1)))
ratios = [a / arenas[0] for a in arenas]
for path, a, r in zip(args, arenas, ratios):
    print(f"{path}: arena {a} bytes, {r:.3f}x the first")
if limit is not None and max(ratios) > limit:
    sys.exit(f"FAIL: the arena grows {max(ratios):.3f}x > {limit}x")
if lower is not None and ratios[-1] < lower:
    sys.exit(f"FAIL: the arena grows only {ratios[-1]:.3f}x < {lower}x")
print("OK")
