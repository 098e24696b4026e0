# lit configuration for stepc's FileCheck tests (tests/lit) and model checks.
# The tools come from the Bazel build: set STEPC_BIN_DIR to override where they are looked up.
import os

import lit.formats

config.name = "stepc"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["Inputs", "lit.cfg.py"]

repo = os.path.abspath(os.path.join(config.test_source_root, "..", ".."))
bin_dir = os.environ.get("STEPC_BIN_DIR", os.path.join(repo, "bazel-bin", "compiler", "Driver"))
llvm_bin = os.environ.get("LLVM_BIN_DIR", "/usr/lib/llvm-19/bin")

config.substitutions.append(("%stepc-opt", os.path.join(bin_dir, "stepc-opt")))
config.substitutions.append(("%stepc", os.path.join(bin_dir, "stepc")))
config.substitutions.append(("%models", os.path.join(repo, "models")))
config.environment["PATH"] = os.pathsep.join([llvm_bin, config.environment.get("PATH", "/usr/bin:/bin")])
