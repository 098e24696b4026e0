#!/usr/bin/env bash
# Installs the Debian packages stepc builds with, if any are missing. Idempotent: does nothing
# (and needs no root) when everything is present. The LLVM version comes from
# third_party/versions.bzl, the one place it is pinned.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
llvm_version="$(sed -n 's/^LLVM_VERSION = "\([0-9]*\)"/\1/p' "$repo/third_party/versions.bzl")"

packages=(
  "llvm-${llvm_version}-dev" "llvm-${llvm_version}-tools" "libmlir-${llvm_version}-dev"
  "mlir-${llvm_version}-tools" bazel-bootstrap libabsl-dev libgtest-dev python3 g++
  # GEMMs of compiled training executables: oneDNN where it loads (dlopen libdnnl.so.2), else
  # OpenBLAS (linked statically: libopenblas.a).
  libopenblas-pthread-dev libdnnl2
  # lld links the training executables (about 4x faster than GNU ld; Linker.cpp falls back).
  "lld-${llvm_version}"
  # tools/plot_metrics.py (the main job's picture of the run, and its test).
  python3-matplotlib
)
# `tools/setup.sh --tests` (the test command): also the PyTorch parity test's independent
# reference (tests/lit/executable/pytorch_parity.test) and Open MPI's mpirun for the
# data-parallel runs (tests/lit/executable/data_parallel.test; executables load its libmpi
# with dlopen, so nothing is built against it).
if [[ ${1-} == --tests ]]; then
  packages+=(python3-torch openmpi-bin)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "setup: installing missing Debian packages: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO=sudo
  else
    echo "setup: error: not root. Run this first, then retry:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
else
  SUDO=
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
echo "setup: done"
