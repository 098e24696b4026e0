//===- SkinnyGemm.cpp - GEMMs whose output is at most 8 columns wide ------===//
#include "runtime/hal/cpu/SkinnyGemm.h"

// GCC 12's _mm512_reduce_add_ps extracts halves into _mm256_undefined_ps(), deliberately
// uninitialised, which -Wmaybe-uninitialized (an error here) reports at every use.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/hal/cpu/ThreadPool.h"

namespace stepc::rt {
namespace {

#define STEPC_AVX512 __attribute__((target("avx512f")))

bool haveAvx512() {
  static const bool have = __builtin_cpu_supports("avx512f");
  return have;
}

struct Call {
  const float *a;
  int64_t lda;
  const float *packed;  // B, padded to 8 columns: [8, k] for NN, [k, 8] for TN
  float *partials;      // TN: each chunk's sums
  float *c;
  int64_t ldc, m, n, k;
  bool accumulate;
};

void store(const Call &call, int64_t i, int64_t j, float v) {
  float &out = call.c[i * call.ldc + j];
  out = call.accumulate ? out + v : v;
}

// NN: rows [r0, r1) of C, N dot products over k per row, two rows at a time.
constexpr int64_t kNnRows = 32;  // rows of C per block

STEPC_AVX512 void nnRows(const Call &call, int64_t r0, int64_t r1) {
  constexpr int N = 8;
  const int64_t k = call.k, kv = k / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (k - kv)) - 1);
  const float *bt = call.packed;
  int64_t i = r0;
  for (; i + 2 <= r1; i += 2) {
    const float *a0 = call.a + i * call.lda, *a1 = a0 + call.lda;
    __m512 s0[N], s1[N];
    for (int j = 0; j < N; ++j) s0[j] = s1[j] = _mm512_setzero_ps();
    for (int64_t p = 0; p < kv; p += 16) {
      // Two pairs ahead: the prefetchers alone read these rows at a third of memory speed.
      if (i + 6 <= r1) {
        _mm_prefetch(reinterpret_cast<const char *>(a0 + 4 * call.lda + p), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char *>(a1 + 4 * call.lda + p), _MM_HINT_T0);
      }
      __m512 x0 = _mm512_loadu_ps(a0 + p), x1 = _mm512_loadu_ps(a1 + p);
      for (int j = 0; j < N; ++j) {
        __m512 y = _mm512_loadu_ps(bt + j * k + p);
        s0[j] = _mm512_fmadd_ps(x0, y, s0[j]);
        s1[j] = _mm512_fmadd_ps(x1, y, s1[j]);
      }
    }
    if (kv < k) {
      __m512 x0 = _mm512_maskz_loadu_ps(tail, a0 + kv), x1 = _mm512_maskz_loadu_ps(tail, a1 + kv);
      for (int j = 0; j < N; ++j) {
        __m512 y = _mm512_maskz_loadu_ps(tail, bt + j * k + kv);
        s0[j] = _mm512_fmadd_ps(x0, y, s0[j]);
        s1[j] = _mm512_fmadd_ps(x1, y, s1[j]);
      }
    }
    for (int j = 0; j < call.n; ++j) {
      store(call, i, j, _mm512_reduce_add_ps(s0[j]));
      store(call, i + 1, j, _mm512_reduce_add_ps(s1[j]));
    }
  }
  for (; i < r1; ++i) {  // the odd row: the same sums as in a pair
    const float *a0 = call.a + i * call.lda;
    __m512 s0[N];
    for (int j = 0; j < N; ++j) s0[j] = _mm512_setzero_ps();
    for (int64_t p = 0; p < kv; p += 16) {
      __m512 x0 = _mm512_loadu_ps(a0 + p);
      for (int j = 0; j < N; ++j)
        s0[j] = _mm512_fmadd_ps(x0, _mm512_loadu_ps(bt + j * k + p), s0[j]);
    }
    if (kv < k) {
      __m512 x0 = _mm512_maskz_loadu_ps(tail, a0 + kv);
      for (int j = 0; j < N; ++j)
        s0[j] = _mm512_fmadd_ps(x0, _mm512_maskz_loadu_ps(tail, bt + j * k + kv), s0[j]);
    }
    for (int j = 0; j < call.n; ++j) store(call, i, j, _mm512_reduce_add_ps(s0[j]));
  }
}

void nnBlocks(void *context, int64_t lo, int64_t hi) {
  const Call &call = *static_cast<const Call *>(context);
  nnRows(call, lo * kNnRows, std::min(call.m, hi * kNnRows));
}

// TN: A stored [k, m]. The rows of A are cut into chunks of kTnChunk, a fixed number for the
// shape: each chunk's sums into C are computed on their own (by whichever thread), streaming
// the chunk's whole rows in order, and the chunks' sums are then added in chunk order. (A
// split by C's rows would have each thread read part of every row of A: a 1 KiB stride the
// prefetchers do not follow, 5x slower from memory.) Within a chunk, tiles of kTnTile rows stay
// in L1 while each panel of outputs (48 of C's rows, held in registers) takes its turn.
constexpr int64_t kTnChunk = 512;
constexpr int64_t kTnTile = 32;
constexpr int kTnVectors = 3;
constexpr int64_t kTnPanel = 16 * kTnVectors;

int64_t tnPanels(int64_t m) { return (m + kTnPanel - 1) / kTnPanel; }

// Chunk c's sums, [panel][j][kTnPanel], into call.partials.
STEPC_AVX512 void tnChunk(const Call &call, int64_t chunk) {
  constexpr int N = 8, V = kTnVectors;
  constexpr int64_t W = kTnPanel;
  const int64_t panels = tnPanels(call.m);
  float *part = call.partials + chunk * panels * N * W;
  std::memset(part, 0, sizeof(float) * static_cast<size_t>(panels * N * W));
  int64_t p0 = chunk * kTnChunk, p1 = std::min(call.k, p0 + kTnChunk);
  for (int64_t t0 = p0; t0 < p1; t0 += kTnTile) {
    int64_t t1 = std::min(p1, t0 + kTnTile);
    for (int64_t q = 0; q < panels; ++q) {
      int64_t i0 = q * W, width = std::min(W, call.m - i0);
      __mmask16 masks[V];
      for (int v = 0; v < V; ++v) {
        int64_t lanes = std::clamp<int64_t>(width - 16 * v, 0, 16);
        masks[v] = static_cast<__mmask16>((1u << lanes) - 1);
      }
      float *saved = part + q * N * W;
      __m512 s[N][V];
      for (int j = 0; j < N; ++j)
        for (int v = 0; v < V; ++v) s[j][v] = _mm512_loadu_ps(saved + j * W + 16 * v);
      for (int64_t p = t0; p < t1; ++p) {
        const float *row = call.a + p * call.lda + i0;
        // The first panel's pass asks for the next tile's rows: a row's panels are read a tile
        // apart, an order the hardware prefetchers do not follow from memory.
        if (q == 0 && p + kTnTile < p1)
          for (int64_t at = 0; at < call.m; at += 16)
            _mm_prefetch(reinterpret_cast<const char *>(row + kTnTile * call.lda + at),
                         _MM_HINT_T0);
        __m512 x[V];
        for (int v = 0; v < V; ++v) x[v] = _mm512_maskz_loadu_ps(masks[v], row + 16 * v);
        const float *bp = call.packed + p * N;
        for (int j = 0; j < N; ++j) {
          __m512 y = _mm512_set1_ps(bp[j]);
          for (int v = 0; v < V; ++v) s[j][v] = _mm512_fmadd_ps(x[v], y, s[j][v]);
        }
      }
      for (int j = 0; j < N; ++j)
        for (int v = 0; v < V; ++v) _mm512_storeu_ps(saved + j * W + 16 * v, s[j][v]);
    }
  }
}

void tnChunks(void *context, int64_t lo, int64_t hi) {
  const Call &call = *static_cast<const Call *>(context);
  for (int64_t c = lo; c < hi; ++c) tnChunk(call, c);
}

// B as the kernels read it, padded with zero columns to 8: NN wants [8, k] (B's columns as
// rows), TN wants [k, 8].
std::vector<float> packB(const float *b, int64_t ldb, bool transB, int64_t k, int64_t n,
                         bool columnsAsRows) {
  constexpr int N = 8;
  std::vector<float> packed(static_cast<size_t>(N * k), 0.0f);
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) {
      float v = transB ? b[j * ldb + p] : b[p * ldb + j];
      packed[static_cast<size_t>(columnsAsRows ? j * k + p : p * N + j)] = v;
    }
  return packed;
}

void run(int64_t units, RangeFn fn, Call &call, bool parallel) {
  if (parallel && poolThreads() > 1 && units > 1) parallelFor(0, units, fn, &call);
  else fn(&call, 0, units);
}

}  // namespace

bool skinnyGemm(const float *a, int64_t lda, bool transA, const float *b, int64_t ldb,
                bool transB, float *c, int64_t ldc, int64_t m, int64_t n, int64_t k,
                bool accumulate, bool parallel) {
  // Below ~64K multiply-adds a call is too short for any of this to matter.
  if (n < 1 || n > kSkinnyMaxColumns || m * k < 65536 || !haveAvx512()) return false;
  if (!transA) {
    if (k < 16) return false;
    std::vector<float> bt = packB(b, ldb, transB, k, n, /*columnsAsRows=*/true);
    Call call{a, lda, bt.data(), nullptr, c, ldc, m, n, k, accumulate};
    run((m + kNnRows - 1) / kNnRows, nnBlocks, call, parallel);
    return true;
  }
  if (m < 16) return false;
  std::vector<float> bp = packB(b, ldb, transB, k, n, /*columnsAsRows=*/false);
  const int64_t chunks = (k + kTnChunk - 1) / kTnChunk, panels = tnPanels(m);
  std::vector<float> partials(static_cast<size_t>(chunks * panels * 8 * kTnPanel));
  Call call{a, lda, bp.data(), partials.data(), c, ldc, m, n, k, accumulate};
  run(chunks, tnChunks, call, parallel);
  // The chunks' sums, added in chunk order.
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t at = (i / kTnPanel) * 8 * kTnPanel + j * kTnPanel + i % kTnPanel;
      float sum = partials[static_cast<size_t>(at)];
      for (int64_t chunk = 1; chunk < chunks; ++chunk)
        sum += partials[static_cast<size_t>(chunk * panels * 8 * kTnPanel + at)];
      store(call, i, j, sum);
    }
  return true;
}

}  // namespace stepc::rt
