# lit runs the gtest units built by Bazel (bazel-bin/tests/unit/*_test), one lit test per case,
# so a single summary counts every test of the project.
import os

import lit.formats

config.name = "stepc-unit"
repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
config.test_source_root = os.path.join(repo, "bazel-bin", "tests", "unit")
config.test_exec_root = config.test_source_root
# Unit tests live in tests/unit and in one subfolder per area.
config.test_format = lit.formats.GoogleTest(".;gradients;training", "_test")
