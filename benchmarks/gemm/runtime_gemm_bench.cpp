// The runtime's two GEMM paths on the zoo's shapes, in one process, alternating call by call:
// "library" = the blocks on oneDNN (runtime/hal/cpu/Gemm.cpp with STEPC_GEMM=onednn, as the
// step runs every GEMM whose A is not a convolution window) and "kernels" = the runtime's own
// AVX-512 packed kernels (runtime/hal/cpu/PackedGemm.h). Operands stay in the caches between
// calls (the step reads them from memory: see README.md for the in-step rates).
//
// Usage: runtime_gemm_bench THREADS PEAK_GFLOPS   (run_runtime_gemm.sh builds and runs it)
// Prints per shape and layout: median GFLOP/s of each path (21 calls), the ratio, each as a
// share of the measured peak, and the kernels' worst error against a double sum (sampled).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "runtime/hal/Gemm.h"
#include "runtime/hal/cpu/PackedGemm.h"
#include "runtime/hal/cpu/ThreadPool.h"

using namespace stepc::rt;

namespace {
double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

int main(int argc, char **argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  double peak = argc > 2 ? std::atof(argv[2]) : 0;
  setPoolThreads(threads);
  std::string name;
  if (!selectGemmLibrary(&name).ok()) {
    std::fprintf(stderr, "the library does not load: run with STEPC_GEMM=onednn\n");
    return 1;
  }
  if (!packedGemmAvailable()) {
    std::fprintf(stderr, "no AVX-512F: the runtime's kernels do not run here\n");
    return 1;
  }
  std::printf("# library: %s; %d threads; peak %.1f GFLOP/s\n", name.c_str(), threads, peak);
  struct Shape {
    const char *name;
    int64_t m, n, k;
  } shapes[] = {{"attn_in", 4096, 96, 256},     {"small_k", 4096, 256, 32},
                {"sq256", 4096, 256, 256},      {"wgrad", 256, 96, 4096},
                {"wgrad352", 352, 96, 4246},    {"wgrad32", 32, 256, 4096},
                {"wino", 1024, 1536, 512},      {"wino_dx", 1024, 512, 1536},
                {"wino_dw", 512, 1536, 1024},   {"mlp_up", 4096, 3072, 768},
                {"conv_s", 4096, 96, 352},      {"moe8_up", 1024, 128, 256},
                {"moe8_dn", 1024, 256, 128},    {"moe8_wg", 256, 128, 1024},
                {"moe64_up", 128, 512, 256},    {"moe64_wg", 256, 512, 128}};
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const Shape &s : shapes)
    for (int layout = 0; layout < 3; ++layout) {
      bool ta = layout == 2, tb = layout == 1;
      std::vector<float> a(s.m * s.k), b(s.k * s.n), c1(s.m * s.n), c2(s.m * s.n);
      for (float &x : a) x = u(rng);
      for (float &x : b) x = u(rng);
      int64_t lda = ta ? s.m : s.k, ldb = tb ? s.k : s.n;
      StridedMemRef<2> ma{a.data(), a.data(), 0, {ta ? s.k : s.m, ta ? s.m : s.k}, {lda, 1}};
      StridedMemRef<2> mb{b.data(), b.data(), 0, {tb ? s.n : s.k, tb ? s.k : s.n}, {ldb, 1}};
      StridedMemRef<2> mc{c1.data(), c1.data(), 0, {s.m, s.n}, {s.n, 1}};
      std::vector<double> lib, own;
      for (int r = 0; r < 21; ++r) {
        double t = now();
        _mlir_ciface_stepc_matmul_f32(&ma, &mb, &mc, ta, tb, 0);
        lib.push_back(now() - t);
        t = now();
        packedGemm(a.data(), lda, ta, b.data(), ldb, tb, c2.data(), s.n, s.m, s.n, s.k, false,
                   true);
        own.push_back(now() - t);
      }
      std::sort(lib.begin(), lib.end());
      std::sort(own.begin(), own.end());
      double worst = 0;
      for (int q = 0; q < 200; ++q) {
        int64_t i = rng() % s.m, j = rng() % s.n;
        double sum = 0, magnitude = 0;
        for (int64_t p = 0; p < s.k; ++p) {
          double x = ta ? a[p * lda + i] : a[i * lda + p], y = tb ? b[j * ldb + p] : b[p * ldb + j];
          sum += x * y;
          magnitude += std::fabs(x * y);
        }
        worst = std::max(worst, std::fabs(c2[i * s.n + j] - sum) / magnitude);
      }
      double flops = 2.0 * s.m * s.n * s.k, gl = flops / lib[10] / 1e9, go = flops / own[10] / 1e9;
      std::printf("%-9s %5ld %5ld %5ld %s  library %6.1f (%3.0f%%)  kernels %6.1f (%3.0f%%)  "
                  "kernels/library %.2f  err %.1e\n",
                  s.name, static_cast<long>(s.m), static_cast<long>(s.n), static_cast<long>(s.k),
                  layout == 0 ? "NN" : layout == 1 ? "NT" : "TN", gl, peak > 0 ? 100 * gl / peak : 0,
                  go, peak > 0 ? 100 * go / peak : 0, gl > 0 ? lib[10] / own[10] : 0, worst);
    }
}
