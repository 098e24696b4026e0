#!/usr/bin/env bash
# Builds runtime_gemm_bench.cpp (or, with --planes, winograd_planes_bench.cpp) with g++ against the
# runtime's GEMM sources (no Bazel) and runs it at 1 and 2 threads, after measuring the FMA peak
# with ../machine_probe.cpp.
# Usage: benchmarks/gemm/run_runtime_gemm.sh [--planes]      (THREADS="1 2" by default)
#   default    the zoo's GEMM shapes, the library's blocks against the runtime's kernels
#   --planes   one Winograd chunk's plane GEMMs: split over the threads against one batch
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
WORK="${WORK:-$(mktemp -d /tmp/stepc_rtgemm.XXXXXX)}"
mkdir -p "$WORK"
THREADS="${THREADS:-1 2}"
BENCH=runtime_gemm_bench
LAYOUTS=""
if [ "${1:-}" = "--planes" ]; then BENCH=winograd_planes_bench; LAYOUTS="0 1 2"; fi
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
CPU="$ROOT/runtime/hal/cpu"
g++ -O3 -std=c++17 -I"$ROOT" "$HERE/$BENCH.cpp" "$CPU/Gemm.cpp" "$CPU/SkinnyGemm.cpp" \
  "$CPU/ThreadPool.cpp" "$CPU/PackedGemm.cpp" -o "$WORK/bench" -ldl -lpthread -lopenblas
g++ -O2 -std=c++17 -pthread "$HERE/../machine_probe.cpp" -o "$WORK/probe"
for t in $THREADS; do
  probe=$("$WORK/probe" 2 | tail -1)
  echo "# probe: $probe"
  peak=$(python3 -c "import json,sys; p=json.loads(sys.argv[1]); print(p['fma_gflops_1'] if $t == 1 else p['fma_gflops_t'])" "$probe")
  if [ -z "$LAYOUTS" ]; then
    STEPC_GEMM=onednn "$WORK/bench" "$t" "$peak"
  else
    for layout in $LAYOUTS; do STEPC_GEMM=onednn "$WORK/bench" "$t" "$peak" "$layout"; done
  fi
done
