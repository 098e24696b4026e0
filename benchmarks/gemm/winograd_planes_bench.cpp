// The GEMMs of one Winograd chunk (byte_lm_residual's F(4, 7) convolution: α = 10 planes of
// [256 x 512] · [512 x 1536], the input gradient's [256 x 1536] · [512 x 1536]ᵀ and the weight
// gradient's [256 x 512]ᵀ · [256 x 1536] +=), 4 chunks a round with each chunk's lhs and
// products fresh and the transformed weights shared, as in the step. Four ways, alternating
// round by round, median of 7 rounds, the caches flushed (64 MiB written) before each round:
//   lib split   10 GEMMs one after the other, each split over the threads (stepc_matmul_f32:
//               the library's fixed column blocks, run on the pool);
//   lib batch   one stepc_batch_matmul_f32 of 10 (the runtime runs the batch's GEMMs side by
//               side, each whole on one thread: what the compiler now emits);
//   own split / own batch   the same two with the runtime's AVX-512 kernels (PackedGemm.h).
// Usage: winograd_planes_bench THREADS PEAK_GFLOPS LAYOUT   (0 forward, 1 input gradient,
// 2 weight gradient; `run_runtime_gemm.sh --planes` builds and runs all three at 1 and 2 threads).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "runtime/hal/Gemm.h"
#include "runtime/hal/cpu/PackedGemm.h"
#include "runtime/hal/cpu/ThreadPool.h"

using namespace stepc::rt;

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Planes {
  const float *a, *b;
  float *c;
  int64_t m, n, k, lda, ldb, strideA, strideB, strideC;
  bool ta, tb, accumulate;
};

void ownPlanes(void *context, int64_t lo, int64_t hi) {
  const Planes &p = *static_cast<const Planes *>(context);
  for (int64_t i = lo; i < hi; ++i)
    packedGemm(p.a + i * p.strideA, p.lda, p.ta, p.b + i * p.strideB, p.ldb, p.tb,
               p.c + i * p.strideC, p.n, p.m, p.n, p.k, p.accumulate, false);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s THREADS PEAK_GFLOPS LAYOUT(0|1|2)\n", argv[0]);
    return 2;
  }
  int threads = std::atoi(argv[1]), layout = std::atoi(argv[3]);
  double peak = std::atof(argv[2]);
  setPoolThreads(threads);
  if (!packedGemmAvailable()) {
    std::fprintf(stderr, "no AVX-512F: the runtime's kernels cannot run here\n");
    return 1;
  }
  constexpr int64_t kPlanes = 10, kChunks = 4;
  int64_t m = 256, n = 1536, k = 512;
  bool ta = false, tb = false, accumulate = false;
  if (layout == 1) { n = 512; k = 1536; tb = true; }
  if (layout == 2) { m = 512; k = 256; ta = true; accumulate = true; }
  int64_t aSize = m * k, bSize = k * n, cSize = m * n;
  std::vector<float> A(kChunks * kPlanes * aSize), B(kPlanes * bSize), C(kChunks * kPlanes * cSize);
  std::vector<float> flush((64 << 20) / sizeof(float));
  for (size_t i = 0; i < A.size(); ++i) A[i] = static_cast<float>(i % 7) * 0.1f;
  for (size_t i = 0; i < B.size(); ++i) B[i] = static_cast<float>(i % 5) * 0.1f;
  int64_t lda = ta ? m : k, ldb = tb ? k : n;
  const char *names[4] = {"lib split", "lib batch", "own split", "own batch"};
  std::vector<double> seconds[4];
  for (int round = 0; round < 7; ++round)
    for (int way = 0; way < 4; ++way) {
      for (float &f : flush) f += 1;
      double start = now();
      for (int64_t chunk = 0; chunk < kChunks; ++chunk) {
        float *a = A.data() + chunk * kPlanes * aSize, *c = C.data() + chunk * kPlanes * cSize;
        if (way == 0) {
          for (int64_t i = 0; i < kPlanes; ++i) {
            float *ai = a + i * aSize, *bi = B.data() + i * bSize, *ci = c + i * cSize;
            StridedMemRef<2> ma{ai, ai, 0, {ta ? k : m, ta ? m : k}, {lda, 1}};
            StridedMemRef<2> mb{bi, bi, 0, {tb ? n : k, tb ? k : n}, {ldb, 1}};
            StridedMemRef<2> mc{ci, ci, 0, {m, n}, {n, 1}};
            _mlir_ciface_stepc_matmul_f32(&ma, &mb, &mc, ta, tb, accumulate);
          }
        } else if (way == 1) {
          StridedMemRef<3> ma{a, a, 0, {kPlanes, ta ? k : m, ta ? m : k}, {aSize, lda, 1}};
          StridedMemRef<3> mb{B.data(), B.data(), 0, {kPlanes, tb ? n : k, tb ? k : n}, {bSize, ldb, 1}};
          StridedMemRef<3> mc{c, c, 0, {kPlanes, m, n}, {cSize, n, 1}};
          _mlir_ciface_stepc_batch_matmul_f32(&ma, &mb, &mc, ta, tb, accumulate);
        } else if (way == 2) {
          for (int64_t i = 0; i < kPlanes; ++i)
            packedGemm(a + i * aSize, lda, ta, B.data() + i * bSize, ldb, tb, c + i * cSize, n, m,
                       n, k, accumulate, true);
        } else {
          Planes p{a, B.data(), c, m, n, k, lda, ldb, aSize, bSize, cSize, ta, tb, accumulate};
          if (threads > 1) parallelFor(0, kPlanes, ownPlanes, &p);
          else ownPlanes(&p, 0, kPlanes);
        }
      }
      seconds[way].push_back(now() - start);
    }
  double flops = 2.0 * m * n * k * kPlanes * kChunks;
  for (int way = 0; way < 4; ++way) {
    std::sort(seconds[way].begin(), seconds[way].end());
    double gflops = flops / seconds[way][3] / 1e9;
    std::printf("%s %d thread(s) %-9s %7.1f ms  %6.1f GFLOP/s  %3.0f%% of peak\n",
                layout == 0 ? "forward   " : layout == 1 ? "input grad" : "weight grad", threads,
                names[way], seconds[way][3] * 1e3, gflops, peak > 0 ? 100 * gflops / peak : 0);
  }
  return 0;
}
