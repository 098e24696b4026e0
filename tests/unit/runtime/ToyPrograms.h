// Step programs written by hand in C++ for the training-loop tests: real SGD on small models,
// so the loop, checkpoints and data can be tested without the compiler.
//
//   SoftmaxRegression  logits = x W + b on classification(classes) data, cross-entropy,
//                      SGD with momentum (state slot "momentum" per parameter), extra metric
//                      "accuracy"; evaluate() gives the loss without updating.
//   BigramLM           logits = table[token] on a token stream, cross-entropy, plain SGD (no
//                      state), so a model without optimizer state is covered too.
//
// Both are deterministic functions of (params, state, batch, step), as StepProgram requires.
#ifndef STEPC_TESTS_UNIT_RUNTIME_TOYPROGRAMS_H
#define STEPC_TESTS_UNIT_RUNTIME_TOYPROGRAMS_H

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "runtime/harness/StepProgram.h"

namespace stepc::rt::testing {

// Cross-entropy of `rows` rows of `classes` logits against integer labels; fills the gradient of
// the mean loss w.r.t. the logits in `grad`. Returns the mean loss; `correct` counts argmax hits.
inline double crossEntropy(const std::vector<float> &logits, const int32_t *labels, int64_t rows,
                           int64_t classes, std::vector<float> &grad, int64_t &correct) {
  grad.assign(logits.size(), 0.0f);
  double total = 0;
  correct = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float *l = &logits[r * classes];
    float max = l[0];
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c)
      if (l[c] > max) max = l[c], best = c;
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(static_cast<double>(l[c] - max));
    double logSum = std::log(sum) + max;
    total += logSum - l[labels[r]];
    correct += best == labels[r];
    for (int64_t c = 0; c < classes; ++c)
      grad[r * classes + c] =
          static_cast<float>((std::exp(l[c] - logSum) - (c == labels[r] ? 1.0 : 0.0)) /
                             static_cast<double>(rows));
  }
  return total / static_cast<double>(rows);
}

class SoftmaxRegression : public StepProgram {
 public:
  // `fingerprintSalt` changes only the fingerprint: "the same shapes, another model".
  explicit SoftmaxRegression(int64_t batch = 16, int64_t features = 8, int64_t classes = 4,
                             const std::string &fingerprintSalt = "")
      : b_(batch), d_(features), c_(classes) {
    info_.name = "toy_softmax";
    info_.fingerprint = "toy_softmax:B" + std::to_string(batch) + ":D" + std::to_string(features) +
                        ":C" + std::to_string(classes) + ":sgd_momentum(0.9)" + fingerprintSalt;
    InitSpec normal;
    normal.kind = "normal";
    normal.std = 0.1;
    InitSpec zeros;
    zeros.kind = "zeros";
    info_.params = {{"linear.w", {d_, c_}, DType::kF32, normal, 0},
                    {"linear.b", {c_}, DType::kF32, zeros, 0}};
    info_.state = {{"momentum", "linear.w", {d_, c_}, DType::kF32},
                   {"momentum", "linear.b", {c_}, DType::kF32}};
    InputSpec input;
    input.name = "data";
    input.source = InputSource::kClassification;
    input.shape = {b_, d_};
    input.dtype = DType::kF32;
    input.classes = c_;
    info_.inputs = {input};
    info_.extraMetrics = {"accuracy"};
    info_.defaultSteps = 50;
    info_.flopsPerStep = 6.0 * static_cast<double>(b_ * d_ * c_);
  }

  const ProgramInfo &info() const override { return info_; }

  // Test hooks: before a step (an error fails it) and after it (may edit the metrics).
  std::function<Status(int64_t step)> beforeStep;
  std::function<void(int64_t step, StepMetrics &)> afterStep;
  double lr = 0.1;

  Status run(const StepBuffers &buf, int64_t step, StepMetrics &metrics) override {
    if (beforeStep)
      if (Status s = beforeStep(step); !s.ok()) return s;
    std::vector<float> gw, gb;
    int64_t correct = 0;
    double loss = forward(buf, gw, gb, correct);
    double norm = 0;
    for (float g : gw) norm += static_cast<double>(g) * g;
    for (float g : gb) norm += static_cast<double>(g) * g;
    float rate = static_cast<float>(lr / (1.0 + 0.01 * static_cast<double>(step)));
    update(buf.params[0].f32(), buf.state[0].f32(), gw, rate);
    update(buf.params[1].f32(), buf.state[1].f32(), gb, rate);
    metrics.loss = loss;
    metrics.lr = rate;
    metrics.gradNorm = std::sqrt(norm);
    metrics.extra = {{"accuracy", static_cast<double>(correct) / static_cast<double>(b_)}};
    if (afterStep) afterStep(step, metrics);
    return {};
  }

  bool canEvaluate() const override { return true; }
  Status evaluate(const StepBuffers &buf, int64_t, double &loss) override {
    std::vector<float> gw, gb;
    int64_t correct;
    loss = forward(buf, gw, gb, correct);
    return {};
  }

 private:
  double forward(const StepBuffers &buf, std::vector<float> &gw, std::vector<float> &gb,
                 int64_t &correct) const {
    const float *w = buf.params[0].f32(), *bias = buf.params[1].f32(), *x = buf.batch[0].f32();
    const int32_t *labels = buf.batch[1].i32();
    std::vector<float> logits(b_ * c_), grad;
    for (int64_t r = 0; r < b_; ++r)
      for (int64_t c = 0; c < c_; ++c) {
        float acc = bias[c];
        for (int64_t k = 0; k < d_; ++k) acc += x[r * d_ + k] * w[k * c_ + c];
        logits[r * c_ + c] = acc;
      }
    double loss = crossEntropy(logits, labels, b_, c_, grad, correct);
    gw.assign(d_ * c_, 0.0f);
    gb.assign(c_, 0.0f);
    for (int64_t r = 0; r < b_; ++r)
      for (int64_t c = 0; c < c_; ++c) {
        float g = grad[r * c_ + c];
        gb[c] += g;
        for (int64_t k = 0; k < d_; ++k) gw[k * c_ + c] += x[r * d_ + k] * g;
      }
    return loss;
  }

  static void update(float *p, float *m, const std::vector<float> &g, float rate) {
    for (size_t i = 0; i < g.size(); ++i) {
      m[i] = 0.9f * m[i] + g[i];
      p[i] -= rate * m[i];
    }
  }

  int64_t b_, d_, c_;
  ProgramInfo info_;
};

class BigramLM : public StepProgram {
 public:
  explicit BigramLM(int64_t vocab = 256, int64_t batch = 4, int64_t seq = 16)
      : v_(vocab), b_(batch), s_(seq) {
    info_.name = "toy_bigram";
    info_.fingerprint = "toy_bigram:V" + std::to_string(vocab) + ":B" + std::to_string(batch) +
                        ":S" + std::to_string(seq);
    InitSpec normal;
    normal.kind = "normal";
    normal.std = 0.02;
    info_.params = {{"table", {v_, v_}, DType::kF32, normal, 0}};
    InputSpec input;
    input.name = "tokens";
    input.source = InputSource::kTokenStream;
    input.shape = {b_, s_};
    input.dtype = DType::kI32;
    input.vocab = v_;
    info_.inputs = {input};
  }

  const ProgramInfo &info() const override { return info_; }

  Status run(const StepBuffers &buf, int64_t, StepMetrics &metrics) override {
    float *table = buf.params[0].f32();
    const int32_t *tokens = buf.batch[0].i32(), *targets = buf.batch[1].i32();
    int64_t rows = b_ * s_;
    std::vector<float> logits(rows * v_), grad;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < v_; ++c) logits[r * v_ + c] = table[tokens[r] * v_ + c];
    int64_t correct;
    double loss = crossEntropy(logits, targets, rows, v_, grad, correct);
    double norm = 0;
    std::vector<float> g(v_ * v_, 0.0f);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < v_; ++c) g[tokens[r] * v_ + c] += grad[r * v_ + c];
    for (float x : g) norm += static_cast<double>(x) * x;
    for (size_t i = 0; i < g.size(); ++i) table[i] -= lr * g[i];
    metrics.loss = loss;
    metrics.lr = lr;
    metrics.gradNorm = std::sqrt(norm);
    return {};
  }

  float lr = 20.0f;

 private:
  int64_t v_, b_, s_;
  ProgramInfo info_;
};

}  // namespace stepc::rt::testing

#endif  // STEPC_TESTS_UNIT_RUNTIME_TOYPROGRAMS_H
