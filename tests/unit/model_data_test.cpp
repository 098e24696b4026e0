// initModelParams and sampleModelInputs: names, stored shapes, initialisers and built-in data.
#include "compiler/Interpreter/ModelData.h"

#include <gtest/gtest.h>

#include <cmath>

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

namespace stepc::interp {
namespace {

const char *kModel = R"(
step.model @data_model dims(B = 3, S = 6, F = 4, depth = 2) {
  %tokens, %targets = step.input "bytes" [B, S] i32 = token_stream(vocab = 256)
  %small, %small_targets = step.input "small" [B, S] i64 = token_stream(vocab = 10)
  %x, %labels = step.input "points" [B, 2, F] bf16 = classification(classes = 5)
  %table = step.param "embedding" [256, F] f32 = orthogonal(gain = 0.5)
  %out = step.repeat "cell" depth (%h = %table) {
    %w = step.param "w" [F, F] f32 = normal(std = 0.02, mean = 1.0)
    %u = step.param "u" [F] f32 = uniform(a = 2.0, b = 3.0)
    %c = step.param "c" [F] f32 = constant(value = 0.5, gain = 4.0)
    %y = step.matmul %h, %w
    step.yield %y
  }
  %loss = step.mean %out {axes = [0, 1]}
  step.loss %loss
})";

class ModelData : public ::testing::Test {
 protected:
  ModelData() {
    context_.loadDialect<step::StepDialect, mlir::func::FuncDialect>();
    module_ = mlir::parseSourceString<mlir::ModuleOp>(kModel, &context_);
    if (module_) model_ = *module_->getOps<step::ModelOp>().begin();
  }
  mlir::MLIRContext context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  step::ModelOp model_;
};

std::vector<int64_t> shape(const Tensor &t) { return {t.shape().begin(), t.shape().end()}; }

TEST_F(ModelData, ParamsAreNamedAndStackedPerRepeat) {
  ASSERT_TRUE(model_);
  std::map<std::string, Tensor> params = initModelParams(model_, 1);
  ASSERT_EQ(params.size(), 4u);
  EXPECT_EQ(shape(params.at("embedding")), (std::vector<int64_t>{256, 4}));
  EXPECT_EQ(shape(params.at("cell.w")), (std::vector<int64_t>{2, 4, 4}));
  EXPECT_EQ(shape(params.at("cell.u")), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(shape(params.at("cell.c")), (std::vector<int64_t>{2, 4}));
  EXPECT_TRUE(params.at("cell.w").type.getElementType().isF32());
}

TEST_F(ModelData, InitialisersFollowTheirSpecs) {
  ASSERT_TRUE(model_);
  std::map<std::string, Tensor> params = initModelParams(model_, 1);
  // Orthogonal [256, 4] times 0.5: the 4 columns are orthogonal with squared norm 0.25.
  const std::vector<double> &e = params.at("embedding").data;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      double dot = 0;
      for (int r = 0; r < 256; ++r) dot += e[r * 4 + i] * e[r * 4 + j];
      EXPECT_NEAR(dot, i == j ? 0.25 : 0.0, 1e-6);  // f32-rounded values
    }
  double mean = 0;
  for (double v : params.at("cell.w").data) mean += v / 32;
  EXPECT_NEAR(mean, 1.0, 0.02);
  for (double v : params.at("cell.u").data) {
    EXPECT_GE(v, 2.0);
    EXPECT_LE(v, 3.0);
  }
  for (double v : params.at("cell.c").data) EXPECT_EQ(v, 2.0);
  // Values are rounded to the declared f32.
  for (double v : params.at("cell.w").data) EXPECT_EQ(v, static_cast<double>(static_cast<float>(v)));
}

TEST_F(ModelData, ParamsDependOnlyOnTheSeed) {
  ASSERT_TRUE(model_);
  std::map<std::string, Tensor> a = initModelParams(model_, 7), b = initModelParams(model_, 7),
                                c = initModelParams(model_, 8);
  EXPECT_EQ(a.at("cell.w").data, b.at("cell.w").data);
  EXPECT_NE(a.at("cell.w").data, c.at("cell.w").data);
  // The two layers of a stacked parameter differ.
  const std::vector<double> &w = a.at("cell.w").data;
  EXPECT_NE(std::vector<double>(w.begin(), w.begin() + 16), std::vector<double>(w.begin() + 16, w.end()));
}

TEST_F(ModelData, TokenStreamsGiveCorpusWindowsAndShiftedTargets) {
  ASSERT_TRUE(model_);
  std::map<std::string, std::vector<Tensor>> inputs = sampleModelInputs(model_, 2, 0);
  ASSERT_EQ(inputs.at("bytes").size(), 2u);
  const Tensor &tokens = inputs.at("bytes")[0], &targets = inputs.at("bytes")[1];
  EXPECT_EQ(shape(tokens), (std::vector<int64_t>{3, 6}));
  EXPECT_TRUE(tokens.type.getElementType().isInteger(32));
  for (int r = 0; r < 3; ++r)
    for (int t = 0; t + 1 < 6; ++t) EXPECT_EQ(tokens.data[r * 6 + t + 1], targets.data[r * 6 + t]);
  for (double v : tokens.data) {
    EXPECT_TRUE(std::isprint(static_cast<int>(v)) || v == '\n') << v;  // corpus text
  }
  const Tensor &small = inputs.at("small")[0];
  EXPECT_TRUE(small.type.getElementType().isInteger(64));
  for (double v : small.data) {
    EXPECT_GE(v, 0);
    EXPECT_LT(v, 10);
  }
}

TEST_F(ModelData, InputsDependOnTheStep) {
  ASSERT_TRUE(model_);
  auto a = sampleModelInputs(model_, 2, 0), b = sampleModelInputs(model_, 2, 0),
       c = sampleModelInputs(model_, 2, 1);
  EXPECT_EQ(a.at("bytes")[0].data, b.at("bytes")[0].data);
  EXPECT_NE(a.at("bytes")[0].data, c.at("bytes")[0].data);
  EXPECT_NE(a.at("points")[0].data, c.at("points")[0].data);
}

TEST_F(ModelData, ClassificationGivesRoundedFeaturesAndLabelsInRange) {
  ASSERT_TRUE(model_);
  std::map<std::string, std::vector<Tensor>> inputs = sampleModelInputs(model_, 2, 0);
  ASSERT_EQ(inputs.at("points").size(), 2u);
  const Tensor &x = inputs.at("points")[0], &labels = inputs.at("points")[1];
  EXPECT_EQ(shape(x), (std::vector<int64_t>{3, 2, 4}));
  EXPECT_TRUE(x.type.getElementType().isBF16());
  EXPECT_EQ(shape(labels), (std::vector<int64_t>{3}));
  EXPECT_TRUE(labels.type.getElementType().isInteger(32));
  for (double v : labels.data) {
    EXPECT_EQ(v, std::floor(v));
    EXPECT_GE(v, 0);
    EXPECT_LT(v, 5);
  }
  // bf16 keeps 8 significant bits: v * 2^k is an integer below 256 for the right k.
  for (double v : x.data) {
    int exponent;
    double mantissa = std::frexp(v, &exponent);  // in [0.5, 1)
    double scaled = mantissa * 256;
    EXPECT_EQ(scaled, std::floor(scaled)) << v;
  }
}

}  // namespace
}  // namespace stepc::interp
