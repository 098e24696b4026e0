#!/usr/bin/env bash
# One MoE layer vs the dense layer of equal active FLOPs, and vs PyTorch's MoE (same T, D,
# dtype, threads; one run). Flags go to benchmarks/moe/moe_vs_dense.py: --experts 8,64 --k 1,2
# --hidden 128,512 --routing token,expert --skew uniform,skewed --rounds N --steps N --json F --plot F.png
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
missing=()
/usr/bin/python3 -c 'import torch' 2>/dev/null || missing+=(python3-torch)
dpkg -s libopenblas0-pthread >/dev/null 2>&1 || missing+=(libopenblas0-pthread)
"$here/../install_missing.sh" ${missing[@]+"${missing[@]}"}
# The same environment for every side: no OpenBLAS core/cache overrides.
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
"$here/../../tools/bazel.sh" build //compiler/Driver:stepc
exec /usr/bin/python3 "$here/moe_vs_dense.py" "$@"
