#!/usr/bin/env bash
# stepc vs PyTorch on the CPU (same model, batch, threads; one run). Flags go to
# benchmarks/cpu_vs_pytorch.py: --model byte_lm_residual_small|byte_lm_residual|both --threads T --steps N
# --warmup W --stepc-timeout SEC --sides eager,traced,stepc --json FILE
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# Dependencies: PyTorch from Debian and the pthread OpenBLAS.
missing=()
/usr/bin/python3 -c 'import torch' 2>/dev/null || missing+=(python3-torch)
dpkg -s libopenblas0-pthread >/dev/null 2>&1 || missing+=(libopenblas0-pthread)
"$here/install_missing.sh" ${missing[@]+"${missing[@]}"}

# The same environment for both sides: no OpenBLAS core/cache overrides.
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE

exec /usr/bin/python3 "$here/cpu_vs_pytorch.py" "$@"
