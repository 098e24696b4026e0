//===- Gemm.cpp - the GEMM interface on oneDNN, OpenBLAS and the runtime's kernels ===//
//
// Each single-threaded block of a GEMM (see gemm2d) is one call of a BLAS-like sgemm: oneDNN's
// dnnl_sgemm where libdnnl.so.2 loads (Debian's libdnnl2; dlopen, so executables start
// without it), else OpenBLAS's cblas_sgemm, which every executable links. On an idle Zen 5
// core (benchmarks/gemm) oneDNN ran the zoo's shapes at 103-113 GFLOP/s against OpenBLAS's
// 90-104, and the convolution's small [245 x 96 x 32] GEMMs 1.85-6.3x faster.
//
// A GEMM whose A is a convolution's window (rows that overlap) runs on the runtime's own
// AVX-512 kernels (PackedGemm.h) where the CPU has them: their packing reads the window in
// place, where a library call needs it copied into panels first (byte_lm_residual_small's
// step: 52.1 -> 50.9 ms, every one of 5 alternating pairs faster). Every GEMM on the kernels
// (STEPC_GEMM=stepc) measured 1-4% faster than oneDNN's blocks on byte_lm_residual's step, the
// same on byte_lm_residual_small's, and 3-15% slower on the MoE benchmark's h = 128 layers
// (benchmarks/gemm/README.md), so the rest stays on the library by default.
//
// STEPC_GEMM=stepc (every GEMM on the kernels; an error without AVX-512F), =onednn (every GEMM
// on oneDNN; an error if it does not load) or =openblas chooses. oneDNN's OpenMP runtime
// is held to one thread per call (OMP_NUM_THREADS=1 before it loads): the runtime's own pool
// runs the blocks. The bits depend on the library, and on nothing else: the blocks are fixed
// by the shape. A convolution's window (--step-windowed-gemms: rows that overlap, ld below the
// row length, which BLAS rejects) is packed a panel at a time before each library call.
//
//===----------------------------------------------------------------------===//
#include "runtime/hal/Gemm.h"
#include "runtime/hal/Profile.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/hal/cpu/PackedGemm.h"
#include "runtime/hal/cpu/SkinnyGemm.h"
#include "runtime/hal/cpu/ThreadPool.h"

// OpenBLAS's CBLAS, declared here so the runtime builds without its headers; the executable
// links libopenblas.a (stepc's link line).
extern "C" {
void cblas_sgemm(int order, int transA, int transB, int m, int n, int k, float alpha,
                 const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc);
void openblas_set_num_threads(int threads);
char *openblas_get_corename(void);
}

namespace stepc::rt {
namespace {

// Denormals flushed to zero (FTZ) and read as zero (DAZ) on every thread of the executable. An
// x86 core takes a microcode assist, ~100 cycles, for each denormal operand or result: an
// expert-choice MoE whose router is confident gives the experts it disfavours gates of 1e-40,
// and its step then ran 6.5x slower (benchmarks/moe, E = 64, k = 1: 697 ms a step, 107 with
// FTZ/DAZ, against 117 with uniform routing).
// XLA's CPU backend does the same (PyTorch offers it: torch.set_flush_denormal). A constructor of
// priority 101 runs before the default-priority constructors, OpenBLAS's among them, which
// start its threads, and a new thread inherits its creator's MXCSR, so OpenBLAS's threads and
// the runtime's pool get it too.
__attribute__((constructor(101))) void flushDenormals() {
#if defined(__x86_64__)
  unsigned csr;
  __asm__ volatile("stmxcsr %0" : "=m"(csr));
  csr |= 0x8040;  // FTZ (bit 15) and DAZ (bit 6)
  __asm__ volatile("ldmxcsr %0" : : "m"(csr));
#endif
}

constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

// oneDNN's row-major sgemm (dnnl.h: dnnl_status_t dnnl_sgemm(char, char, dnnl_dim_t x3, float,
// const float *, dnnl_dim_t, const float *, dnnl_dim_t, float, float *, dnnl_dim_t)).
using DnnlSgemm = int (*)(char, char, int64_t, int64_t, int64_t, float, const float *, int64_t,
                          const float *, int64_t, float, float *, int64_t);
struct DnnlVersion {
  int major, minor, patch;
  const char *hash;
  unsigned cpuRuntime, gpuRuntime;
};

struct Library {
  bool own = false;          // every GEMM on the runtime's packed kernels (PackedGemm.h)
  bool ownWindows = false;   // windows of A on them (the default where they run)
  DnnlSgemm dnnl = nullptr;  // null: OpenBLAS
  std::string name = "OpenBLAS (linked)";  // with its kernels' core, set below
  std::string error;  // STEPC_GEMM=onednn that could not load
};

Library loadLibrary() {
  Library lib;
  // OpenBLAS picks its kernels by CPU model; on one it does not know it runs generic code, which
  // `info` should say (its core name: "Prescott" on an Emerald Rapids, "Cooperlake" on Zen 5).
  if (const char *core = openblas_get_corename())
    lib.name = std::string("OpenBLAS (linked; its ") + core + " kernels)";
  const char *choice = std::getenv("STEPC_GEMM");
  std::string want = choice ? choice : "";
  if (want == "openblas") return lib;
  if (!want.empty() && want != "onednn" && want != "stepc") {
    lib.error = "STEPC_GEMM: expected stepc, onednn or openblas, found '" + want + "'";
    return lib;
  }
  if (want == "stepc") {
    if (!packedGemmAvailable()) {
      lib.error = "STEPC_GEMM=stepc, but this CPU has no AVX-512F for the runtime's kernels";
      return lib;
    }
    lib.own = true;
    lib.name = "stepc (the runtime's AVX-512 kernels)";
    return lib;
  }
  lib.ownWindows = want.empty() && packedGemmAvailable();
  setenv("OMP_NUM_THREADS", "1", 1);  // before libgomp reads it, as oneDNN loads
  void *handle = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
  auto sgemm = handle ? reinterpret_cast<DnnlSgemm>(dlsym(handle, "dnnl_sgemm")) : nullptr;
  if (!sgemm) {
    if (want == "onednn")
      lib.error = std::string("STEPC_GEMM=onednn, but libdnnl.so.2 does not load: ") +
                  (handle ? "no dnnl_sgemm" : dlerror()) + " (Debian: libdnnl2)";
    return lib;
  }
  lib.dnnl = sgemm;
  lib.name = "oneDNN (libdnnl.so.2)";
  using VersionFn = const DnnlVersion *(*)();
  if (auto version = reinterpret_cast<VersionFn>(dlsym(handle, "dnnl_version")))
    if (const DnnlVersion *v = version())
      lib.name = "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                 std::to_string(v->patch) + " (libdnnl.so.2)";
  return lib;
}

const Library &library() {
  static const Library lib = [] {
    Library chosen = loadLibrary();
    if (chosen.ownWindows && chosen.error.empty())
      chosen.name += "; convolution windows on the runtime's AVX-512 kernels";
    return chosen;
  }();
  return lib;
}

// One BLAS call C = op(A) · op(B) (+ C), and how to split it across threads.
struct Blas {
  Operand A, B;
  float *c;
  int64_t m, n, k, ldc;
  bool accumulate;
  bool splitRows = true;
  int64_t parts = 1;
};

// c[m, n] = op(a) · op(b) + beta · c on the chosen library, one thread.
void sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
           const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  if (DnnlSgemm dnnl = library().dnnl) {
    dnnl(transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  cblas_sgemm(kRowMajor, transA ? kTrans : kNoTrans, transB ? kTrans : kNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

// Rows [i0, i1) x reduction [p0, p1) of op(X) (or [p0, p1) x [j0, j1) for a right operand:
// `rows` are then the reduction's): where it starts and its ld, packed into `panel` first when
// X's stored rows overlap. Stored rows are rows of op(X) (not transposed) or its columns.
struct Panel {
  const float *data;
  int64_t ld;
};

// A thread's packing buffer, always 64-byte aligned: a library's result can depend on where its
// operands start (oneDNN's kernels take other paths for other alignments), and a block runs on
// whichever thread takes it, so every thread's panel must start alike for the bits to depend
// on the shape only.
class PanelBuffer {
 public:
  float *get(size_t floats) {
    if (floats + 16 > storage_.size()) storage_.resize(floats + 16);
    auto address = reinterpret_cast<uintptr_t>(storage_.data());
    return storage_.data() + ((64 - address % 64) % 64) / sizeof(float);
  }

 private:
  std::vector<float> storage_;
};

// Each thread's panels, owned by one process-wide list; a thread keeps only a pointer to its
// own (thread-local data with no destructor). With thread_local vectors in the pool's threads,
// LeakSanitizer's exit-time scan crashed once in CI under --config=asan (thread_pool_test and
// an executable; not reproduced here), and nothing is freed at a thread's exit this way.
struct PanelBuffers {
  PanelBuffer a, b;
};
PanelBuffers &threadPanels() {
  static std::mutex mutex;
  static std::deque<PanelBuffers> all;  // a deque: growing it moves no element
  thread_local PanelBuffers *mine = nullptr;
  if (!mine) {
    std::lock_guard<std::mutex> lock(mutex);
    mine = &all.emplace_back();
  }
  return *mine;
}

Panel panelOf(const Operand &x, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
              PanelBuffer &buffer) {
  // In op(X) coordinates the block is [r0, r1) x [c0, c1); stored, it is that or its transpose.
  int64_t s0 = x.transposed ? c0 : r0, s1 = x.transposed ? c1 : r1;
  int64_t t0 = x.transposed ? r0 : c0, t1 = x.transposed ? r1 : c1;
  if (!x.overlapping) return {x.data + s0 * x.ld + t0, x.ld};
  int64_t width = t1 - t0;
  float *panel = buffer.get(static_cast<size_t>((s1 - s0) * width));
  for (int64_t s = s0; s < s1; ++s)
    std::memcpy(panel + (s - s0) * width, x.data + s * x.ld + t0,
                static_cast<size_t>(width) * sizeof(float));
  return {panel, std::max<int64_t>(width, 1)};
}

// Packed panels of an overlapping operand are at most this many floats (the A and B panels
// together), so that they stay in a core's L2 while the library reads them.
constexpr int64_t kPanelFloats = 128 * 1024;

// The block C[i0:i1, j0:j1] of `call`. An operand whose stored rows overlap (a convolution's
// window: one GEMM over the K·Cin window instead of K GEMMs of Cin-deep reductions) is copied
// a panel at a time, the reduction cut into equal chunks of a multiple of 16 that fit
// kPanelFloats; the chunks accumulate in order, so the bits depend on the shape only.
void runBlas(const Blas &call, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  if (i1 <= i0 || j1 <= j0) return;
  int64_t m = i1 - i0, n = j1 - j0, k = call.k;
  float *c = call.c + i0 * call.ldc + j0;
  float beta = call.accumulate ? 1.0f : 0.0f;
  if (!call.A.overlapping && !call.B.overlapping) {
    // Row i of op(A) starts at i·ld (not transposed) or at column i (transposed); likewise
    // column j of op(B).
    const float *a = call.A.data + (call.A.transposed ? i0 : i0 * call.A.ld);
    const float *b = call.B.data + (call.B.transposed ? j0 * call.B.ld : j0);
    sgemm(call.A.transposed, call.B.transposed, m, n, k, a, call.A.ld, b, call.B.ld, beta, c,
          call.ldc);
    return;
  }
  int64_t perK = (call.A.overlapping ? m : 0) + (call.B.overlapping ? n : 0);
  int64_t chunks = std::max<int64_t>(1, (k * perK + kPanelFloats - 1) / kPanelFloats);
  int64_t kc = std::min(k, ((k + chunks - 1) / chunks + 15) / 16 * 16);
  PanelBuffers &panels = threadPanels();
  for (int64_t p0 = 0; p0 < k; p0 += kc) {
    int64_t p1 = std::min(k, p0 + kc);
    Panel a = panelOf(call.A, i0, i1, p0, p1, panels.a);
    Panel b = panelOf(call.B, p0, p1, j0, j1, panels.b);
    sgemm(call.A.transposed, call.B.transposed, m, n, p1 - p0, a.data, a.ld, b.data, b.ld,
          p0 == 0 ? beta : 1.0f, c, call.ldc);
  }
}

// A GEMM big enough to split is always split into the same blocks of rows (or of columns when
// C is wider than tall): up to kParts, of at least 128 rows, aligned to 16, each one
// single-threaded BLAS call, whatever the thread count: the threads share the blocks out. BLAS's result for an element
// can depend on the shape of the call it is in (OpenBLAS's FMA kernels for Haswell and Zen
// give different bits for the rows of a block than for the same rows of the whole matrix), so
// splitting by the thread count made the numbers depend on --threads; a fixed split does not.
constexpr int64_t kParts = 16;

bool worthSplitting(int64_t m, int64_t n, int64_t k) {
  return 2.0 * m * n * k >= 4.0e6 && std::max(m, n) >= 32;  // about 10 µs of work or more
}

// Parts [lo, hi) of call.parts, each its own BLAS call.
void runBlock(void *context, int64_t lo, int64_t hi) {
  const Blas &call = *static_cast<const Blas *>(context);
  int64_t extent = call.splitRows ? call.m : call.n;
  auto edge = [&](int64_t p) {
    if (p >= call.parts) return extent;
    int64_t e = (extent * p / call.parts + 8) / 16 * 16;
    return std::min(e, extent);
  };
  for (int64_t p = lo; p < hi; ++p) {
    if (call.splitRows)
      runBlas(call, edge(p), edge(p + 1), 0, call.n);
    else
      runBlas(call, 0, call.m, edge(p), edge(p + 1));
  }
}

// C[M,N] += op(A) · op(B) for one 2-D slice. `parallel`: split over the pool when it is big
// enough, and count it in gemmStats; a batch's worker threads pass false (the caller counts).
void gemm2d(const float *a, const int64_t *aSizes, const int64_t *aStrides, const float *b,
            const int64_t *bSizes, const int64_t *bStrides, float *c, const int64_t *cSizes,
            const int64_t *cStrides, bool transA, bool transB, bool accumulate,
            bool parallel = true) {
  int64_t m = cSizes[0], n = cSizes[1];
  int64_t k = transA ? aSizes[0] : aSizes[1];
  if (m == 0 || n == 0) return;
  if (cStrides[1] != 1 && n > 1 && (cStrides[0] == 1 || m == 1)) {
    // A column-major C: compute its transpose, C^T[N,M] += op(B)^T · op(A)^T.
    int64_t tSizes[2] = {cSizes[1], cSizes[0]}, tStrides[2] = {cStrides[1], cStrides[0]};
    return gemm2d(b, bSizes, bStrides, a, aSizes, aStrides, c, tSizes, tStrides, !transB, !transA,
                  accumulate, parallel);
  }
  if (parallel) {
    gemmStats().calls++;
    gemmStats().flops += 2.0 * m * n * k;
  }
  Operand A = operand(a, aSizes, aStrides, transA), B = operand(b, bSizes, bStrides, transB);
  if (k == 0) {
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) c[i * cStrides[0] + j * cStrides[1]] = 0;
    return;
  }
  if (A.ok && B.ok && (cStrides[1] == 1 || n == 1)) {
    int64_t ldc = std::max<int64_t>(m == 1 ? n : cStrides[0], n);
    // An output at most 16 columns wide (an MoE router's): the runtime's own kernels read the
    // wide operand once at memory speed, where BLAS runs such shapes far below it.
    if (!A.overlapping && !B.overlapping &&
        skinnyGemm(A.data, A.ld, A.transposed, B.data, B.ld, B.transposed, c, ldc, m, n, k,
                   accumulate, parallel))
      return;
    // The kernels' packing reads any ld: a window needs no copy of its own.
    if (library().own || (library().ownWindows && A.overlapping && !A.transposed)) {
      packedGemm(A.data, A.ld, A.transposed, B.data, B.ld, B.transposed, c, ldc, m, n, k,
                 accumulate, parallel);
      return;
    }
    Blas call{A, B, c, m, n, k, ldc, accumulate};
    // Big enough to be worth splitting: kParts blocks, over the pool (`parallel`) or one after
    // the other on this thread (a batch's worker); the same blocks either way.
    if (worthSplitting(m, n, k)) {
      call.splitRows = m >= n;
      call.parts = std::clamp<int64_t>(std::max(m, n) / 128, 1, kParts);
      if (parallel && poolThreads() > 1) parallelFor(0, call.parts, runBlock, &call);
      else runBlock(&call, 0, call.parts);
      return;
    }
    runBlas(call, 0, m, 0, n);
    return;
  }
  // Views BLAS cannot take (no unit stride): plain loops. The compiler only emits calls for
  // views with a unit stride, so this is a safety net.
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        float x = transA ? a[p * aStrides[0] + i * aStrides[1]] : a[i * aStrides[0] + p * aStrides[1]];
        float y = transB ? b[j * bStrides[0] + p * bStrides[1]] : b[p * bStrides[0] + j * bStrides[1]];
        sum += x * y;
      }
      float &out = c[i * cStrides[0] + j * cStrides[1]];
      out = accumulate ? out + sum : sum;
    }
}

}  // namespace

void useSingleThreadedBlas() { openblas_set_num_threads(1); }

Status selectGemmLibrary(std::string *name) {
  const stepc::rt::Library &lib = stepc::rt::library();
  if (name) *name = lib.name;
  if (!lib.error.empty()) return Status::error(lib.error);
  return {};
}

GemmStats &gemmStats() {
  static GemmStats stats;
  return stats;
}

}  // namespace stepc::rt

using stepc::rt::StridedMemRef;

void _mlir_ciface_stepc_matmul_f32(StridedMemRef<2> *a, StridedMemRef<2> *b, StridedMemRef<2> *c,
                                   int64_t transA, int64_t transB, int64_t accumulate) {
  stepc::rt::gemm2d(a->data + a->offset, a->sizes, a->strides, b->data + b->offset, b->sizes,
                    b->strides, c->data + c->offset, c->sizes, c->strides, transA != 0,
                    transB != 0, accumulate != 0);
}

namespace {

struct BatchCall {
  StridedMemRef<3> *a, *b, *c;
  bool transA, transB, accumulate, parallel;
  struct Trim {
    int64_t rows = 0, depth = 0;  // the GEMM's m and k once trimmed (trimBatch)
  };
  std::vector<Trim> trim;     // by batch index
  std::vector<int64_t> busy;  // the GEMMs with work left
};

// Batch index i of a [batch, rows, cols] view: its first element.
float *batchSlice(const StridedMemRef<3> *m, int64_t i) {
  return m->data + m->offset + i * m->strides[0];
}

// Whether a stored [rows, cols] slice's row `r` holds only zeros (+0 or -0; NaN is not zero).
bool zeroRow(const float *data, int64_t r, int64_t cols, const int64_t *strides) {
  const float *row = data + r * strides[0];
  if (strides[1] == 1) {
    // The bits but the sign, or'd over the row: a loop without an exit, which vectorizes.
    uint32_t any = 0;
    for (int64_t c = 0; c < cols; ++c) {
      uint32_t bits;
      std::memcpy(&bits, row + c, sizeof bits);
      any |= bits & 0x7fffffffu;
    }
    return any == 0;
  }
  for (int64_t c = 0; c < cols; ++c)
    if (row[c * strides[1]] != 0.0f) return false;
  return true;
}

// How many of a stored [rows, cols] slice's last rows hold only zeros. It stops at the first
// row from the end with anything else, so a full slice costs one row's read.
int64_t trailingZeroRows(const float *data, int64_t rows, int64_t cols, const int64_t *strides) {
  int64_t zero = 0;
  while (zero < rows && zeroRow(data, rows - 1 - zero, cols, strides)) ++zero;
  return zero;
}

// One GEMM of the batch trimmed to the rows and the reduction that can be nonzero. An MoE's
// experts hold their tokens in their first slots ([E, C, D] buffers of static shape: a slot
// past the expert's load is a zero row, route_tokens and route_experts fill them in order), and
// with skewed routing most slots are empty: a PyTorch MoE that sorts by expert computes only
// the tokens that fit. So A's trailing zero rows (C's rows: zeros, written instead of computed)
// and the trailing zero rows of the operand stored along the reduction (A transposed, B not:
// the weight gradients' sum over the slots, which stops at the last one in use) are left out.
// The sums over the rows kept are the same sums: only terms 0 · x are dropped, which change
// nothing for a finite x (a NaN or infinity in the other operand would have made those zero
// rows NaN; they are the rows no token reads). The trimmed shape depends on the data alone, not
// on the threads, so the bits do not either.
void trimBatch(BatchCall &call, int64_t i) {
  const float *a = batchSlice(call.a, i), *b = batchSlice(call.b, i);
  float *c = batchSlice(call.c, i);
  const int64_t *cStrides = call.c->strides + 1;
  int64_t m = call.c->sizes[1], n = call.c->sizes[2];
  int64_t k = call.transA ? call.a->sizes[1] : call.a->sizes[2];
  int64_t rows = m, unused = 0;
  if (!call.transA) rows -= trailingZeroRows(a, m, k, call.a->strides + 1);
  else unused = trailingZeroRows(a, k, m, call.a->strides + 1);
  if (!call.transB && unused < k && rows > 0)
    unused = std::max(unused, trailingZeroRows(b, k, n, call.b->strides + 1));
  int64_t depth = k - unused;
  if (depth == 0) rows = 0;
  if (!call.accumulate)
    for (int64_t r = rows; r < m; ++r) {  // the rows left out: zeros
      float *row = c + r * cStrides[0];
      if (cStrides[1] == 1) std::memset(row, 0, static_cast<size_t>(n) * sizeof(float));
      else
        for (int64_t j = 0; j < n; ++j) row[j * cStrides[1]] = 0.0f;
    }
  call.trim[i] = {rows, depth};
}

void trimBatches(void *context, int64_t lo, int64_t hi) {
  BatchCall &call = *static_cast<BatchCall *>(context);
  for (int64_t i = lo; i < hi; ++i) trimBatch(call, i);
}

void runBatch(const BatchCall &call, int64_t i) {
  auto [rows, depth] = call.trim[i];
  int64_t aSizes[2] = {call.a->sizes[1], call.a->sizes[2]};
  int64_t bSizes[2] = {call.b->sizes[1], call.b->sizes[2]};
  int64_t cSizes[2] = {rows, call.c->sizes[2]};
  if (call.transA) aSizes[0] = depth;
  else aSizes[0] = rows, aSizes[1] = depth;
  if (call.transB) bSizes[1] = depth;
  else bSizes[0] = depth;
  stepc::rt::gemm2d(batchSlice(call.a, i), aSizes, call.a->strides + 1, batchSlice(call.b, i),
                    bSizes, call.b->strides + 1, batchSlice(call.c, i), cSizes,
                    call.c->strides + 1, call.transA, call.transB, call.accumulate,
                    call.parallel);
}

void runBatches(void *context, int64_t lo, int64_t hi) {
  const BatchCall &call = *static_cast<const BatchCall *>(context);
  for (int64_t i = lo; i < hi; ++i) runBatch(call, call.busy[i]);
}

}  // namespace

// A batch of at least two GEMMs per thread (an MoE's experts: E GEMMs of T·k/E rows) runs its
// GEMMs side by side, each whole on one thread, instead of one after the other each split over
// the threads: the blocks of a split GEMM of 512 rows were too small for BLAS to run at full
// speed (an E = 8 layer's GEMMs at 165 against a dense layer's 214 GFLOP/s). Each GEMM then runs
// its blocks (gemm2d's fixed split) one after the other on one thread: the same BLAS calls as
// any other thread count, so the bits are the same. The GEMMs are trimmed first (trimBatch: an
// expert's empty slots), and only those with work left count: a skewed router's one busy
// expert is split over the threads, not run on one while the others idle.
void _mlir_ciface_stepc_batch_matmul_f32(StridedMemRef<3> *a, StridedMemRef<3> *b,
                                         StridedMemRef<3> *c, int64_t transA, int64_t transB,
                                         int64_t accumulate) {
  int64_t batches = c->sizes[0], threads = stepc::rt::poolThreads();
  BatchCall call{a, b, c, transA != 0, transB != 0, accumulate != 0, true, {}, {}};
  call.trim.resize(static_cast<size_t>(batches));
  if (threads > 1 && batches > 1) stepc::rt::parallelFor(0, batches, trimBatches, &call);
  else trimBatches(&call, 0, batches);
  double flops = 0;
  for (int64_t i = 0; i < batches; ++i)
    if (auto [rows, depth] = call.trim[i]; rows > 0) {
      call.busy.push_back(i);
      flops += 2.0 * static_cast<double>(rows) * c->sizes[2] * depth;
    }
  stepc::rt::profileFlopsRun(flops);
  int64_t busy = static_cast<int64_t>(call.busy.size());
  if (threads > 1 && busy >= 2 * threads) {
    stepc::rt::gemmStats().calls += busy;
    stepc::rt::gemmStats().flops += flops;
    call.parallel = false;
    stepc::rt::parallelFor(0, busy, runBatches, &call);
    return;
  }
  runBatches(&call, 0, busy);
}

namespace {

// stepc_batch_matmul_gathered_f32: batch e's A is rows of `src` picked by ids[e, :] (an MoE's
// dispatch: slot c of expert e holds token row ids[e, c] / group, or zeros for -1), packed
// straight from src by the runtime's kernels, so the [E, C, D] copy is never written or read.
struct GatheredCall {
  const StridedMemRef<2> *src;  // gathered: the rows' source; masked: null, A's own rows
  const StridedMemRef<3> *a;
  const StridedMemRef<3> *b;
  StridedMemRef<3> *c;
  const StridedMemRef<2, int32_t> *ids;
  int64_t group;
  bool transA, transB, accumulate;
  std::vector<const float *> rows;  // batch e's stored rows of A at [e · slots, (e + 1) · slots)
  std::vector<int64_t> used;        // by batch: its rows up to the last one present
  std::vector<int64_t> busy;        // the batches with work
};

// Batch e's row pointers and how many rows are in use, and the rows of C it leaves out: zeros
// (an expert's slots past its last token, or all of C when it has none and A is the
// transposed operand: the weight gradient of an expert with no tokens). The ids are clamped
// to src as the gather they replace clamps them.
void pointRows(GatheredCall &call, int64_t e) {
  int64_t slots = call.ids->sizes[1];
  const int32_t *id = call.ids->data + call.ids->offset + e * call.ids->strides[0];
  const float **rows = call.rows.data() + e * slots;
  int64_t used = 0;
  if (call.src) {
    int64_t limit = call.src->sizes[0] * call.group - 1;
    const float *base = call.src->data + call.src->offset;
    for (int64_t r = 0; r < slots; ++r) {
      int64_t v = id[r * call.ids->strides[1]];
      rows[r] = v < 0 ? nullptr : base + std::min(v, limit) / call.group * call.src->strides[0];
      if (v >= 0) used = r + 1;
    }
  } else {
    const float *base = batchSlice(call.a, e);
    for (int64_t r = 0; r < slots; ++r) {
      bool present = id[r * call.ids->strides[1]] >= 0;
      rows[r] = present ? base + r * call.a->strides[1] : nullptr;
      if (present) used = r + 1;
    }
  }
  call.used[e] = used;
}

void prepareGathered(GatheredCall &call, int64_t e) {
  pointRows(call, e);
  if (call.accumulate) return;
  int64_t used = call.used[e], m = call.c->sizes[1], n = call.c->sizes[2];
  int64_t from = call.transA ? (used == 0 ? 0 : m) : used;
  float *c = batchSlice(call.c, e);
  for (int64_t r = from; r < m; ++r)
    std::memset(c + r * call.c->strides[1], 0, static_cast<size_t>(n) * sizeof(float));
}

void prepareGatheredRange(void *context, int64_t lo, int64_t hi) {
  GatheredCall &call = *static_cast<GatheredCall *>(context);
  for (int64_t e = lo; e < hi; ++e) prepareGathered(call, e);
}

void runGathered(const GatheredCall &call, int64_t e, bool parallel) {
  int64_t slots = call.ids->sizes[1], used = call.used[e];
  int64_t m = call.transA ? call.c->sizes[1] : used, n = call.c->sizes[2];
  int64_t k = call.transA ? used : call.src ? call.src->sizes[1] : call.a->sizes[2];
  stepc::rt::Operand B = stepc::rt::operand(batchSlice(call.b, e), call.b->sizes + 1,
                                            call.b->strides + 1, call.transB);
  stepc::rt::packedGemmRows(call.rows.data() + e * slots, call.transA, B.data, B.ld,
                            B.transposed, batchSlice(call.c, e), call.c->strides[1], m, n, k,
                            call.accumulate, parallel);
}

// A's rows copied into a buffer (zeros for the rows left out), then the plain batched GEMM:
// where the runtime's kernels do not run, the copy the compiler left out is paid here.
void runOnCopy(GatheredCall call) {
  int64_t batches = call.ids->sizes[0], slots = call.ids->sizes[1];
  int64_t width = call.src ? call.src->sizes[1] : call.a->sizes[2];
  int64_t step = call.src ? call.src->strides[1] : call.a->strides[2];
  call.rows.resize(static_cast<size_t>(batches * slots));
  call.used.resize(static_cast<size_t>(batches));
  std::vector<float> copy(static_cast<size_t>(batches * slots * width), 0.0f);
  for (int64_t e = 0; e < batches; ++e) {
    pointRows(call, e);
    for (int64_t r = 0; r < slots; ++r)
      if (const float *row = call.rows[e * slots + r])
        for (int64_t j = 0; j < width; ++j) copy[(e * slots + r) * width + j] = row[j * step];
  }
  StridedMemRef<3> a{copy.data(), copy.data(), 0, {batches, slots, width},
                     {slots * width, width, 1}};
  _mlir_ciface_stepc_batch_matmul_f32(&a, const_cast<StridedMemRef<3> *>(call.b), call.c,
                                      call.transA, call.transB, call.accumulate);
}

void runGatheredRange(void *context, int64_t lo, int64_t hi) {
  const GatheredCall &call = *static_cast<const GatheredCall *>(context);
  for (int64_t i = lo; i < hi; ++i) runGathered(call, call.busy[i], false);
}

void runGatheredCall(GatheredCall call) {
  int64_t batches = call.ids->sizes[0], slots = call.ids->sizes[1];
  int64_t threads = stepc::rt::poolThreads();
  call.rows.resize(static_cast<size_t>(batches * slots));
  call.used.resize(static_cast<size_t>(batches));
  if (threads > 1 && batches > 1) stepc::rt::parallelFor(0, batches, prepareGatheredRange, &call);
  else prepareGatheredRange(&call, 0, batches);
  double flops = 0;
  int64_t width = call.src ? call.src->sizes[1] : call.a->sizes[2];
  for (int64_t e = 0; e < batches; ++e)
    if (int64_t used = call.used[e]; used > 0) {
      call.busy.push_back(e);
      flops += 2.0 * static_cast<double>(call.c->sizes[2]) *
               (call.transA ? static_cast<double>(call.c->sizes[1]) * used
                            : static_cast<double>(used) * width);
    }
  stepc::rt::profileFlopsRun(flops);
  int64_t busy = static_cast<int64_t>(call.busy.size());
  stepc::rt::gemmStats().calls += busy;
  stepc::rt::gemmStats().flops += flops;
  // As the plain batched GEMM: side by side when there are two busy experts per thread, else
  // each split over the threads. The kernels' bits depend on the shape alone.
  if (threads > 1 && busy >= 2 * threads) {
    stepc::rt::parallelFor(0, busy, runGatheredRange, &call);
    return;
  }
  for (int64_t e : call.busy) runGathered(call, e, true);
}

}  // namespace

// Where the runtime's kernels cannot run (no AVX-512, or STEPC_GEMM names a library) or a view
// is not one they take, A is gathered into a buffer and the plain batched GEMM runs on it: the
// same result, the copy the compiler left out paid here.
void _mlir_ciface_stepc_batch_matmul_gathered_f32(StridedMemRef<2> *src, StridedMemRef<3> *b,
                                                  StridedMemRef<3> *c,
                                                  StridedMemRef<2, int32_t> *ids, int64_t group,
                                                  int64_t transA, int64_t transB,
                                                  int64_t accumulate) {
  int64_t width = src->sizes[1];
  stepc::rt::Operand B = stepc::rt::operand(b->data + b->offset, b->sizes + 1, b->strides + 1,
                                            transB != 0);
  // The runtime's kernels pack the rows, unless STEPC_GEMM names a library for every GEMM.
  const stepc::rt::Library &lib = stepc::rt::library();
  bool own = (lib.own || lib.ownWindows) && (src->strides[1] == 1 || width == 1) && B.ok &&
             !B.overlapping && (c->strides[2] == 1 || c->sizes[2] == 1) && group >= 1;
  GatheredCall call{src, nullptr, b, c, ids, std::max<int64_t>(group, 1), transA != 0, transB != 0,
                    accumulate != 0, {}, {}, {}};
  if (!own) return runOnCopy(std::move(call));
  runGatheredCall(std::move(call));
}

// The routing's empty slots are known zero rows of A (--step-gathered-gemms proved it): the
// ids say which rows to leave out, where the plain batched GEMM reads them to find out.
void _mlir_ciface_stepc_batch_matmul_masked_f32(StridedMemRef<3> *a, StridedMemRef<3> *b,
                                                StridedMemRef<3> *c,
                                                StridedMemRef<2, int32_t> *ids, int64_t transA,
                                                int64_t transB, int64_t accumulate) {
  stepc::rt::Operand B = stepc::rt::operand(b->data + b->offset, b->sizes + 1, b->strides + 1,
                                            transB != 0);
  const stepc::rt::Library &lib = stepc::rt::library();
  bool own = (lib.own || lib.ownWindows) && (a->strides[2] == 1 || a->sizes[2] == 1) &&
             B.ok && !B.overlapping && (c->strides[2] == 1 || c->sizes[2] == 1) &&
             ids->sizes[0] == a->sizes[0] && ids->sizes[1] == a->sizes[1];
  GatheredCall call{nullptr, a, b, c, ids, 1, transA != 0, transB != 0, accumulate != 0,
                    {}, {}, {}};
  if (!own) return runOnCopy(std::move(call));  // the masked rows are not read there either
  runGatheredCall(std::move(call));
}

void _mlir_ciface_stepc_matmul_epilogue_f32(StridedMemRef<2> *a, StridedMemRef<2> *b,
                                            StridedMemRef<2> *d, StridedMemRef<1> *bias,
                                            StridedMemRef<2> *residual, int64_t transA,
                                            int64_t transB, int64_t flags) {
  float *out = d->data + d->offset;
  int64_t m = d->sizes[0], n = d->sizes[1];
  bool hasResidual = flags & 1, gelu = flags & 2, geluGrad = flags & 4;
  if (geluGrad) {
    // D = op(A)·op(B) · gelu'(X), X in the residual slot; in the order the VJP's kernel computes.
    stepc::rt::gemm2d(a->data + a->offset, a->sizes, a->strides, b->data + b->offset, b->sizes,
                      b->strides, out, d->sizes, d->strides, transA != 0, transB != 0, false);
    const float *xs = residual->data + residual->offset;
    constexpr float k = 0.7978845608028654f, c = 0.044715f;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float x = xs[i * residual->strides[0] + j * residual->strides[1]];
        float x2 = x * x;
        float t = std::tanh((x + (x2 * x) * c) * k);
        float du = (x2 * (3 * c) + 1.0f) * k;
        float dgelu = (t + 1.0f) * 0.5f + (x * 0.5f) * ((1.0f - t * t) * du);
        out[i * d->strides[0] + j * d->strides[1]] *= dgelu;
      }
    if (flags & 8) {  // the bias gradient: D's column sums, row after row
      float *g = bias->data + bias->offset;
      for (int64_t j = 0; j < n; ++j) g[j * bias->strides[0]] = 0.0f;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          g[j * bias->strides[0]] += out[i * d->strides[0] + j * d->strides[1]];
    }
    return;
  }
  if (hasResidual) {
    const float *r = residual->data + residual->offset;
    if (r != out)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          out[i * d->strides[0] + j * d->strides[1]] =
              r[i * residual->strides[0] + j * residual->strides[1]];
  }
  stepc::rt::gemm2d(a->data + a->offset, a->sizes, a->strides, b->data + b->offset, b->sizes,
                    b->strides, out, d->sizes, d->strides, transA != 0, transB != 0,
                    hasResidual != 0);
  if (flags & 16) {  // the bias gradient of B (not transposed): its column sums, row after row
    const float *x = b->data + b->offset;
    float *g = bias->data + bias->offset;
    for (int64_t j = 0; j < b->sizes[1]; ++j) g[j * bias->strides[0]] = 0.0f;
    for (int64_t p = 0; p < b->sizes[0]; ++p)
      for (int64_t j = 0; j < b->sizes[1]; ++j)
        g[j * bias->strides[0]] += x[p * b->strides[0] + j * b->strides[1]];
    return;
  }
  const float *v = bias->data + bias->offset;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float &x = out[i * d->strides[0] + j * d->strides[1]];
      x += v[j * bias->strides[0]];
      if (gelu) {  // step.gelu's tanh form, in the order the compiled kernel computes it
        float inner = 0.7978845608028654f * (x + 0.044715f * ((x * x) * x));
        x = (0.5f * x) * (1.0f + std::tanh(inner));
      }
    }
}

namespace {

// A bf16 view widened to a contiguous row-major f32 matrix (sizes kept), for the f32 GEMM.
std::vector<float> widen(const stepc::rt::Bf16 *data, const int64_t *sizes,
                         const int64_t *strides) {
  std::vector<float> out(static_cast<size_t>(sizes[0] * sizes[1]));
  for (int64_t i = 0; i < sizes[0]; ++i)
    for (int64_t j = 0; j < sizes[1]; ++j) {
      uint32_t bits = uint32_t{data[i * strides[0] + j * strides[1]]} << 16;
      std::memcpy(&out[static_cast<size_t>(i * sizes[1] + j)], &bits, sizeof bits);
    }
  return out;
}

void gemmBf16(const stepc::rt::Bf16 *a, const int64_t *aSizes, const int64_t *aStrides,
              const stepc::rt::Bf16 *b, const int64_t *bSizes, const int64_t *bStrides, float *c,
              const int64_t *cSizes, const int64_t *cStrides, bool transA, bool transB,
              bool accumulate) {
  std::vector<float> wa = widen(a, aSizes, aStrides), wb = widen(b, bSizes, bStrides);
  int64_t sa[2] = {aSizes[1], 1}, sb[2] = {bSizes[1], 1};
  stepc::rt::gemm2d(wa.data(), aSizes, sa, wb.data(), bSizes, sb, c, cSizes, cStrides, transA,
                    transB, accumulate);
}

}  // namespace

void _mlir_ciface_stepc_matmul_bf16(StridedMemRef<2, stepc::rt::Bf16> *a,
                                    StridedMemRef<2, stepc::rt::Bf16> *b, StridedMemRef<2> *c,
                                    int64_t transA, int64_t transB, int64_t accumulate) {
  gemmBf16(a->data + a->offset, a->sizes, a->strides, b->data + b->offset, b->sizes, b->strides,
           c->data + c->offset, c->sizes, c->strides, transA != 0, transB != 0, accumulate != 0);
}

void _mlir_ciface_stepc_batch_matmul_bf16(StridedMemRef<3, stepc::rt::Bf16> *a,
                                          StridedMemRef<3, stepc::rt::Bf16> *b,
                                          StridedMemRef<3> *c, int64_t transA, int64_t transB,
                                          int64_t accumulate) {
  for (int64_t i = 0; i < c->sizes[0]; ++i)
    gemmBf16(a->data + a->offset + i * a->strides[0], a->sizes + 1, a->strides + 1,
             b->data + b->offset + i * b->strides[0], b->sizes + 1, b->strides + 1,
             c->data + c->offset + i * c->strides[0], c->sizes + 1, c->strides + 1, transA != 0,
             transB != 0, accumulate != 0);
}
