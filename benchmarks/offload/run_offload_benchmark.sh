#!/usr/bin/env bash
# Planned offload vs the in-memory step vs synchronous offload (benchmarks/offload/offload_bench.py):
# flags --rounds R --steps S --threads T --json F go to it. The host tier goes to
# $STEPC_OFFLOAD_DIR (default /var/tmp): it must be a disk, not tmpfs, for direct I/O.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# The same environment for every side: no OpenBLAS core/cache overrides.
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
"$here/../../tools/bazel.sh" build //compiler/Driver:stepc
exec /usr/bin/python3 "$here/offload_bench.py" "$@"
