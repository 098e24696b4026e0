#!/usr/bin/env bash
# Data-parallel weak scaling on this machine (benchmarks/data_parallel/dp_scaling.py): flags
# --ranks N --rounds R --steps S --json F go to it. Needs Open MPI's mpirun (openmpi-bin).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v mpirun >/dev/null || "$here/../install_missing.sh" openmpi-bin
# The same environment for every side: no OpenBLAS core/cache overrides.
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
"$here/../../tools/bazel.sh" build //compiler/Driver:stepc
exec /usr/bin/python3 "$here/dp_scaling.py" "$@"
