// Interpreter: matmul, batch_matmul, embedding and embedding_grad, conv1d and its gradients.
#include <cmath>
#include <functional>

#include "interpreter_test_util.h"

namespace stepc::interp::testing {
namespace {

using Contractions = InterpreterTest;

// Deterministic, distinct, non-round values.
std::vector<double> ramp(int n, double scale = 1.0) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(scale * std::sin(0.7 * i + 0.3));
  return v;
}

// C[m, n] = Σ_k A(m, k) B(k, n), with A and B given as element functions.
std::vector<double> product(int m, int k, int n, std::function<double(int, int)> a,
                            std::function<double(int, int)> b) {
  std::vector<double> c;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int p = 0; p < k; ++p) sum += a(i, p) * b(p, j);
      c.push_back(sum);
    }
  return c;
}

TEST_F(Contractions, MatmulByHand) {
  Tensor a = tensor("tensor<2x3xf64>", {1, 2, 3, 4, 5, 6});
  Tensor b = tensor("tensor<3x2xf64>", {7, 8, 9, 10, 11, 12});
  expectValues(runOp("step.matmul %a0, %a1", {a, b}, "tensor<2x2xf64>"),
               {58, 64, 139, 154});
}

TEST_F(Contractions, MatmulWithTransposes) {
  std::vector<double> a = ramp(6), b = ramp(12, 0.5);
  // transpose_lhs: lhs stored [K=3, M=2]; rhs [K=3, N=4].
  Tensor lhsT = tensor("tensor<3x2xf64>", a), rhs = tensor("tensor<3x4xf64>", b);
  expectValues(runOp("step.matmul %a0, %a1 {transpose_lhs}", {lhsT, rhs}, "tensor<2x4xf64>"),
               product(2, 3, 4, [&](int m, int k) { return a[k * 2 + m]; },
                       [&](int k, int n) { return b[k * 4 + n]; }));
  // transpose_rhs: lhs [M=2, K=3]; rhs stored [N=4, K=3].
  Tensor lhs = tensor("tensor<2x3xf64>", a), rhsT = tensor("tensor<4x3xf64>", b);
  expectValues(runOp("step.matmul %a0, %a1 {transpose_rhs}", {lhs, rhsT}, "tensor<2x4xf64>"),
               product(2, 3, 4, [&](int m, int k) { return a[m * 3 + k]; },
                       [&](int k, int n) { return b[n * 3 + k]; }));
  // Both.
  expectValues(runOp("step.matmul %a0, %a1 {transpose_lhs, transpose_rhs}", {lhsT, rhsT},
                     "tensor<2x4xf64>"),
               product(2, 3, 4, [&](int m, int k) { return a[k * 2 + m]; },
                       [&](int k, int n) { return b[n * 3 + k]; }));
}

TEST_F(Contractions, MatmulSharesTheRightOperandOverLeadingDims) {
  std::vector<double> a = ramp(2 * 3 * 4), b = ramp(4 * 2, 2.0);
  Tensor out = runOp("step.matmul %a0, %a1",
                     {tensor("tensor<2x3x4xf64>", a), tensor("tensor<4x2xf64>", b)},
                     "tensor<2x3x2xf64>");
  std::vector<double> expected;
  for (int batch = 0; batch < 2; ++batch) {
    std::vector<double> part =
        product(3, 4, 2, [&](int m, int k) { return a[batch * 12 + m * 4 + k]; },
                [&](int k, int n) { return b[k * 2 + n]; });
    expected.insert(expected.end(), part.begin(), part.end());
  }
  expectValues(out, expected);
}

TEST_F(Contractions, BatchMatmulPerBatchWithTransposes) {
  // [2 batches] lhs [M=3, K=2], rhs stored [N=4, K=2] (transpose_rhs), like q × kᵀ.
  std::vector<double> a = ramp(2 * 3 * 2), b = ramp(2 * 4 * 2, -1.5);
  Tensor out = runOp("step.batch_matmul %a0, %a1 {transpose_rhs}",
                     {tensor("tensor<2x3x2xf64>", a), tensor("tensor<2x4x2xf64>", b)},
                     "tensor<2x3x4xf64>");
  std::vector<double> expected;
  for (int batch = 0; batch < 2; ++batch) {
    std::vector<double> part =
        product(3, 2, 4, [&](int m, int k) { return a[batch * 6 + m * 2 + k]; },
                [&](int k, int n) { return b[batch * 8 + n * 2 + k]; });
    expected.insert(expected.end(), part.begin(), part.end());
  }
  expectValues(out, expected);

  // transpose_lhs on a rank-4 operand: lhs stored [1, 2, K=3, M=2], rhs [1, 2, K=3, N=2].
  std::vector<double> c = ramp(12), d = ramp(12, 0.25);
  Tensor out2 = runOp("step.batch_matmul %a0, %a1 {transpose_lhs}",
                      {tensor("tensor<1x2x3x2xf64>", c), tensor("tensor<1x2x3x2xf64>", d)},
                      "tensor<1x2x2x2xf64>");
  expected.clear();
  for (int batch = 0; batch < 2; ++batch) {
    std::vector<double> part =
        product(2, 3, 2, [&](int m, int k) { return c[batch * 6 + k * 2 + m]; },
                [&](int k, int n) { return d[batch * 6 + k * 2 + n]; });
    expected.insert(expected.end(), part.begin(), part.end());
  }
  expectValues(out2, expected);
}

TEST_F(Contractions, EmbeddingGathersRows) {
  Tensor table = tensor("tensor<4x2xf64>", {0, 1, 10, 11, 20, 21, 30, 31});
  Tensor ids = tensor("tensor<2x3xi32>", {3, 0, 1, 1, 2, 3});
  expectValues(runOp("step.embedding %a0, %a1", {table, ids}, "tensor<2x3x2xf64>"),
               {30, 31, 0, 1, 10, 11, 10, 11, 20, 21, 30, 31});
}

TEST_F(Contractions, EmbeddingIdOutOfRangeIsAnErrorNotACrash) {
  Tensor table = tensor("tensor<4x2xf64>", std::vector<double>(8, 1.0));
  for (double bad : {4.0, -1.0, 1e9}) {
    Tensor ids = tensor("tensor<3xi64>", {0, bad, 1});
    std::string errors = runOpError("step.embedding %a0, %a1", {table, ids}, "tensor<3x2xf64>");
    EXPECT_NE(errors.find("out of range"), std::string::npos) << errors;
    EXPECT_NE(errors.find("position 1"), std::string::npos) << errors;
  }
}

TEST_F(Contractions, EmbeddingGradSumsRowsById) {
  Tensor grad = tensor("tensor<2x2x2xf64>", {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor ids = tensor("tensor<2x2xi32>", {2, 0, 2, 4});
  // Row 2 gets positions 0 and 2; row 0 position 1; row 4 position 3; rows 1 and 3 nothing.
  expectValues(runOp("step.embedding_grad %a0, %a1 {vocab = 5}", {grad, ids}, "tensor<5x2xf64>"),
               {3, 4, 0, 0, 1 + 5, 2 + 6, 0, 0, 7, 8});
  std::string errors = runOpError("step.embedding_grad %a0, %a1 {vocab = 4}", {grad, ids},
                                  "tensor<4x2xf64>");
  EXPECT_NE(errors.find("out of range"), std::string::npos) << errors;
}

// conv1d from its definition: pad the input with K-1 zeros on the left (causal) or not at
// all (valid), then y[b, t, o] = Σ_k Σ_c padded[b, t + k, group(o) * Cin/G + c] · w[k, c, o].
struct ConvCase {
  int batch = 2, seq = 5, cin = 4, cout = 6, kernel = 3, groups = 2;
  bool causal = true;
  int outSeq() const { return causal ? seq : seq - kernel + 1; }
  std::vector<double> conv(const std::vector<double> &x, const std::vector<double> &w) const {
    int pad = causal ? kernel - 1 : 0, paddedSeq = seq + pad;
    std::vector<double> padded(batch * paddedSeq * cin, 0.0);
    for (int b = 0; b < batch; ++b)
      for (int s = 0; s < seq; ++s)
        for (int c = 0; c < cin; ++c)
          padded[(b * paddedSeq + s + pad) * cin + c] = x[(b * seq + s) * cin + c];
    int cinG = cin / groups, coutG = cout / groups;
    std::vector<double> y;
    for (int b = 0; b < batch; ++b)
      for (int t = 0; t < outSeq(); ++t)
        for (int o = 0; o < cout; ++o) {
          double sum = 0;
          for (int k = 0; k < kernel; ++k)
            for (int c = 0; c < cinG; ++c)
              sum += padded[(b * paddedSeq + t + k) * cin + (o / coutG) * cinG + c] *
                     w[(k * cinG + c) * cout + o];
          y.push_back(sum);
        }
    return y;
  }
  std::string shape(int a, int b, int c) const {
    return "tensor<" + std::to_string(a) + "x" + std::to_string(b) + "x" + std::to_string(c) +
           "xf64>";
  }
  std::string xType() const { return shape(batch, seq, cin); }
  std::string wType() const { return shape(kernel, cin / groups, cout); }
  std::string yType() const { return shape(batch, outSeq(), cout); }
  std::string attrs() const {
    return std::string("padding = \"") + (causal ? "causal" : "valid") +
           "\", groups = " + std::to_string(groups);
  }
};

double dot(const std::vector<double> &a, const std::vector<double> &b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

// The gradient of L = <conv(x, w), g> with respect to each element of `of` (x or w), by
// linearity: conv with a unit tensor in place of that argument, dotted with g.
std::vector<double> gradientByUnitVectors(const ConvCase &cc, const std::vector<double> &x,
                                          const std::vector<double> &w,
                                          const std::vector<double> &g, bool ofInput) {
  std::vector<double> grad;
  size_t n = ofInput ? x.size() : w.size();
  for (size_t i = 0; i < n; ++i) {
    std::vector<double> unit(n, 0.0);
    unit[i] = 1.0;
    grad.push_back(dot(ofInput ? cc.conv(unit, w) : cc.conv(x, unit), g));
  }
  return grad;
}

void checkConvolution(Contractions &t, const ConvCase &cc) {
  std::vector<double> x = ramp(cc.batch * cc.seq * cc.cin);
  std::vector<double> w = ramp(cc.kernel * (cc.cin / cc.groups) * cc.cout, 0.5);
  std::vector<double> g = ramp(cc.batch * cc.outSeq() * cc.cout, -0.75);
  Tensor y = t.runOp("step.conv1d %a0, %a1 {" + cc.attrs() + "}",
                     {t.tensor(cc.xType(), x), t.tensor(cc.wType(), w)}, cc.yType());
  expectValues(y, cc.conv(x, w));
  Tensor dx = t.runOp("step.conv1d_grad_input %a0, %a1 {" + cc.attrs() + "}",
                      {t.tensor(cc.yType(), g), t.tensor(cc.wType(), w)}, cc.xType());
  expectValues(dx, gradientByUnitVectors(cc, x, w, g, /*ofInput=*/true));
  Tensor dw = t.runOp("step.conv1d_grad_weight %a0, %a1 {kernel = " + std::to_string(cc.kernel) +
                          ", " + cc.attrs() + "}",
                      {t.tensor(cc.xType(), x), t.tensor(cc.yType(), g)}, cc.wType());
  expectValues(dw, gradientByUnitVectors(cc, x, w, g, /*ofInput=*/false));
}

TEST_F(Contractions, Conv1dCausalWithGroupsAndItsGradients) { checkConvolution(*this, ConvCase{}); }

TEST_F(Contractions, Conv1dValidAndItsGradients) {
  ConvCase cc;
  cc.causal = false;
  cc.groups = 1;
  checkConvolution(*this, cc);
}

TEST_F(Contractions, Conv1dDepthwiseWithKernelLongerThanTheSequence) {
  ConvCase cc;
  cc.seq = 2;
  cc.kernel = 4;
  cc.cin = 3;
  cc.cout = 3;
  cc.groups = 3;
  checkConvolution(*this, cc);
}

TEST_F(Contractions, Conv1dCausalByHand) {
  // One channel, kernel [1, 10, 100]: y[t] = x[t-2] + 10 x[t-1] + 100 x[t].
  Tensor x = tensor("tensor<1x4x1xf64>", {1, 2, 3, 4});
  Tensor w = tensor("tensor<3x1x1xf64>", {1, 10, 100});
  expectValues(runOp("step.conv1d %a0, %a1", {x, w}, "tensor<1x4x1xf64>"),
               {100, 210, 321, 432});
}

}  // namespace
}  // namespace stepc::interp::testing
