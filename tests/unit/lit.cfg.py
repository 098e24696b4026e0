# lit runs the gtest units built by Bazel (bazel-bin/tests/unit/*_test), one lit test per case,
# so a single summary counts every test of the project.
import os

import lit.formats

config.name = "stepc-unit"
repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
config.test_source_root = os.path.join(repo, "bazel-bin", "tests", "unit")
config.test_exec_root = config.test_source_root
# lit descends into the subfolders (one per area) by itself.
config.test_format = lit.formats.GoogleTest(".", "_test")

# Bazel's runfiles trees and object folders hold second copies of the test binaries: skip them.
config.excludes = []
for root, dirs, _ in os.walk(config.test_source_root):
    config.excludes += [d for d in dirs if d.endswith(".runfiles") or d == "_objs"]
    dirs[:] = [d for d in dirs if not d.endswith(".runfiles") and d != "_objs"]
