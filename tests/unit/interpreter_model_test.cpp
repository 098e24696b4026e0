// Interpreter: the forward graph of a step.model (runModelLoss) with parameters stacked over
// repeats, step.func calls, and model data from initModelParams / sampleModelInputs.
#include <cmath>

#include "compiler/Interpreter/ModelData.h"
#include "interpreter_test_util.h"

namespace stepc::interp::testing {
namespace {

class ModelLoss : public InterpreterTest {
 protected:
  step::ModelOp parseModel(const std::string &source) {
    mlir::ModuleOp module = parse(source);
    if (!module) return {};
    auto models = module.getOps<step::ModelOp>();
    EXPECT_FALSE(models.empty());
    return models.empty() ? step::ModelOp() : *models.begin();
  }

  std::optional<double> loss(step::ModelOp model, const std::map<std::string, Tensor> &params,
                             const std::map<std::string, std::vector<Tensor>> &inputs = {},
                             Options options = {}) {
    errors_.clear();
    mlir::ScopedDiagnosticHandler capture(context(),
                                          [&](mlir::Diagnostic &d) { return recordError(d); });
    mlir::FailureOr<Tensor> result = Interpreter(options).runModelLoss(model, params, inputs);
    if (failed(result)) return std::nullopt;
    EXPECT_EQ(result->numElements(), 1);
    return result->data[0];
  }
};

// A tiny MLP (as models/mlp.mlir --config=tiny).
const char *kMlp = R"(
step.model @mlp_tiny dims(B = 8, D = 8, H = 16, C = 4) {
  %x, %labels = step.input "data" [B, D] f32 = classification(classes = 4)
  %w1 = step.param "w1" [D, H] f32 = normal(std = 0.1768)
  %b1 = step.param "b1" [H] f32 = zeros
  %w2 = step.param "w2" [H, C] f32 = normal(std = 0.0884)
  %b2 = step.param "b2" [C] f32 = zeros
  %h1 = step.matmul %x, %w1
  %h1b = step.add %h1, %b1
  %a1 = step.gelu %h1b
  %logits0 = step.matmul %a1, %w2
  %logits = step.add %logits0, %b2
  %loss = step.cross_entropy %logits, %labels
  step.loss %loss
})";

// The same MLP's loss written out as loops over the named tensors.
double mlpLossByHand(const std::map<std::string, Tensor> &p, const Tensor &x,
                     const Tensor &labels) {
  const int B = 8, D = 8, H = 16, C = 4;
  auto gelu = [](double v) {
    return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  };
  double total = 0;
  for (int b = 0; b < B; ++b) {
    std::vector<double> a(H), logits(C);
    for (int h = 0; h < H; ++h) {
      double s = p.at("b1").data[h];
      for (int d = 0; d < D; ++d) s += x.data[b * D + d] * p.at("w1").data[d * H + h];
      a[h] = gelu(s);
    }
    double z = 0;
    for (int c = 0; c < C; ++c) {
      logits[c] = p.at("b2").data[c];
      for (int h = 0; h < H; ++h) logits[c] += a[h] * p.at("w2").data[h * C + c];
      z += std::exp(logits[c]);
    }
    total += std::log(z) - logits[static_cast<int>(labels.data[b])];
  }
  return total / B;
}

TEST_F(ModelLoss, MlpAtInitialisationIsNearLogClassesAndMatchesLoops) {
  step::ModelOp model = parseModel(kMlp);
  ASSERT_TRUE(model);
  std::map<std::string, Tensor> params = initModelParams(model, /*seed=*/1);
  std::map<std::string, std::vector<Tensor>> inputs = sampleModelInputs(model, 1, /*step=*/0);
  ASSERT_EQ(params.size(), 4u);
  ASSERT_EQ(inputs.count("data"), 1u);
  std::optional<double> value = loss(model, params, inputs);
  ASSERT_TRUE(value.has_value()) << errors_;
  EXPECT_TRUE(std::isfinite(*value));
  EXPECT_NEAR(*value, std::log(4.0), 0.2);
  EXPECT_NEAR(*value, mlpLossByHand(params, inputs["data"][0], inputs["data"][1]), 1e-12);
}

// Two nested repeats: h <- h * 0.5 + b[o, i], with b stacked [2, 3, 2] as "outer.inner.b",
// then a per-outer-layer scale a[o] stacked [2, 2] as "outer.a".
const char *kNested = R"(
step.model @nested dims(N = 2) {
  %x = step.param "x" [N] f64 = zeros
  %out = step.repeat "outer" 2 (%h = %x) {
    %a = step.param "a" [N] f64 = ones
    %g_out = step.repeat "inner" 3 (%g = %h) {
      %b = step.param "b" [N] f64 = zeros
      %half = step.constant {value = dense<0.5> : tensor<f64>}
      %m = step.mul %g, %half
      %y = step.add %m, %b
      step.yield %y
    }
    %scaled = step.mul %g_out, %a
    step.yield %scaled
  }
  %sq = step.mul %out, %out
  %loss = step.sum %sq {axes = [0]}
  step.loss %loss
})";

TEST_F(ModelLoss, ParamsInNestedRepeatsReadTheirLayer) {
  step::ModelOp model = parseModel(kNested);
  ASSERT_TRUE(model);
  std::vector<double> x = {1, -2}, a = {2, 3, -1, 0.5}, b;
  for (int i = 0; i < 12; ++i) b.push_back(0.25 * i - 1);
  std::map<std::string, Tensor> params = {
      {"x", tensor("tensor<2xf64>", x)},
      {"outer.a", tensor("tensor<2x2xf64>", a)},
      {"outer.inner.b", tensor("tensor<2x3x2xf64>", b)}};
  std::vector<double> h = x;
  for (int o = 0; o < 2; ++o) {
    for (int i = 0; i < 3; ++i)
      for (int e = 0; e < 2; ++e) h[e] = h[e] * 0.5 + b[(o * 3 + i) * 2 + e];
    for (int e = 0; e < 2; ++e) h[e] *= a[o * 2 + e];
  }
  std::optional<double> value = loss(model, params);
  ASSERT_TRUE(value.has_value()) << errors_;
  EXPECT_NEAR(*value, h[0] * h[0] + h[1] * h[1], 1e-12);
}

TEST_F(ModelLoss, MissingOrMistypedParameterIsAnError) {
  step::ModelOp model = parseModel(kNested);
  ASSERT_TRUE(model);
  std::map<std::string, Tensor> params = {
      {"x", tensor("tensor<2xf64>", {1, 2})},
      {"outer.a", tensor("tensor<2x2xf64>", {1, 1, 1, 1})}};
  EXPECT_FALSE(loss(model, params).has_value());
  EXPECT_NE(errors_.find("outer.inner.b"), std::string::npos) << errors_;
  // Unstacked where the model stores [2, 3, 2].
  params["outer.inner.b"] = tensor("tensor<2xf64>", {0, 0});
  EXPECT_FALSE(loss(model, params).has_value());
  EXPECT_NE(errors_.find("outer.inner.b"), std::string::npos) << errors_;
}

const char *kWithFunction = R"(
step.model @with_function dims(B = 2, D = 3) {
  step.func @affine(%x: [B, D] f64, %w: [D, D] f64) -> [B, D] f64 {
    %h = step.matmul %x, %w
    %y = step.add %h, %x
    step.return %y
  }
  %x = step.param "x" [B, D] f64 = ones
  %w = step.param "w" [D, D] f64 = ones
  %y = step.call @affine(%x, %w)
  %z = step.call @affine(%y, %w)
  %loss = step.mean %z {axes = [0, 1]}
  step.loss %loss
})";

TEST_F(ModelLoss, StepFuncCallsRunTheFunctionBody) {
  step::ModelOp model = parseModel(kWithFunction);
  ASSERT_TRUE(model);
  std::vector<double> x = {1, 2, 3, -1, 0, 1}, w = {1, 0, 2, 0, 1, 0, -1, 1, 1};
  std::map<std::string, Tensor> params = {{"x", tensor("tensor<2x3xf64>", x)},
                                          {"w", tensor("tensor<3x3xf64>", w)}};
  auto affine = [&](const std::vector<double> &v) {
    std::vector<double> out(6);
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 3; ++c) {
        out[r * 3 + c] = v[r * 3 + c];
        for (int k = 0; k < 3; ++k) out[r * 3 + c] += v[r * 3 + k] * w[k * 3 + c];
      }
    return out;
  };
  std::vector<double> z = affine(affine(x));
  double mean = 0;
  for (double v : z) mean += v / 6;
  std::optional<double> value = loss(model, params);
  ASSERT_TRUE(value.has_value()) << errors_;
  EXPECT_NEAR(*value, mean, 1e-12);
}

// A byte LM cell stack (embedding, repeat with conv1d and cumsum, zero head): with a zero
// head every logit is 0, so the loss is exactly log(256) whatever the layers compute.
const char *kByteLm = R"(
step.model @byte_lm_residual_mini dims(B = 2, S = 8, F = 8, K = 3, depth = 2) {
  %tokens, %targets = step.input "bytes" [B, S] i32 = token_stream(vocab = 256)
  %table = step.param "embedding" [256, F] f32 = orthogonal(gain = 0.70710678)
  %x = step.embedding %table, %tokens
  %out = step.repeat "cell" depth (%h = %x) {
    %w1 = step.param "w1" [K, F, F] f32 = orthogonal(gain = 1.6967316)
    %sum = step.cumsum %h {axis = 1}
    %pos = step.iota %h {axis = 1, dtype = f32, offset = 1}
    %mean = step.div %sum, %pos
    %conv = step.conv1d %mean, %w1 {padding = "causal"}
    %next = step.add %h, %conv
    step.yield %next
  }
  %head = step.param "head" [F, 256] f32 = zeros
  %logits = step.matmul %out, %head
  %loss = step.cross_entropy %logits, %targets
  step.loss %loss
})";

TEST_F(ModelLoss, ByteLmWithZeroHeadGivesLog256InEitherPrecision) {
  step::ModelOp model = parseModel(kByteLm);
  ASSERT_TRUE(model);
  std::map<std::string, Tensor> params = initModelParams(model, 3);
  std::map<std::string, std::vector<Tensor>> inputs = sampleModelInputs(model, 3, 5);
  std::optional<double> f64 = loss(model, params, inputs);
  ASSERT_TRUE(f64.has_value()) << errors_;
  EXPECT_NEAR(*f64, std::log(256.0), 1e-12);
  std::optional<double> f32 = loss(model, params, inputs, Options{Precision::Declared});
  ASSERT_TRUE(f32.has_value()) << errors_;
  EXPECT_EQ(*f32, static_cast<double>(static_cast<float>(*f32)));
  EXPECT_NEAR(*f32, std::log(256.0), 1e-6);
}

TEST_F(ModelLoss, OutOfRangeTokenIsAnErrorNotACrash) {
  step::ModelOp model = parseModel(kByteLm);
  ASSERT_TRUE(model);
  std::map<std::string, Tensor> params = initModelParams(model, 3);
  std::vector<double> tokens(16, 65.0);
  tokens[5] = 256;
  std::map<std::string, std::vector<Tensor>> inputs = {
      {"bytes", {tensor("tensor<2x8xi32>", tokens), tensor("tensor<2x8xi32>",
                                                           std::vector<double>(16, 1.0))}}};
  EXPECT_FALSE(loss(model, params, inputs).has_value());
  EXPECT_NE(errors_.find("id 256 at position 5 is out of range"), std::string::npos) << errors_;
}

TEST_F(ModelLoss, MissingInputIsAnError) {
  step::ModelOp model = parseModel(kByteLm);
  ASSERT_TRUE(model);
  EXPECT_FALSE(loss(model, initModelParams(model, 3), {}).has_value());
  EXPECT_NE(errors_.find("no data given for input 'bytes'"), std::string::npos) << errors_;
}

}  // namespace
}  // namespace stepc::interp::testing
