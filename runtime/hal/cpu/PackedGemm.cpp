//===- PackedGemm.cpp - the runtime's own AVX-512 GEMM ---------------------===//
#include "runtime/hal/cpu/PackedGemm.h"

// GCC 12's unpack and mask intrinsics pass _mm512_undefined_ps(), deliberately uninitialised,
// as their pass-through operand, which -Wuninitialized (an error here) reports at every use.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "runtime/hal/cpu/ThreadPool.h"

namespace stepc::rt {
namespace {

#define STEPC_AVX512 __attribute__((target("avx512f")))

// The tile: kMr rows x kNr columns of C in 24 zmm registers; per step along the reduction two
// loads of B's panel and 12 broadcasts of A's feed 24 FMAs, well under Zen 4/5's and Intel's
// two loads a cycle, with 8 registers left for the operands.
constexpr int64_t kMr = 12, kNv = 2, kNr = 16 * kNv;
// Blocks: a kKc-long chunk of the reduction; A's block (kMc x kKc, 240 KiB) stays in L2 while
// the micro-kernel walks it, B's panel (kKc x kNr, 32 KiB) in L1; B's block (kKc x kNc) in L2/L3.
constexpr int64_t kKcMax = 512, kMc = 20 * kMr, kNc = 96 * kNr;

// The reduction's chunks: as equal as can be, at most kKcMax, fixed by k alone (the bits).
int64_t chunkLength(int64_t k) {
  int64_t chunks = (k + kKcMax - 1) / kKcMax;
  return (k + chunks - 1) / chunks;
}

struct Call {
  const float *a, *b;
  float *c;
  int64_t lda, ldb, ldc, m, n, k, kc;
  bool transA, transB, accumulate, splitRows;
  int64_t parts, units;
  // A gathered by rows (packedGemmRows): stored row s at aRows[s] + aCol0, zeros for a null
  // pointer; `a` and lda are then unused.
  const float *const *aRows = nullptr;
  int64_t aCol0 = 0;
};

// Stored row s of A (null: a row of zeros).
const float *storedRowA(const Call &call, int64_t s) {
  if (!call.aRows) return call.a + s * call.lda;
  return call.aRows[s] ? call.aRows[s] + call.aCol0 : nullptr;
}

// A 64-byte-aligned scratch area per thread, owned by one process-wide list (as Gemm.cpp's
// panels are: no thread_local object with a destructor, see there).
struct Scratch {
  std::vector<float> storage;
  float *get(size_t floats) {
    if (floats + 16 > storage.size()) storage.resize(floats + 16);
    auto address = reinterpret_cast<uintptr_t>(storage.data());
    return storage.data() + ((64 - address % 64) % 64) / sizeof(float);
  }
};
struct ThreadScratch {
  Scratch a, b, partials;
};
ThreadScratch &threadScratch() {
  static std::mutex mutex;
  static std::deque<ThreadScratch> all;
  thread_local ThreadScratch *mine = nullptr;
  if (!mine) {
    std::lock_guard<std::mutex> lock(mutex);
    mine = &all.emplace_back();
  }
  return *mine;
}

// Transposes 16 rows of 16 floats: out[j] holds element j of each row (row r in lane r).
STEPC_AVX512 void transpose16(const __m512 (&r)[16], __m512 (&out)[16]) {
  __m512 a[16], b[16];
  for (int i = 0; i < 8; ++i) {  // per 128-bit lane: pairs of rows interleaved
    a[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {  // per lane: column 4L + j of rows 4i .. 4i + 3 in b[4i + j]
    __m512d a0 = _mm512_castps_pd(a[4 * i]), a1 = _mm512_castps_pd(a[4 * i + 1]);
    __m512d a2 = _mm512_castps_pd(a[4 * i + 2]), a3 = _mm512_castps_pd(a[4 * i + 3]);
    b[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
    b[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
    b[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
    b[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
  }
  for (int j = 0; j < 4; ++j) {  // the four row groups' lanes gathered per column
    __m512 c0 = _mm512_shuffle_f32x4(b[j], b[4 + j], 0x44);
    __m512 c1 = _mm512_shuffle_f32x4(b[j], b[4 + j], 0xEE);
    __m512 c2 = _mm512_shuffle_f32x4(b[8 + j], b[12 + j], 0x44);
    __m512 c3 = _mm512_shuffle_f32x4(b[8 + j], b[12 + j], 0xEE);
    out[j] = _mm512_shuffle_f32x4(c0, c2, 0x88);
    out[4 + j] = _mm512_shuffle_f32x4(c0, c2, 0xDD);
    out[8 + j] = _mm512_shuffle_f32x4(c1, c3, 0x88);
    out[12 + j] = _mm512_shuffle_f32x4(c1, c3, 0xDD);
  }
}

// `live` (at most 16) rows of `kc` contiguous floats, row i at rows[i] (null: zeros), transposed
// into dst: element p of row r goes to dst[p · width + r] for r < `lanes` (zeros for rows past
// `live`).
STEPC_AVX512 void transposeRows(const float *const *rows, int64_t live, int64_t kc, float *dst,
                                int64_t width, int64_t lanes) {
  const __mmask16 store = static_cast<__mmask16>((1u << lanes) - 1);
  for (int64_t p = 0; p < kc; p += 16) {
    int64_t cols = std::min<int64_t>(16, kc - p);
    const __mmask16 load = static_cast<__mmask16>((1u << cols) - 1);
    __m512 r[16], out[16];
    for (int64_t i = 0; i < 16; ++i) {
      bool present = i < live && rows[i];
      // 16 rows read a line at a time are more streams than the hardware prefetchers follow
      // from memory: ask for each row's line 4 steps ahead.
      if (present && p + 64 < kc)
        _mm_prefetch(reinterpret_cast<const char *>(rows[i] + p + 64), _MM_HINT_T0);
      r[i] = present ? _mm512_maskz_loadu_ps(load, rows[i] + p) : _mm512_setzero_ps();
    }
    transpose16(r, out);
    for (int64_t j = 0; j < cols; ++j) _mm512_mask_storeu_ps(dst + (p + j) * width, store, out[j]);
  }
}

// The same for rows ld apart from src.
STEPC_AVX512 void transposeRows(const float *src, int64_t ld, int64_t live, int64_t kc,
                                float *dst, int64_t width, int64_t lanes) {
  const float *rows[16];
  for (int64_t i = 0; i < 16; ++i) rows[i] = i < live ? src + i * ld : nullptr;
  transposeRows(rows, live, kc, dst, width, lanes);
}

// op(A)[i0 : i0 + rows, p0 : p0 + kc] as panels of kMr rows: panel q holds, for each p, the
// kMr values of rows q·kMr .. q·kMr + kMr - 1 at column p (zeros past the last row). A stored
// [m, k] is transposed 16 x 16 in registers (a scalar copy cost a fifth of the GEMM's time).
STEPC_AVX512 void packA(const Call &call, int64_t i0, int64_t rows, int64_t p0, int64_t kc,
                        float *dst) {
  for (int64_t q = 0; q < rows; q += kMr, dst += kMr * kc) {
    int64_t live = std::min(kMr, rows - q);
    if (call.transA) {  // stored [k, m]: the kMr values of one p are contiguous
      const __mmask16 mask = static_cast<__mmask16>((1u << live) - 1);
      for (int64_t p = 0; p < kc; ++p) {
        if (p + 8 < kc)  // one line per row of A, ld apart: ahead of the prefetchers
          if (const float *ahead = storedRowA(call, p0 + p + 8))
            _mm_prefetch(reinterpret_cast<const char *>(ahead + i0 + q), _MM_HINT_T0);
        const float *row = storedRowA(call, p0 + p);
        _mm512_mask_storeu_ps(dst + p * kMr, 0x0FFF,
                              row ? _mm512_maskz_loadu_ps(mask, row + i0 + q)
                                  : _mm512_setzero_ps());
      }
      continue;
    }
    const float *src[16];
    for (int64_t i = 0; i < 16; ++i) {
      const float *row = i < live ? storedRowA(call, i0 + q + i) : nullptr;
      src[i] = row ? row + p0 : nullptr;
    }
    transposeRows(src, live, kc, dst, kMr, kMr);
  }
}

// op(B)[p0 : p0 + kc, j0 : j0 + cols] as panels of kNr columns (zeros past the last column).
STEPC_AVX512 void packB(const Call &call, int64_t p0, int64_t kc, int64_t j0, int64_t cols,
                        float *dst) {
  for (int64_t q = 0; q < cols; q += kNr, dst += kNr * kc) {
    int64_t live = std::min(kNr, cols - q);
    if (!call.transB) {  // stored [k, n]: kNr contiguous values per p
      for (int64_t p = 0; p < kc; ++p) {
        const float *src = call.b + (p0 + p) * call.ldb + j0 + q;
        for (int64_t v = 0; v < kNv; ++v) {
          int64_t n = std::clamp<int64_t>(live - 16 * v, 0, 16);
          _mm512_store_ps(dst + p * kNr + 16 * v,
                          _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1),
                                                src + 16 * v));
        }
      }
      continue;
    }
    for (int64_t v = 0; v < kNv; ++v)  // stored [n, k]: 16 columns transposed at a time
      transposeRows(call.b + (j0 + q + 16 * v) * call.ldb + p0, call.ldb,
                    std::clamp<int64_t>(live - 16 * v, 0, 16), kc, dst + 16 * v, kNr, 16);
  }
}

// One kMr x kNr tile: the sum over the chunk in registers, then C = sum (`overwrite`) or
// C + sum, for the tile's first `rows` rows and `cols` columns. A's value (r, p) is at
// at a[p · kMr + r] in a packed panel, or read in place: at a[r · lda + p] in A's rows (A stored
// [m, k]) or at a[p · lda + r] in its columns (A stored [k, m]).
enum class ALayout { Packed, Rows, Columns };
template <ALayout Layout>
STEPC_AVX512 void microKernel(int64_t kc, const float *a, int64_t lda, const float *b,
                              int64_t bStep, float *c, int64_t ldc, int64_t rows, int64_t cols,
                              bool overwrite) {
  const int64_t rowStep = Layout == ALayout::Rows ? lda : 1;
  const int64_t kStep = Layout == ALayout::Packed ? kMr : Layout == ALayout::Rows ? 1 : lda;
  // The tile of C is read (or written) after the loop; asked for now, its lines arrive while
  // the loop runs. Without this each tile waited for its 24 lines from memory at the end, a
  // fifth of the time of a GEMM whose C does not fit in the caches.
  for (int64_t r = 0; r < rows; ++r)
    for (int v = 0; v < kNv; ++v)
      _mm_prefetch(reinterpret_cast<const char *>(c + r * ldc + 16 * v), _MM_HINT_T0);
  __m512 acc[kMr][kNv];
#pragma GCC unroll 32
  for (int r = 0; r < kMr; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < kNv; ++v) acc[r][v] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; ++p, a += kStep, b += bStep) {
    // Operands read in place come strided (a row of A's columns, or of B, per p), which the
    // hardware prefetchers follow late when they come from memory: ask 8 steps ahead.
    if (Layout == ALayout::Columns)
      _mm_prefetch(reinterpret_cast<const char *>(a + 8 * kStep), _MM_HINT_T0);
    if (bStep != kNr) _mm_prefetch(reinterpret_cast<const char *>(b + 8 * bStep), _MM_HINT_T0);
    __m512 bv[kNv];
#pragma GCC unroll 4
    for (int v = 0; v < kNv; ++v) bv[v] = _mm512_loadu_ps(b + 16 * v);
#pragma GCC unroll 32
    for (int r = 0; r < kMr; ++r) {
      __m512 av = _mm512_set1_ps(a[r * rowStep]);
#pragma GCC unroll 4
      for (int v = 0; v < kNv; ++v) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }
  __mmask16 mask[kNv];
  for (int v = 0; v < kNv; ++v) {
    int64_t live = std::clamp<int64_t>(cols - 16 * v, 0, 16);
    mask[v] = static_cast<__mmask16>((1u << live) - 1);
  }
#pragma GCC unroll 32
  for (int r = 0; r < kMr; ++r) {
    if (r >= rows) break;
    float *out = c + r * ldc;
#pragma GCC unroll 4
    for (int v = 0; v < kNv; ++v) {
      __m512 x = acc[r][v];
      if (!overwrite) x = _mm512_add_ps(_mm512_maskz_loadu_ps(mask[v], out + 16 * v), x);
      _mm512_mask_storeu_ps(out + 16 * v, mask[v], x);
    }
  }
}

// Asks for lines [lo, hi) of the `lines` cache lines that hold op(B)[p0 : p0 + kc, j : j + kNr]
// (kc rows of two lines, or kNr columns of kc / 16 lines).
void prefetchBPanel(const Call &call, int64_t p0, int64_t kc, int64_t j, int64_t lo, int64_t hi) {
  int64_t perColumn = (kc + 15) / 16;
  for (int64_t l = lo; l < hi; ++l) {
    const float *line = call.transB
                            ? call.b + (j + l / perColumn) * call.ldb + p0 + 16 * (l % perColumn)
                            : call.b + (p0 + l / 2) * call.ldb + j + 16 * (l % 2);
    _mm_prefetch(reinterpret_cast<const char *>(line), _MM_HINT_T0);
  }
}

// C[i0:i1, j0:j1], on this thread.
void runSlab(const Call &call, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  if (i1 <= i0 || j1 <= j0) return;
  ThreadScratch &scratch = threadScratch();
  int64_t kcMax = call.kc;
  int64_t ncMax = std::min(kNc, (j1 - j0 + kNr - 1) / kNr * kNr);
  int64_t mcMax = std::min(kMc, (i1 - i0 + kMr - 1) / kMr * kMr);
  float *bPacked = scratch.b.get(static_cast<size_t>(kcMax * ncMax));
  float *aPacked = scratch.a.get(static_cast<size_t>(kcMax * mcMax));
  for (int64_t jc = j0; jc < j1; jc += kNc) {
    int64_t nc = std::min(kNc, j1 - jc);
    for (int64_t pc = 0; pc < call.k; pc += kcMax) {
      int64_t kc = std::min(kcMax, call.k - pc);
      bool overwrite = pc == 0 && !call.accumulate;
      // B stored [k, n] is read in place for its full panels (kNr contiguous values per p)
      // when few tiles of rows share each panel: a weight gradient's [32, 4096] · [4096, 256]
      // ran at 242 GFLOP/s packing B and 318 reading it (2 threads). Wider slabs reuse each
      // packed panel enough to pay for the copy (a [4096, 768] · [768, 3072] lost 10% in
      // place). Only a last, partial panel is packed.
      int64_t bDirect = !call.transB && i1 - i0 <= 8 * kMr ? nc / kNr * kNr : 0;
      int64_t bLines = call.transB ? kNr * ((kc + 15) / 16) : 2 * kc;
      for (int64_t ic = i0; ic < i1; ic += kMc) {
        int64_t mc = std::min(kMc, i1 - ic);
        // Under a narrow C (at most 4 panels of B) A is read in place: each packed value would
        // serve at most 4 tiles, and the copy cost up to a fifth of the time ([4096, 256] ·
        // [256, 96]: 164 GFLOP/s packed, 195 in place on one Zen 5 core; stored [k, m], 331 and
        // 411 on two). A stored [m, k] gives the kernel 12 row streams, so not when its rows are
        // a multiple of 2 KiB apart: they would share a few L1 sets and evict each other. A
        // last panel of fewer than kMr rows is packed (zero rows).
        bool narrow = call.n <= 4 * kNr;
        bool rowsInPlace = narrow && !call.transA && call.lda % 512 != 0 && !call.aRows;
        bool columnsInPlace = narrow && call.transA && !call.aRows;
        int64_t direct = rowsInPlace || columnsInPlace ? mc / kMr * kMr : 0;
        if (direct < mc) packA(call, ic + direct, mc - direct, pc, kc, aPacked);
        int64_t tiles = (mc + kMr - 1) / kMr;
        for (int64_t jr = 0; jr < nc; jr += kNr) {
          float *cTile = call.c + ic * call.ldc + jc + jr;
          int64_t cols = std::min(kNr, nc - jr), bStep = call.ldb;
          const float *b = call.b + pc * call.ldb + jc + jr;
          // B's panels are packed one at a time as the first block of rows reaches them, and
          // while that block's tiles compute on one panel the next panel's source is asked for,
          // a slice before each tile: packing then reads the caches, not memory. (Packing all
          // of B's block first left the cores waiting on memory for it: 15-20% of a
          // [256, 512] · [512, 1536] in the step.)
          bool prefetchNext = ic == i0 && jr + kNr < nc && jr + kNr >= bDirect;
          if (jr >= bDirect) {
            float *panel = bPacked + (jr - bDirect) * kc;
            if (ic == i0) packB(call, pc, kc, jc + jr, cols, panel);
            b = panel;
            bStep = kNr;
          }
          for (int64_t t = 0; t < tiles; ++t) {
            int64_t ir = t * kMr;
            if (prefetchNext)
              prefetchBPanel(call, pc, kc, jc + jr + kNr, bLines * t / tiles,
                             bLines * (t + 1) / tiles);
            if (ir < direct && rowsInPlace)
              microKernel<ALayout::Rows>(kc, call.a + (ic + ir) * call.lda + pc, call.lda, b,
                                         bStep, cTile + ir * call.ldc, call.ldc, kMr, cols,
                                         overwrite);
            else if (ir < direct)
              microKernel<ALayout::Columns>(kc, call.a + pc * call.lda + ic + ir, call.lda, b,
                                            bStep, cTile + ir * call.ldc, call.ldc, kMr, cols,
                                            overwrite);
            else
              microKernel<ALayout::Packed>(kc, aPacked + (ir - direct) * kc, 0, b, bStep,
                                           cTile + ir * call.ldc, call.ldc,
                                           std::min(kMr, mc - ir), cols, overwrite);
          }
        }
      }
    }
  }
}

// Slabs [lo, hi) of call.parts: each a contiguous run of tile rows (or columns) of C.
void runSlabs(void *context, int64_t lo, int64_t hi) {
  const Call &call = *static_cast<const Call *>(context);
  int64_t unit = call.splitRows ? kMr : kNr, extent = call.splitRows ? call.m : call.n;
  auto edge = [&](int64_t s) {
    return std::min(extent, call.units * s / call.parts * unit);
  };
  for (int64_t s = lo; s < hi; ++s) {
    if (call.splitRows) runSlab(call, edge(s), edge(s + 1), 0, call.n);
    else runSlab(call, 0, call.m, edge(s), edge(s + 1));
  }
}

}  // namespace

bool packedGemmAvailable() {
  static const bool have = __builtin_cpu_supports("avx512f");
  return have;
}

namespace {

// C = op(A) · op(B) on this thread, or split into slabs over the pool.
void gemmSlabs(Call call, bool parallel) {
  // Each thread packs the operand its slab shares with the others in full: slabs of rows
  // repeat B's packing, slabs of columns A's; cut the longer side.
  call.splitRows = call.m >= call.n;
  call.units = call.splitRows ? (call.m + kMr - 1) / kMr : (call.n + kNr - 1) / kNr;
  int64_t threads = parallel ? poolThreads() : 1;
  bool worthSplitting = 2.0 * call.m * call.n * call.k >= 4.0e6;  // about 10 µs of work or more
  call.parts = worthSplitting ? std::min<int64_t>(threads, call.units) : 1;
  if (call.parts > 1) parallelFor(0, call.parts, runSlabs, &call);
  else runSlab(call, 0, call.m, 0, call.n);
}

// A reduction much longer than C's sides (a weight's gradient: [256, 4096] · [4096, 96]) is cut
// into kParts fixed by the shape; each part's product goes to its own buffer, on its own thread
// where there are threads, and C is their sum in part order. Slabs of C would each read all of
// one operand (2 threads: 7 MB from memory for that shape instead of 5.5), and the operands
// come from memory in the step.
struct SplitK {
  Call call;
  float *partials;
  int64_t parts;
};

void runParts(void *context, int64_t lo, int64_t hi) {
  const SplitK &split = *static_cast<const SplitK *>(context);
  const Call &call = split.call;
  for (int64_t q = lo; q < hi; ++q) {
    int64_t p0 = call.k * q / split.parts / 16 * 16;
    int64_t p1 = q + 1 == split.parts ? call.k : call.k * (q + 1) / split.parts / 16 * 16;
    Call part = call;
    if (!call.aRows) part.a = call.transA ? call.a + p0 * call.lda : call.a + p0;
    else if (call.transA) part.aRows = call.aRows + p0;  // gathered: the part's stored rows
    else part.aCol0 = call.aCol0 + p0;                    // or its columns
    part.b = call.transB ? call.b + p0 : call.b + p0 * call.ldb;
    part.k = p1 - p0;
    part.kc = chunkLength(part.k);
    part.c = split.partials + q * call.m * call.n;
    part.ldc = call.n;
    part.accumulate = false;
    gemmSlabs(part, false);
  }
}

}  // namespace

namespace {

void run(const Call &call, bool parallel) {
  int64_t m = call.m, n = call.n, k = call.k;
  int64_t parts = k >= 8 * std::max(m, n) ? std::clamp<int64_t>(k / 2048, 1, 4) : 1;
  if (parts == 1) return gemmSlabs(call, parallel);
  SplitK split{call, threadScratch().partials.get(static_cast<size_t>(parts * m * n)), parts};
  if (parallel && poolThreads() > 1) parallelFor(0, parts, runParts, &split);
  else runParts(&split, 0, parts);
  float *c = call.c;
  for (int64_t i = 0; i < m; ++i) {
    float *out = c + i * call.ldc;
    const float *first = split.partials + i * n;
    for (int64_t j = 0; j < n; ++j) out[j] = call.accumulate ? out[j] + first[j] : first[j];
    for (int64_t q = 1; q < parts; ++q) {
      const float *partial = split.partials + (q * m + i) * n;
      for (int64_t j = 0; j < n; ++j) out[j] += partial[j];
    }
  }
}

}  // namespace

void packedGemm(const float *a, int64_t lda, bool transA, const float *b, int64_t ldb,
                bool transB, float *c, int64_t ldc, int64_t m, int64_t n, int64_t k,
                bool accumulate, bool parallel) {
  run(Call{a, b, c, lda, ldb, ldc, m, n, k, chunkLength(k), transA, transB, accumulate},
      parallel);
}

void packedGemmRows(const float *const *aRows, bool transA, const float *b, int64_t ldb,
                    bool transB, float *c, int64_t ldc, int64_t m, int64_t n, int64_t k,
                    bool accumulate, bool parallel) {
  Call call{nullptr, b, c, 0, ldb, ldc, m, n, k, chunkLength(k), transA, transB, accumulate};
  call.aRows = aRows;
  run(call, parallel);
}

}  // namespace stepc::rt
