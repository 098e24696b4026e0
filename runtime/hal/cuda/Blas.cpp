//===- Blas.cpp - the CUDA step's GEMMs on cuBLASLt -----------------------===//
//
// See Blas.h. cuBLASLt's handle and a 32 MiB workspace are kept for the process (made on the
// first GEMM, which runs outside graph capture); the descriptors and the heuristic's choice of
// one call are made and freed around it. That host work is redone when the step is captured
// and, with graphs off, on every call (no cache by shape yet). Failures
// are recorded on the session (Session::recordError) for the step to report.
//
//===----------------------------------------------------------------------===//
#include "runtime/hal/cuda/Blas.h"

#include <dlfcn.h>

#include <algorithm>
#include <tuple>
#include <type_traits>
#include <vector>

#include "runtime/hal/Gemm.h"
#include "runtime/hal/cuda/Session.h"

namespace stepc::rt::cuda {

LtGemm planGemm(const int64_t *aSizes, const int64_t *aStrides, bool transA,
                const int64_t *bSizes, const int64_t *bStrides, bool transB,
                const int64_t *dSizes, const int64_t *dStrides) {
  LtGemm g;
  g.m = dSizes[0];
  g.n = dSizes[1];
  g.k = transA ? aSizes[0] : aSizes[1];
  if (dStrides[1] != 1 && g.n > 1) {
    g.error = "the CUDA GEMM needs a row-major output (unit column stride)";
    return g;
  }
  // A row-major stored matrix (rows x cols, ld) is column-major cols x rows with the same ld.
  auto stored = [](const int64_t *sizes, const int64_t *strides, bool trans, LtMatrix &out,
                   bool &flag) {
    Operand op = operand(nullptr, sizes, strides, trans);
    if (!op.ok) return false;
    bool flipped = op.transposed != trans;  // a column-major view: stored as its transpose
    // Rows that overlap (a broadcast, stride 0) are not a matrix cuBLASLt can read.
    if (flipped ? sizes[1] > 1 && strides[1] < sizes[0] : sizes[0] > 1 && strides[0] < sizes[1])
      return false;
    int64_t rows = flipped ? sizes[1] : sizes[0], cols = flipped ? sizes[0] : sizes[1];
    out = LtMatrix{static_cast<uint64_t>(cols), static_cast<uint64_t>(rows),
                   std::max<int64_t>(op.ld, 1)};
    flag = op.transposed;
    return true;
  };
  if (!stored(bSizes, bStrides, transB, g.a, g.transA) ||
      !stored(aSizes, aStrides, transA, g.b, g.transB)) {
    g.error = "a GEMM view without a unit stride, or with overlapping rows, cannot run on "
              "cuBLASLt";
    return g;
  }
  if (g.m > 1 && dStrides[0] < g.n) {
    g.error = "the CUDA GEMM's output rows overlap (row stride below the row length)";
    return g;
  }
  int64_t ldd = g.m == 1 ? g.n : dStrides[0];
  g.d = LtMatrix{static_cast<uint64_t>(g.n), static_cast<uint64_t>(g.m),
                 std::max<int64_t>(ldd, std::max<int64_t>(g.n, 1))};
  return g;
}

LtGemm planColumnSums(int64_t rows, int64_t cols, int64_t ld) {
  int64_t onesSizes[2] = {1, rows}, onesStrides[2] = {rows, 1};
  int64_t mSizes[2] = {rows, cols}, mStrides[2] = {ld, 1};
  int64_t outSizes[2] = {1, cols}, outStrides[2] = {cols, 1};
  return planGemm(onesSizes, onesStrides, false, mSizes, mStrides, false, outSizes, outStrides);
}

namespace {

// cuBLASLt's ABI, as far as used (values from cublasLt.h / library_types.h of CUDA 12 and 13;
// declared here so the runtime builds without the toolkit's headers).
constexpr int kComputeF32 = 68;  // CUBLAS_COMPUTE_32F
constexpr int kR32F = 0;         // CUDA_R_32F
constexpr int kR16BF = 14;       // CUDA_R_16BF
constexpr int kDescTransA = 3, kDescTransB = 4, kDescEpilogue = 7, kDescBiasPointer = 8;
constexpr int kDescAuxPointer = 11, kDescAuxLd = 12;
constexpr int kLayoutBatchCount = 5, kLayoutBatchStride = 6;
constexpr int kPrefMaxWorkspace = 1;
constexpr int kPrefAlignA = 5, kPrefAlignB = 6, kPrefAlignC = 7, kPrefAlignD = 8;
constexpr uint32_t kEpilogueDefault = 1, kEpilogueBias = 4, kEpilogueGeluBias = 36,
                   kEpilogueDGelu = 192, kEpilogueDGeluBGrad = 208, kEpilogueBGradA = 256;
constexpr size_t kWorkspaceBytes = size_t{32} << 20;

struct Algo {
  uint64_t data[8];
};
struct Heuristic {  // cublasLtMatmulHeuristicResult_t
  Algo algo;
  size_t workspaceSize;
  int state;
  float wavesCount;
  int reserved[4];
};

struct Lt {
  using H = void *;
  int (*create)(H *) = nullptr;
  int (*descCreate)(H *, int, int) = nullptr;
  int (*descDestroy)(H) = nullptr;
  int (*descSet)(H, int, const void *, size_t) = nullptr;
  int (*layoutCreate)(H *, int, uint64_t, uint64_t, int64_t) = nullptr;
  int (*layoutDestroy)(H) = nullptr;
  int (*layoutSet)(H, int, const void *, size_t) = nullptr;
  int (*prefCreate)(H *) = nullptr;
  int (*prefDestroy)(H) = nullptr;
  int (*prefSet)(H, int, const void *, size_t) = nullptr;
  int (*heuristic)(H, H, H, H, H, H, H, int, Heuristic *, int *) = nullptr;
  int (*matmul)(H, H, const void *, const void *, H, const void *, H, const void *,
                const void *, H, void *, H, const Algo *, void *, size_t, void *) = nullptr;
  H handle = nullptr;
  CUdeviceptr workspace = 0;
  Status status;
  // A vector of ones on the device (column sums as GEMMs: the bias-gradient fallback).
  CUdeviceptr ones = 0;
  size_t onesCount = 0;
  std::vector<float> onesHost;  // the copy's source, kept alive
};

Lt &lt() {
  static Lt l = [] {
    Lt out;
    Session &s = Session::get();
    if (!s.status().ok()) {
      out.status = s.status();
      return out;
    }
    void *lib = nullptr;
    for (const char *name : {"libcublasLt.so.13", "libcublasLt.so.12",
                             "/usr/local/cuda/lib64/libcublasLt.so.13",
                             "/usr/local/cuda/lib64/libcublasLt.so.12"})
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
      out.status = Status::error("cannot load cuBLASLt (libcublasLt.so.13 or .12): the GEMMs of "
                                 "the CUDA step need the CUDA toolkit's cuBLASLt");
      return out;
    }
    bool all = true;
    auto get = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      all = all && fn;
    };
    get(out.create, "cublasLtCreate");
    get(out.descCreate, "cublasLtMatmulDescCreate");
    get(out.descDestroy, "cublasLtMatmulDescDestroy");
    get(out.descSet, "cublasLtMatmulDescSetAttribute");
    get(out.layoutCreate, "cublasLtMatrixLayoutCreate");
    get(out.layoutDestroy, "cublasLtMatrixLayoutDestroy");
    get(out.layoutSet, "cublasLtMatrixLayoutSetAttribute");
    get(out.prefCreate, "cublasLtMatmulPreferenceCreate");
    get(out.prefDestroy, "cublasLtMatmulPreferenceDestroy");
    get(out.prefSet, "cublasLtMatmulPreferenceSetAttribute");
    get(out.heuristic, "cublasLtMatmulAlgoGetHeuristic");
    get(out.matmul, "cublasLtMatmul");
    if (!all) {
      out.status = Status::error("cuBLASLt lacks a function the CUDA step needs");
      return out;
    }
    if (int rc = out.create(&out.handle); rc != 0) {
      out.status = Status::error("cublasLtCreate failed (status " + std::to_string(rc) + ")");
      return out;
    }
    out.status = s.driver().check(s.driver().api().cuMemAlloc(&out.workspace, kWorkspaceBytes),
                                  "cuMemAlloc (cuBLASLt's workspace)");
    return out;
  }();
  return l;
}

// One GEMM (batched with `batch` > 1 and element strides between the matrices): D = op(A)
// op(B) [+ R] [+ bias].
// The largest power of two, at most 256, dividing the address and (batched) the batch stride in
// bytes: the heuristic assumes 256-byte aligned operands unless told otherwise, and views
// with an offset (a head's slice, a column block) are not.
uint32_t alignment(const void *p, int64_t batchStrideBytes) {
  uint64_t bits = reinterpret_cast<uintptr_t>(p) | 256u;
  if (batchStrideBytes) bits |= static_cast<uint64_t>(batchStrideBytes);
  return static_cast<uint32_t>(bits & (~bits + 1));
}

void run(const LtGemm &g, const void *a, const void *b, float *d, const float *r,
         const float *bias, bool accumulate, int64_t batch, int64_t aStride, int64_t bStride,
         int64_t dStride, int inputType, bool gelu, const float *aux, int64_t auxLd,
         bool biasGradA);

// out[c] = Σ_r m[r, c] for a row-major f32 matrix (row stride ld), as the GEMM
// ones[1 x rows] · m[rows x cols]: the bias gradient when cuBLASLt has no algorithm with it
// fused. The ones are made on the first call of a step, outside graph capture, and grow then.
void columnSums(const float *m, int64_t rows, int64_t cols, int64_t ld, float *out) {
  Session &session = Session::get();
  Lt &l = lt();
  const Api &api = session.driver().api();
  if (l.onesCount < static_cast<size_t>(rows)) {
    if (l.ones) {
      if (Status st = session.driver().check(api.cuStreamSynchronize(session.stream()),
                                             "cuStreamSynchronize");
          !st.ok())
        return session.recordError(st);
      api.cuMemFree(l.ones);
      l.ones = 0;
      l.onesCount = 0;
    }
    l.onesHost.assign(static_cast<size_t>(rows), 1.0f);
    size_t bytes = l.onesHost.size() * sizeof(float);
    if (Status st = session.driver().check(api.cuMemAlloc(&l.ones, bytes), "cuMemAlloc (ones)");
        !st.ok())
      return session.recordError(st);
    if (Status st = session.driver().check(
            api.cuMemcpyHtoDAsync(l.ones, l.onesHost.data(), bytes, session.stream()),
            "cuMemcpyHtoDAsync (ones)");
        !st.ok())
      return session.recordError(st);
    l.onesCount = l.onesHost.size();
  }
  run(planColumnSums(rows, cols, ld), reinterpret_cast<const float *>(l.ones), m, out, nullptr, nullptr, false, 1, 0, 0, 0,
      kR32F, false, nullptr, 0, false);
}

// A and B are f32 or bf16 (`inputType`); C, D and the bias f32. bf16 inputs with f32
// accumulation run on the tensor cores.
// `aux` (with its leading dimension): GELU's input for the DGELU epilogue (no bias then).
// `biasGradA`: the bias pointer receives the row sums of cuBLASLt's A (= our B's column sums).
// A bias-gradient epilogue (DGELU_BGRAD, BGRADA) without an algorithm falls back to the GEMM
// without it and the gradient as column sums (columnSums), rather than failing the step.
void run(const LtGemm &g, const void *a, const void *b, float *d, const float *r,
         const float *bias, bool accumulate, int64_t batch, int64_t aStride, int64_t bStride,
         int64_t dStride, int inputType = kR32F, bool gelu = false, const float *aux = nullptr,
         int64_t auxLd = 0, bool biasGradA = false) {
  Session &session = Session::get();
  // Set up first: the first call of a step runs outside graph capture, where cuMemAlloc works.
  Lt &l = lt();
  if (!l.status.ok()) return session.recordError(l.status);
  if (!g.error.empty()) return session.recordError(Status::error(g.error));
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0)
    return session.recordError(Status::error("a GEMM with an empty inner dimension (k = 0) "
                                             "cannot run on cuBLASLt"));
  Lt::H desc = nullptr, la = nullptr, lb = nullptr, ld = nullptr, pref = nullptr;
  int rc = 0;
  bool fallback = false;
  auto check = [&](int code, const char *what) {
    if (code != 0 && rc == 0) {
      rc = code;
      session.recordError(Status::error(std::string(what) + " failed (cuBLASLt status " +
                                        std::to_string(code) + ")"));
    }
    return code == 0;
  };
  int32_t opA = g.transA ? 1 : 0, opB = g.transB ? 1 : 0;
  uint32_t epilogue = aux         ? (bias ? kEpilogueDGeluBGrad : kEpilogueDGelu)
                      : biasGradA ? kEpilogueBGradA
                      : !bias     ? kEpilogueDefault
                      : gelu  ? kEpilogueGeluBias
                              : kEpilogueBias;
  if (check(l.descCreate(&desc, kComputeF32, kR32F), "cublasLtMatmulDescCreate") &&
      check(l.descSet(desc, kDescTransA, &opA, sizeof opA), "TRANSA") &&
      check(l.descSet(desc, kDescTransB, &opB, sizeof opB), "TRANSB") &&
      check(l.descSet(desc, kDescEpilogue, &epilogue, sizeof epilogue), "EPILOGUE") &&
      (!bias || check(l.descSet(desc, kDescBiasPointer, &bias, sizeof bias), "BIAS_POINTER")) &&
      (!aux || (check(l.descSet(desc, kDescAuxPointer, &aux, sizeof aux), "EPILOGUE_AUX_POINTER") &&
                check(l.descSet(desc, kDescAuxLd, &auxLd, sizeof auxLd), "EPILOGUE_AUX_LD"))) &&
      check(l.layoutCreate(&la, inputType, g.a.rows, g.a.cols, g.a.ld), "layout A") &&
      check(l.layoutCreate(&lb, inputType, g.b.rows, g.b.cols, g.b.ld), "layout B") &&
      check(l.layoutCreate(&ld, kR32F, g.d.rows, g.d.cols, g.d.ld), "layout D")) {
    if (batch > 1) {
      int32_t count = static_cast<int32_t>(batch);
      // cuBLASLt's A is our B, its B our A.
      for (auto [layout, stride] : {std::pair{la, bStride}, std::pair{lb, aStride},
                                    std::pair{ld, dStride}})
        if (!check(l.layoutSet(layout, kLayoutBatchCount, &count, sizeof count), "BATCH_COUNT") ||
            !check(l.layoutSet(layout, kLayoutBatchStride, &stride, sizeof stride),
                   "STRIDED_BATCH_OFFSET"))
          break;
    }
    uint64_t workspace = kWorkspaceBytes;
    Heuristic best{};
    int found = 0;
    size_t inputBytes = inputType == kR16BF ? 2 : 4;
    // cuBLASLt's A is our b, its B our a; C is the residual (or D), D is d.
    uint32_t alignA = alignment(b, batch > 1 ? bStride * static_cast<int64_t>(inputBytes) : 0),
             alignB = alignment(a, batch > 1 ? aStride * static_cast<int64_t>(inputBytes) : 0),
             alignC = alignment(r ? r : d, batch > 1 ? dStride * 4 : 0),
             alignD = alignment(d, batch > 1 ? dStride * 4 : 0);
    if (rc == 0 && check(l.prefCreate(&pref), "cublasLtMatmulPreferenceCreate") &&
        check(l.prefSet(pref, kPrefMaxWorkspace, &workspace, sizeof workspace), "MAX_WORKSPACE") &&
        check(l.prefSet(pref, kPrefAlignA, &alignA, sizeof alignA), "MIN_ALIGNMENT_A") &&
        check(l.prefSet(pref, kPrefAlignB, &alignB, sizeof alignB), "MIN_ALIGNMENT_B") &&
        check(l.prefSet(pref, kPrefAlignC, &alignC, sizeof alignC), "MIN_ALIGNMENT_C") &&
        check(l.prefSet(pref, kPrefAlignD, &alignD, sizeof alignD), "MIN_ALIGNMENT_D") &&
        check(l.heuristic(l.handle, desc, la, lb, ld, ld, pref, 1, &best, &found),
              "cublasLtMatmulAlgoGetHeuristic")) {
      bool biasGradEpilogue =
          epilogue == kEpilogueDGeluBGrad || epilogue == kEpilogueBGradA;
      if ((found < 1 || best.state != 0) && biasGradEpilogue && batch == 1 &&
          inputType == kR32F) {
        fallback = true;
      } else if (found < 1 || best.state != 0) {
        session.recordError(Status::error("cuBLASLt has no algorithm for a " +
                                          std::to_string(g.m) + "x" + std::to_string(g.n) + "x" +
                                          std::to_string(g.k) + " GEMM"));
      } else {
        float one = 1, beta = (accumulate || r) ? 1.0f : 0.0f;
        const float *c = r ? r : d;
        check(l.matmul(l.handle, desc, &one, b, la, a, lb, &beta, c, ld, d, ld, &best.algo,
                       reinterpret_cast<void *>(l.workspace), kWorkspaceBytes, session.stream()),
              "cublasLtMatmul");
      }
    }
  }
  if (pref) l.prefDestroy(pref);
  for (Lt::H layout : {la, lb, ld})
    if (layout) l.layoutDestroy(layout);
  if (desc) l.descDestroy(desc);
  if (!fallback) return;
  float *gradient = const_cast<float *>(bias);
  if (aux) {
    // DGELU, then the bias gradient from D (our m x n output).
    run(g, a, b, d, r, nullptr, accumulate, 1, 0, 0, 0, inputType, false, aux, auxLd, false);
    columnSums(d, g.m, g.n, static_cast<int64_t>(g.d.ld), gradient);
  } else {
    // The plain GEMM, then the bias gradient from our B (cuBLASLt's A: k x n, untransposed).
    run(g, a, b, d, r, nullptr, accumulate, 1, 0, 0, 0, inputType);
    columnSums(static_cast<const float *>(b), static_cast<int64_t>(g.a.cols),
               static_cast<int64_t>(g.a.rows), static_cast<int64_t>(g.a.ld), gradient);
  }
}

}  // namespace

}  // namespace stepc::rt::cuda

using stepc::rt::Bf16;
using stepc::rt::StridedMemRef;
using stepc::rt::cuda::planGemm;

extern "C" void _mlir_ciface_stepc_cuda_matmul_f32(StridedMemRef<2> *a, StridedMemRef<2> *b,
                                                   StridedMemRef<2> *c, int64_t transA,
                                                   int64_t transB, int64_t accumulate) {
  auto g = planGemm(a->sizes, a->strides, transA, b->sizes, b->strides, transB, c->sizes,
                    c->strides);
  stepc::rt::cuda::run(g, a->data + a->offset, b->data + b->offset, c->data + c->offset, nullptr,
                       nullptr, accumulate != 0, 1, 0, 0, 0);
}

extern "C" void _mlir_ciface_stepc_cuda_batch_matmul_f32(StridedMemRef<3> *a,
                                                         StridedMemRef<3> *b,
                                                         StridedMemRef<3> *c, int64_t transA,
                                                         int64_t transB, int64_t accumulate) {
  auto g = planGemm(a->sizes + 1, a->strides + 1, transA, b->sizes + 1, b->strides + 1, transB,
                    c->sizes + 1, c->strides + 1);
  stepc::rt::cuda::run(g, a->data + a->offset, b->data + b->offset, c->data + c->offset, nullptr,
                       nullptr, accumulate != 0, c->sizes[0], a->strides[0], b->strides[0],
                       c->strides[0]);
}

// `x` has `d`'s shape and a unit column stride (what cuBLASLt's C or aux matrix needs).
static bool sameShapeRowMajor(const StridedMemRef<2> &x, const StridedMemRef<2> &d) {
  return x.sizes[0] == d.sizes[0] && x.sizes[1] == d.sizes[1] &&
         (x.strides[1] == 1 || d.sizes[1] <= 1);
}

extern "C" void _mlir_ciface_stepc_cuda_matmul_epilogue_f32(
    StridedMemRef<2> *a, StridedMemRef<2> *b, StridedMemRef<2> *d, StridedMemRef<1> *bias,
    StridedMemRef<2> *residual, int64_t transA, int64_t transB, int64_t flags) {
  bool hasResidual = flags & 1, gelu = flags & 2, geluGrad = flags & 4;
  auto g = planGemm(a->sizes, a->strides, transA, b->sizes, b->strides, transB, d->sizes,
                    d->strides);
  if (geluGrad) {
    // cuBLASLt's DGELU: GELU's input is the aux matrix, laid out like D, its ld a multiple of 8.
    if (!sameShapeRowMajor(*residual, *d) || residual->strides[0] % 8 != 0)
      g.error = "the CUDA GEMM's GELU input must have the output's shape, unit column stride "
                "and a row stride that is a multiple of 8";
    // With flags & 8 the bias pointer receives the bias gradient (DGELU_BGRAD).
    bool biasGrad = flags & 8;
    if (biasGrad && (bias->sizes[0] != d->sizes[1] || (bias->strides[0] != 1 && bias->sizes[0] > 1)))
      g.error = "the CUDA GEMM's bias gradient must be contiguous, one value per output column";
    return stepc::rt::cuda::run(g, a->data + a->offset, b->data + b->offset, d->data + d->offset,
                                nullptr, biasGrad ? bias->data + bias->offset : nullptr, false, 1,
                                0, 0, 0, stepc::rt::cuda::kR32F, false,
                                residual->data + residual->offset, residual->strides[0]);
  }
  if (flags & 16) {
    // BGRADA: the bias gradient from cuBLASLt's A (our B), which must not be transposed.
    if (transB || g.transA || bias->sizes[0] != d->sizes[1] ||
        (bias->strides[0] != 1 && bias->sizes[0] > 1))
      g.error = "the CUDA GEMM's bias gradient needs an untransposed B and a contiguous "
                "gradient, one value per output column";
    return stepc::rt::cuda::run(g, a->data + a->offset, b->data + b->offset, d->data + d->offset,
                                hasResidual ? residual->data + residual->offset : nullptr,
                                bias->data + bias->offset, false, 1, 0, 0, 0,
                                stepc::rt::cuda::kR32F, false, nullptr, 0, /*biasGradA=*/true);
  }
  if (bias->sizes[0] != d->sizes[1] || (bias->strides[0] != 1 && bias->sizes[0] > 1))
    g.error = "the CUDA GEMM's bias must be contiguous, one value per output column";
  if (hasResidual && (!sameShapeRowMajor(*residual, *d) ||
                      (residual->strides[0] != d->strides[0] && d->sizes[0] > 1)))
    g.error = "the CUDA GEMM's residual must have the output's shape and layout";
  stepc::rt::cuda::run(g, a->data + a->offset, b->data + b->offset, d->data + d->offset,
                       hasResidual ? residual->data + residual->offset : nullptr,
                       bias->data + bias->offset, false, 1, 0, 0, 0, stepc::rt::cuda::kR32F,
                       gelu);
}

extern "C" void _mlir_ciface_stepc_cuda_matmul_bf16(StridedMemRef<2, Bf16> *a,
                                                    StridedMemRef<2, Bf16> *b,
                                                    StridedMemRef<2> *c, int64_t transA,
                                                    int64_t transB, int64_t accumulate) {
  auto g = planGemm(a->sizes, a->strides, transA, b->sizes, b->strides, transB, c->sizes,
                    c->strides);
  stepc::rt::cuda::run(g, a->data + a->offset, b->data + b->offset, c->data + c->offset, nullptr,
                       nullptr, accumulate != 0, 1, 0, 0, 0, stepc::rt::cuda::kR16BF);
}

extern "C" void _mlir_ciface_stepc_cuda_batch_matmul_bf16(StridedMemRef<3, Bf16> *a,
                                                          StridedMemRef<3, Bf16> *b,
                                                          StridedMemRef<3> *c, int64_t transA,
                                                          int64_t transB, int64_t accumulate) {
  auto g = planGemm(a->sizes + 1, a->strides + 1, transA, b->sizes + 1, b->strides + 1, transB,
                    c->sizes + 1, c->strides + 1);
  stepc::rt::cuda::run(g, a->data + a->offset, b->data + b->offset, c->data + c->offset, nullptr,
                       nullptr, accumulate != 0, c->sizes[0], a->strides[0], b->strides[0],
                       c->strides[0], stepc::rt::cuda::kR16BF);
}
