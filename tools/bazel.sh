#!/usr/bin/env bash
# Runs Bazel with the project's disk cache at a fixed path outside the checkout, so a fresh
# clone (CI) reuses earlier build outputs instead of recompiling MLIR-heavy files.
set -euo pipefail
cache="${STEPC_BAZEL_CACHE:-$HOME/.cache/stepc/bazel-disk}"
mkdir -p "$cache"
cmd="$1"; shift
exec bazel "$cmd" --disk_cache="$cache" "$@"
