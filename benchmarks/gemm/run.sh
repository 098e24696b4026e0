#!/usr/bin/env bash
# Builds and runs gemm_bench.cpp against OpenBLAS (pthread), BLIS (pthread) and oneDNN in one run,
# at 1 and 2 threads, and prints GFLOP/s per library with the ratio to OpenBLAS from the same run.
# Also tries static link lines for each library and records which work.
#
# Usage: benchmarks/gemm/run.sh            (plain g++, no bazel)
#   WORK=/tmp/dir   where binaries and raw results go (default: a fresh mktemp dir)
#   THREADS="1 2"   thread counts to run
#   REPS=5          timed repetitions per case (median reported; minimum 5)
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
WORK="${WORK:-$(mktemp -d /tmp/stepc_gemm.XXXXXX)}"
THREADS="${THREADS:-1 2}"
REPS="${REPS:-5}"
mkdir -p "$WORK"
cd "$WORK"

# OpenBLAS must pick its own kernel for this CPU, with its own cache sizes.
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE OPENBLAS_VERBOSE GOTO_NUM_THREADS

ML=/usr/lib/x86_64-linux-gnu
OB_INC=/usr/include/x86_64-linux-gnu/openblas-pthread
OB_LIB=$ML/openblas-pthread
BLIS_LIB=$ML/blis-pthread
BLIS_INC=/usr/include/x86_64-linux-gnu/blis-pthread
CXX="${CXX:-g++}"
CXXFLAGS="-O2 -std=c++17"

# ---- 1. install what is missing -------------------------------------------------------------
# libblis-dev alone pulls the OpenMP flavour; the pthread headers/archive are in libblis-pthread-dev.
PKGS="libopenblas-pthread-dev libblis-dev libblis4-pthread libblis-pthread-dev libdnnl-dev"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing:$missing"
    DEBIAN_FRONTEND=noninteractive apt-get install -y $missing >"$WORK/apt.log" 2>&1 ||
      { echo "apt-get failed, see $WORK/apt.log"; }
  else
    echo "missing packages; run:  sudo apt-get install -y$missing   (continuing with what exists)"
  fi
fi

# ---- 2. build (dynamic binaries used for timing) ---------------------------------------------
built=""
build() {  # name, then compiler/linker args
  local name=$1; shift
  if $CXX $CXXFLAGS "$HERE/gemm_bench.cpp" -o "gb_$name" "$@" 2>"build_$name.log"; then
    built="$built $name"
  else
    echo "build of $name failed (see $WORK/build_$name.log)"
  fi
}
[ -f $OB_INC/cblas.h ] && build openblas -DBACKEND_OPENBLAS -I$OB_INC -L$OB_LIB -lopenblas -Wl,-rpath,$OB_LIB -lpthread
# Link the pthread build of BLIS explicitly (libblis.so is an alternatives link otherwise).
[ -f $BLIS_INC/blis.h ] && [ -f $BLIS_LIB/libblis.so.4 ] &&
  build blis -DBACKEND_BLIS -I$BLIS_INC $BLIS_LIB/libblis.so.4 -Wl,-rpath,$BLIS_LIB -lpthread -lm
[ -f /usr/include/dnnl.h ] && build onednn -DBACKEND_DNNL -ldnnl -lpthread
echo "built:$built   (work dir: $WORK)"

# ---- 3. static link checks --------------------------------------------------------------------
static_try() {  # label, backend macro, include flags, then link args
  local label=$1 macro=$2 inc=$3; shift 3
  $CXX $CXXFLAGS -c -D$macro $inc "$HERE/gemm_bench.cpp" -o "st_$label.o" 2>/dev/null || {
    printf "%-16s compile failed\n" "$label" >>static.txt; return; }
  if $CXX "st_$label.o" "$@" -o "st_$label" 2>"st_$label.log"; then
    local deps
    deps=$(ldd "st_$label" 2>&1 | awk '{print $1}' | grep -Ev 'vdso|ld-linux|not' | tr '\n' ' ')
    if OPENBLAS_NUM_THREADS=2 BLIS_NUM_THREADS=2 OMP_NUM_THREADS=2 ./"st_$label" 2 check >"st_$label.run" 2>&1; then
      res="links+runs OK"; else res="links, check FAILED"; fi
    printf "%-16s %-20s size=%sMB  so-deps: %s\n   link: g++ x.o %s\n" "$label" "$res" \
      "$(( $(stat -c %s "st_$label") / 1048576 ))" "${deps:-none (fully static)}" "$*" >>static.txt
  else
    printf "%-16s LINK FAILED: %s\n   link: g++ x.o %s\n" "$label" \
      "$(grep -m1 -E 'undefined|cannot find' "st_$label.log" | cut -c1-150)" "$*" >>static.txt
  fi
}
: >static.txt
if [ -f $OB_LIB/libopenblas.a ]; then
  static_try ob_a BACKEND_OPENBLAS "-I$OB_INC" $OB_LIB/libopenblas.a -lpthread
  static_try ob_full BACKEND_OPENBLAS "-I$OB_INC" -static $OB_LIB/libopenblas.a -lpthread
fi
BLIS_A=$(ls $BLIS_LIB/libblis.a 2>/dev/null | head -1)
if [ -n "$BLIS_A" ]; then
  static_try blis_a BACKEND_BLIS "-I$BLIS_INC" "$BLIS_A" -lpthread -lm
  static_try blis_full BACKEND_BLIS "-I$BLIS_INC" -static "$BLIS_A" -lpthread -lm
else
  echo "blis             no libblis.a found in $BLIS_LIB" >>static.txt
fi
DNNL_A=$(ls $ML/libdnnl.a 2>/dev/null | head -1)
if [ -n "$DNNL_A" ]; then
  static_try dnnl_a BACKEND_DNNL "" "$DNNL_A" -fopenmp -lpthread
else
  echo "onednn           no libdnnl.a shipped (only: $(ls $ML/libdnnl.so* 2>/dev/null | tr '\n' ' '))" >>static.txt
fi

# ---- 4. run everything in one run -------------------------------------------------------------
: >results.txt
# BLIS 0.9.0 does not recognise AMD family 0x1A (Zen 5) and falls back to its 'generic'
# (reference-kernel) sub-configuration. "blis_skx" is the same binary with BLIS_ARCH_TYPE=0,
# which forces the AVX-512 'skx' sub-configuration (the enum index; names are not parsed).
variants=""
for b in $built; do
  variants="$variants $b"
  [ "$b" = blis ] && variants="$variants blis_skx"
done
unset BLIS_ARCH_TYPE
for t in $THREADS; do
  for v in $variants; do
    # Generic (reference-kernel) BLIS is 15-30x slower; timing it at 2 threads only costs minutes.
    if [ "$v" = blis ] && [ "$t" != 1 ] && [ "${BLIS_GENERIC_ALL_THREADS:-0}" = 0 ] &&
       ./gb_blis 1 check | grep -q 'arch=generic'; then
      echo "skipping generic blis at $t threads (set BLIS_GENERIC_ALL_THREADS=1 to run it)" >&2
      continue
    fi
    echo "running $v threads=$t" >&2
    case $v in
      blis_skx) bin=gb_blis; extra="BLIS_ARCH_TYPE=0" ;;
      *) bin=gb_$v; extra="" ;;
    esac
    env $extra OPENBLAS_NUM_THREADS=$t BLIS_NUM_THREADS=$t OMP_NUM_THREADS=$t OMP_PROC_BIND=false \
      ./"$bin" "$t" "$REPS" 2>&1 | awk -v L="$v" '$1=="RESULT"{$2=L} $1=="#" && $2 ~ /^backend=/{$2="backend=" L} {print}' \
      >"raw_${v}_t$t.txt" || echo "$v t=$t failed" >&2
    cat "raw_${v}_t$t.txt" >>results.txt
  done
done

# ---- 5. table ---------------------------------------------------------------------------------
echo
echo "== machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) ($(nproc) cpus), $(date -u +%F)"
grep '^#' results.txt
python3 - results.txt <<'EOF'
import sys, collections
rows = collections.OrderedDict(); libs = []
for line in open(sys.argv[1]):
    f = line.split()
    if not f or f[0] != "RESULT": continue
    lib, name, M, N, K, var, t, ms, gf = f[1:]
    if lib not in libs: libs.append(lib)
    rows.setdefault((int(t), name, M, N, K, var), {})[lib] = float(gf)
others = [l for l in libs if l != "openblas"]
hdr = f"{'thr':>3} {'case':<10} {'M':>5} {'N':>5} {'K':>5} {'op':<3} {'openblas':>9}" + "".join(
    f" {l:>9} {'ratio':>6}" for l in others)
print("\nGFLOP/s (median of timed reps), ratio = lib / openblas, same run")
print(hdr); print("-" * len(hdr))
geo = collections.defaultdict(list)
import math
for (t, name, M, N, K, var), d in rows.items():
    ob = d.get("openblas")
    s = f"{t:>3} {name:<10} {M:>5} {N:>5} {K:>5} {var:<3} {ob if ob else float('nan'):>9.1f}"
    for l in others:
        v = d.get(l)
        if v is None: s += f" {'-':>9} {'-':>6}"; continue
        r = v / ob if ob else float('nan')
        geo[(t, l)].append(r)
        s += f" {v:>9.1f} {r:>6.2f}"
    print(s)
print()
for (t, l), rs in sorted(geo.items()):
    print(f"geomean ratio {l}/openblas at {t} thread(s): {math.exp(sum(map(math.log, rs))/len(rs)):.2f} over {len(rs)} cases")
EOF
echo
echo "== static link checks"
cat static.txt
