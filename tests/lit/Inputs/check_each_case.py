#!/usr/bin/env python3
"""Runs `stepc check` on every `// -----` case of the given files and asserts each one fails
cleanly: exit code 1 (not a signal or an assertion), and a located `file:line:col: error:` line.

usage: check_each_case.py STEPC FILE...
"""
import re
import subprocess
import sys
import tempfile

LOCATED = re.compile(r"^\S+:\d+:\d+: error: ", re.MULTILINE)


def main():
    stepc, files = sys.argv[1], sys.argv[2:]
    failures, cases = 0, 0
    for path in files:
        text = open(path).read()
        for index, case in enumerate(re.split(r"^// -----\s*$", text, flags=re.MULTILINE)):
            if "expected-error" not in case:
                continue
            cases += 1
            with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
                f.write(case)
                f.flush()
                run = subprocess.run([stepc, "check", f.name], capture_output=True, text=True)
            problem = None
            if run.returncode != 1:
                problem = f"exit code {run.returncode}, expected 1"
            elif not LOCATED.search(run.stderr):
                problem = "no file:line:col: error: line"
            if problem:
                failures += 1
                print(f"{path} case {index}: {problem}\n{run.stderr}", file=sys.stderr)
    print(f"{cases} invalid cases checked, {failures} not rejected cleanly")
    if cases == 0:
        print("no cases found", file=sys.stderr)
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
