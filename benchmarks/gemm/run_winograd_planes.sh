#!/usr/bin/env bash
# Builds winograd_planes_bench.cpp with g++ against the runtime's GEMM sources (no Bazel) and runs
# the forward, input-gradient and weight-gradient planes at 1 and 2 threads, after measuring the
# FMA peak with ../machine_probe.cpp. STEPC_GEMM=onednn: the "lib" ways are the step's library.
# Usage: benchmarks/gemm/run_winograd_planes.sh        (THREADS="1 2" by default)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
WORK="${WORK:-$(mktemp -d /tmp/stepc_planes.XXXXXX)}"
mkdir -p "$WORK"
THREADS="${THREADS:-1 2}"
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
CPU="$ROOT/runtime/hal/cpu"
g++ -O3 -std=c++17 -I"$ROOT" "$HERE/winograd_planes_bench.cpp" "$CPU/Gemm.cpp" "$CPU/SkinnyGemm.cpp" \
  "$CPU/ThreadPool.cpp" "$CPU/PackedGemm.cpp" -o "$WORK/bench" -ldl -lpthread -lopenblas
g++ -O2 -std=c++17 -pthread "$HERE/../machine_probe.cpp" -o "$WORK/probe"
for t in $THREADS; do
  probe=$("$WORK/probe" 2 | tail -1)
  echo "# probe: $probe"
  peak=$(python3 -c "import json,sys; p=json.loads(sys.argv[1]); print(p['fma_gflops_1'] if $t == 1 else p['fma_gflops_t'])" "$probe")
  for layout in 0 1 2; do STEPC_GEMM=onednn "$WORK/bench" "$t" "$peak" "$layout"; done
done
