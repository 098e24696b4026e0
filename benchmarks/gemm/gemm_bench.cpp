// fp32 row-major GEMM micro-benchmark for choosing stepc's CPU GEMM library.
//
// One backend per binary, selected at compile time:
//   -DBACKEND_OPENBLAS   cblas_sgemm            (libopenblas, pthread build)
//   -DBACKEND_BLIS       bli_sgemm (typed API)  (libblis, pthread build)
//   -DBACKEND_DNNL       dnnl_sgemm             (oneDNN)
//
// Usage: gemm_bench <threads> [reps|check]   ("check": numerical check only)
// Prints one line per (shape, variant): name M N K variant threads median_ms GFLOP/s.
// Variants: NN  C = A B      (A: MxK, B: KxN)
//           NT  C = A B^T    (A: MxK, B stored NxK)   -- e.g. dX = dY W^T
//           TN  C = A^T B    (A stored KxM, B: KxN)   -- e.g. dW = X^T dY
// All matrices row-major, packed (ld = number of columns as stored).
// Build/run everything with run.sh.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#if defined(BACKEND_OPENBLAS)
#include <cblas.h>
static const char* kBackend = "openblas";
#elif defined(BACKEND_BLIS)
#include <blis.h>  // -I/usr/include/x86_64-linux-gnu/blis-pthread
static const char* kBackend = "blis";
#elif defined(BACKEND_DNNL)
#include <dnnl.h>
static const char* kBackend = "onednn";
#else
#error "define one of BACKEND_OPENBLAS, BACKEND_BLIS, BACKEND_DNNL"
#endif

namespace {

// Row-major C[MxN] = op(A) * op(B); ta/tb: operand stored transposed.
void sgemm(bool ta, bool tb, int M, int N, int K, const float* A, const float* B, float* C) {
  const int lda = ta ? M : K;
  const int ldb = tb ? K : N;
  const int ldc = N;
#if defined(BACKEND_OPENBLAS)
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N,
              K, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
#elif defined(BACKEND_BLIS)
  float one = 1.0f, zero = 0.0f;
  // Native BLIS API: general strides. Row-major stored operand: rs = ld, cs = 1.
  bli_sgemm(ta ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, tb ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, M, N,
            K, &one, const_cast<float*>(A), lda, 1, const_cast<float*>(B), ldb, 1, &zero, C, ldc, 1);
#elif defined(BACKEND_DNNL)
  dnnl_status_t st = dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, 1.0f, A, lda, B, ldb, 0.0f,
                                C, ldc);
  if (st != dnnl_success) {
    std::fprintf(stderr, "dnnl_sgemm failed: %d\n", static_cast<int>(st));
    std::exit(1);
  }
#endif
}

void set_threads(int t) {
#if defined(BACKEND_OPENBLAS)
  openblas_set_num_threads(t);
#elif defined(BACKEND_BLIS)
  bli_thread_set_num_threads(t);
#elif defined(BACKEND_DNNL)
  // Debian's oneDNN uses the OpenMP runtime; OMP_NUM_THREADS is set by run.sh as well.
  (void)t;
#endif
}

std::string backend_info() {
#if defined(BACKEND_OPENBLAS)
  return std::string("core=") + openblas_get_corename() + " config=" + openblas_get_config();
#elif defined(BACKEND_BLIS)
  return std::string("arch=") + bli_arch_string(bli_arch_query_id()) + " version=" +
         bli_info_get_version_str();
#elif defined(BACKEND_DNNL)
  const dnnl_version_t* v = dnnl_version();
  char buf[128];
  std::snprintf(buf, sizeof buf, "version=%d.%d.%d cpu_runtime=%d isa=0x%x", v->major, v->minor,
                v->patch, v->cpu_runtime, static_cast<unsigned>(dnnl_get_effective_cpu_isa()));
  return buf;
#endif
}

void fill(std::vector<float>& v, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  for (auto& x : v) x = d(g);
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Max relative error vs. a naive double-accumulation loop, all three variants.
double check(int M, int N, int K) {
  double worst = 0;
  for (int var = 0; var < 3; ++var) {
    bool ta = var == 2, tb = var == 1;
    std::vector<float> A(size_t(M) * K), B(size_t(K) * N), C(size_t(M) * N);
    fill(A, 11 + var);
    fill(B, 17 + var);
    sgemm(ta, tb, M, N, K, A.data(), B.data(), C.data());
    double maxerr = 0, maxref = 0;
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double s = 0;
        for (int k = 0; k < K; ++k) {
          double a = ta ? A[size_t(k) * M + i] : A[size_t(i) * K + k];
          double b = tb ? B[size_t(j) * K + k] : B[size_t(k) * N + j];
          s += a * b;
        }
        maxerr = std::max(maxerr, std::fabs(s - C[size_t(i) * N + j]));
        maxref = std::max(maxref, std::fabs(s));
      }
    worst = std::max(worst, maxerr / maxref);  // normalised by max |C| (entries can be ~0)
  }
  return worst;
}

struct Shape {
  const char* name;
  int M, N, K;
};

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  const bool check_only = argc > 2 && std::strcmp(argv[2], "check") == 0;
  const int reps = std::max(5, argc > 2 && !check_only ? std::atoi(argv[2]) : 5);
  set_threads(threads);

  std::printf("# backend=%s threads=%d reps=%d %s\n", kBackend, threads, reps,
              backend_info().c_str());
  double err = check(67, 45, 123);
  std::printf("# check shape=67x45x123 NN/NT/TN max_rel_err=%.3g %s\n", err,
              err < 1e-5 ? "OK" : "FAIL");
  if (err >= 1e-5) return 2;
  if (check_only) return 0;

  const Shape shapes[] = {
      {"attn_in", 4096, 96, 256},   {"small_k", 4096, 256, 32},   {"sq256", 4096, 256, 256},
      {"wgrad", 256, 96, 4096},     {"mlp1024", 4096, 1024, 1024}, {"mlp_up", 4096, 3072, 768},
      {"mlp_wgrad", 768, 3072, 4096},
  };
  const char* vname[3] = {"NN", "NT", "TN"};

  for (const Shape& s : shapes) {
    std::vector<float> A(size_t(s.M) * s.K), B(size_t(s.K) * s.N), C(size_t(s.M) * s.N);
    fill(A, 1);
    fill(B, 2);
    std::fill(C.begin(), C.end(), 0.f);
    const double flops = 2.0 * s.M * s.N * s.K;
    for (int var = 0; var < 3; ++var) {
      bool ta = var == 2, tb = var == 1;
      // Warm-up: at least 2 calls and at least ~0.2 s.
      double t0 = now_s();
      int w = 0;
      do {
        sgemm(ta, tb, s.M, s.N, s.K, A.data(), B.data(), C.data());
        ++w;
      } while (w < 2 || now_s() - t0 < 0.2);
      // Each repetition times a batch of calls lasting >= ~20 ms (at least one call).
      double one = (now_s() - t0) / w;
      int inner = std::max(1, int(0.02 / one));
      std::vector<double> ts;
      for (int r = 0; r < reps; ++r) {
        double a = now_s();
        for (int i = 0; i < inner; ++i) sgemm(ta, tb, s.M, s.N, s.K, A.data(), B.data(), C.data());
        ts.push_back((now_s() - a) / inner);
      }
      double med = median(ts);
      std::printf("RESULT %s %s %d %d %d %s %d %.4f %.2f\n", kBackend, s.name, s.M, s.N, s.K,
                  vname[var], threads, med * 1e3, flops / med * 1e-9);
      std::fflush(stdout);
    }
  }

  // Small-GEMM case: 176 independent (245 x 96 x 32) GEMMs (per-batch, per-tap conv slices),
  // distinct A/B/C buffers per call; time is for the whole batch of 176 calls.
  {
    const int M = 245, N = 96, K = 32, CNT = 176;
    std::vector<float> A(size_t(CNT) * M * K), B(size_t(CNT) * K * N), C(size_t(CNT) * M * N);
    fill(A, 3);
    fill(B, 4);
    const double flops = 2.0 * M * N * K * CNT;
    for (int var = 0; var < 3; ++var) {
      bool ta = var == 2, tb = var == 1;
      auto batch = [&] {
        for (int i = 0; i < CNT; ++i)
          sgemm(ta, tb, M, N, K, A.data() + size_t(i) * M * K, B.data() + size_t(i) * K * N,
                C.data() + size_t(i) * M * N);
      };
      double t0 = now_s();
      int w = 0;
      do {
        batch();
        ++w;
      } while (w < 2 || now_s() - t0 < 0.2);
      std::vector<double> ts;
      for (int r = 0; r < std::max(reps, 11); ++r) {
        double a = now_s();
        batch();
        ts.push_back(now_s() - a);
      }
      double med = median(ts);
      std::printf("RESULT %s small176x %d %d %d %s %d %.4f %.2f\n", kBackend, M, N, K, vname[var],
                  threads, med * 1e3, flops / med * 1e-9);
      std::fflush(stdout);
    }
  }
  return 0;
}
