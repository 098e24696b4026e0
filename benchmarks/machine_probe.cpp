// The machine's limits, measured (the denominators of the benchmarks' "% of peak"):
//   fma    the peak fp32 FMA rate: 16 independent vector accumulators (enough to cover the FMA
//          latency on every x86 core we target), AVX-512 when the CPU has it, else AVX2 + FMA,
//          per thread and on T threads at once;
//   triad  the memory bandwidth: a[i] = b[i] + s * c[i] over three 64 MiB arrays, counting the
//          12 bytes per element the loop reads and writes (not the write-allocate reads), on 1
//          and on T threads.
// Prints one JSON object: {"isa", "threads", "fma_gflops_1", "fma_gflops_t", "triad_gbs_1",
// "triad_gbs_t"}, each the best of 5 runs. Build: g++ -O2 -std=c++17 -pthread (no -march: the
// kernels carry their own target attributes and the CPU is asked at run time).
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

__attribute__((target("avx512f"))) float fma512(long iters) {
  __m512 acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = _mm512_set1_ps(1.0f + i * 1e-3f);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long n = 0; n < iters; ++n)
    // Unrolled, so the accumulators live in registers: as a loop over the array (GCC -O2 does
    // not unroll it) every FMA went through memory and the probe read 56 GFLOP/s per core on
    // this Zen 5 instead of 185, a third of the peak, so "% of peak" figures before 2026-12-02
    // were three times too high.
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  __m512 s = acc[0];
  for (int i = 1; i < 16; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) float fma256(long iters) {
  __m256 acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = _mm256_set1_ps(1.0f + i * 1e-3f);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long n = 0; n < iters; ++n)
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  __m256 s = acc[0];
  for (int i = 1; i < 16; ++i) s = _mm256_add_ps(s, acc[i]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0];
}

// GFLOP/s of `threads` threads each running the FMA loop; best of 5.
double fmaRate(bool avx512, int threads) {
  const long iters = 20'000'000;
  const double flops = 2.0 * 16 * (avx512 ? 16 : 8) * iters * threads;
  double best = 0;
  volatile float sink = 0;
  for (int run = 0; run < 5; ++run) {
    std::vector<std::thread> pool;
    std::vector<float> out(threads);
    double t0 = now();
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] { out[t] = avx512 ? fma512(iters) : fma256(iters); });
    for (auto &th : pool) th.join();
    best = std::max(best, flops / (now() - t0) / 1e9);
    for (float v : out) sink = sink + v;
  }
  return best;
}

// GB/s of the triad on `threads` threads, each on its share of the arrays; best of 5.
double triadRate(int threads) {
  const size_t n = (64u << 20) / sizeof(float);
  std::vector<float> a(n, 0.0f), b(n, 1.0f), c(n, 2.0f);
  double best = 0;
  for (int run = 0; run < 5; ++run) {
    std::vector<std::thread> pool;
    double t0 = now();
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        size_t lo = n * t / threads, hi = n * (t + 1) / threads;
        for (size_t i = lo; i < hi; ++i) a[i] = b[i] + 3.0f * c[i];
      });
    for (auto &th : pool) th.join();
    best = std::max(best, 12.0 * n / (now() - t0) / 1e9);
  }
  if (a[n / 2] != 7.0f) std::fprintf(stderr, "machine_probe: triad check failed\n");
  return best;
}

}  // namespace

int main(int argc, char **argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : static_cast<int>(std::thread::hardware_concurrency());
  if (threads < 1) threads = 1;
  bool avx512 = __builtin_cpu_supports("avx512f");
  if (!avx512 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
    std::fprintf(stderr, "machine_probe: needs AVX2 + FMA or AVX-512\n");
    return 1;
  }
  std::printf("{\"isa\": \"%s\", \"threads\": %d, \"fma_gflops_1\": %.1f, \"fma_gflops_t\": %.1f, "
              "\"triad_gbs_1\": %.1f, \"triad_gbs_t\": %.1f}\n",
              avx512 ? "avx512" : "avx2", threads, fmaRate(avx512, 1), fmaRate(avx512, threads),
              triadRate(1), triadRate(threads));
  return 0;
}
