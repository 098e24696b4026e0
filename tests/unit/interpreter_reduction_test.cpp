// Interpreter: reductions, cumsum, softmax, log_softmax, layer_norm, rms_norm, cross_entropy.
#include <cmath>

#include "interpreter_test_util.h"

namespace stepc::interp::testing {
namespace {

using Reductions = InterpreterTest;

// x[i, j, k] = 100 i + 10 j + k over [2, 3, 4]: every element says where it is.
Tensor cube(InterpreterTest &t) {
  std::vector<double> data;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) data.push_back(100 * i + 10 * j + k);
  return t.tensor("tensor<2x3x4xf64>", data);
}

TEST_F(Reductions, SumOverOneAxis) {
  Tensor out = runOp("step.sum %a0 {axes = [1]}", {cube(*this)}, "tensor<2x4xf64>");
  std::vector<double> expected;
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k) expected.push_back(3 * (100 * i + k) + 10 * (0 + 1 + 2));
  expectValues(out, expected);
}

TEST_F(Reductions, SumOverSeveralAxesWithKeepdim) {
  Tensor out = runOp("step.sum %a0 {axes = [0, -1], keepdim}", {cube(*this)}, "tensor<1x3x1xf64>");
  EXPECT_EQ(shapeOf(out), (std::vector<int64_t>{1, 3, 1}));
  std::vector<double> expected;
  for (int j = 0; j < 3; ++j) expected.push_back(4 * 100 + 8 * 10 * j + 2 * (0 + 1 + 2 + 3));
  expectValues(out, expected);
}

TEST_F(Reductions, MeanAndMaxOverAllAxes) {
  Tensor mean = runOp("step.mean %a0 {axes = [0, 1, 2]}", {cube(*this)}, "tensor<f64>");
  expectValues(mean, {50 + 10 + 1.5});
  Tensor max = runOp("step.reduce_max %a0 {axes = [2, 0]}", {cube(*this)}, "tensor<3xf64>");
  expectValues(max, {103, 113, 123});
}

TEST_F(Reductions, ReduceMaxOfNegativesAndNaN) {
  Tensor x = tensor("tensor<2x2xf64>", {-5, -3, NAN, 1});
  Tensor max = runOp("step.reduce_max %a0 {axes = [1]}", {x}, "tensor<2xf64>");
  EXPECT_EQ(max.data[0], -3);
  EXPECT_TRUE(std::isnan(max.data[1]));
}

TEST_F(Reductions, IntegerMeanTruncates) {
  Tensor x = tensor("tensor<2x2xi32>", {1, 2, -3, -4});
  expectValues(runOp("step.mean %a0 {axes = [1]}", {x}, "tensor<2xi32>"), {1, -3});
  expectValues(runOp("step.sum %a0 {axes = [1]}", {x}, "tensor<2xi32>"), {3, -7});
}

TEST_F(Reductions, CumsumForwardAndReverse) {
  Tensor x = tensor("tensor<2x3xf64>", {1, 2, 3, 4, 5, 6});
  expectValues(runOp("step.cumsum %a0 {axis = 1}", {x}, "tensor<2x3xf64>"),
               {1, 3, 6, 4, 9, 15});
  expectValues(runOp("step.cumsum %a0 {axis = 1, reverse}", {x}, "tensor<2x3xf64>"),
               {6, 5, 3, 15, 11, 6});
  expectValues(runOp("step.cumsum %a0 {axis = -2}", {x}, "tensor<2x3xf64>"),
               {1, 2, 3, 5, 7, 9});
  expectValues(runOp("step.cumsum %a0 {axis = 0, reverse}", {x}, "tensor<2x3xf64>"),
               {5, 7, 9, 4, 5, 6});
}

TEST_F(Reductions, SoftmaxAndLogSoftmaxAlongEitherAxis) {
  Tensor x = tensor("tensor<2x3xf64>", {1, 2, 3, 0, 0, 1000});
  // Row 0 by the formula; row 1 would overflow exp(1000) without the max shift.
  double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  Tensor p = runOp("step.softmax %a0", {x}, "tensor<2x3xf64>");
  expectValues(p, {std::exp(1.0) / z, std::exp(2.0) / z, std::exp(3.0) / z, 0, 0, 1});
  Tensor lp = runOp("step.log_softmax %a0 {axis = -1}", {x}, "tensor<2x3xf64>");
  expectValues(lp, {1 - std::log(z), 2 - std::log(z), 3 - std::log(z), -1000, -1000, 0});
  // Along axis 0: each column normalised over its two entries.
  Tensor p0 = runOp("step.softmax %a0 {axis = 0}", {x}, "tensor<2x3xf64>");
  double e1 = std::exp(1.0), e2 = std::exp(2.0);
  expectValues(p0, {e1 / (e1 + 1), e2 / (e2 + 1), 0, 1 / (e1 + 1), 1 / (e2 + 1), 1});
}

TEST_F(Reductions, LayerNormNormalisesTheLastDimension) {
  Tensor x = tensor("tensor<2x4xf64>", {1, 2, 3, 4, -2, 0, 2, 8});
  Tensor gamma = tensor("tensor<4xf64>", {1, 2, 0.5, -1});
  Tensor beta = tensor("tensor<4xf64>", {0, 1, 0, 0.25});
  Tensor out = runOp("step.layer_norm %a0, %a1, %a2 {eps = 0.01}", {x, gamma, beta},
                     "tensor<2x4xf64>");
  // Row 0: mean 2.5, variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25.
  // Row 1: mean 2, variance (16 + 4 + 0 + 36) / 4 = 14.
  double s0 = 1 / std::sqrt(1.25 + 0.01), s1 = 1 / std::sqrt(14 + 0.01);
  expectValues(out, {-1.5 * s0 * 1, -0.5 * s0 * 2 + 1, 0.5 * s0 * 0.5, 1.5 * s0 * -1 + 0.25,
                     -4 * s1 * 1, -2 * s1 * 2 + 1, 0 * s1 * 0.5, 6 * s1 * -1 + 0.25});
}

TEST_F(Reductions, RmsNormScalesByRootMeanSquare) {
  Tensor x = tensor("tensor<1x2x2xf64>", {3, 4, 1, -1});
  Tensor gamma = tensor("tensor<2xf64>", {2, 1});
  Tensor out = runOp("step.rms_norm %a0, %a1 {eps = 0.5}", {x, gamma}, "tensor<1x2x2xf64>");
  // mean(x²): 12.5 and 1.
  double s0 = 1 / std::sqrt(12.5 + 0.5), s1 = 1 / std::sqrt(1 + 0.5);
  expectValues(out, {3 * s0 * 2, 4 * s0, 1 * s1 * 2, -1 * s1});
  // The default eps is 1e-6.
  Tensor byDefault = runOp("step.rms_norm %a0, %a1", {x, gamma}, "tensor<1x2x2xf64>");
  expectValues(byDefault, {6 / std::sqrt(12.5 + 1e-6), 4 / std::sqrt(12.5 + 1e-6),
                           2 / std::sqrt(1 + 1e-6), -1 / std::sqrt(1 + 1e-6)});
}

// -log softmax(row)[target] for each row, by the formula.
std::vector<double> crossEntropyRows(const std::vector<double> &logits, int classes,
                                     const std::vector<int> &targets) {
  std::vector<double> losses;
  for (size_t r = 0; r < targets.size(); ++r) {
    double z = 0;
    for (int c = 0; c < classes; ++c) z += std::exp(logits[r * classes + c]);
    losses.push_back(std::log(z) - logits[r * classes + targets[r]]);
  }
  return losses;
}

TEST_F(Reductions, CrossEntropyMeanSumAndNone) {
  std::vector<double> logits = {1, 2, 3, 0, 0, 0, -1, 5, 2, 4, 4, 1};
  Tensor l = tensor("tensor<2x2x3xf64>", logits);
  Tensor t = tensor("tensor<2x2xi32>", {2, 0, 1, 0});
  std::vector<double> rows = crossEntropyRows(logits, 3, {2, 0, 1, 0});
  double sum = rows[0] + rows[1] + rows[2] + rows[3];
  expectValues(runOp("step.cross_entropy %a0, %a1", {l, t}, "tensor<f64>"), {sum / 4});
  expectValues(runOp("step.cross_entropy %a0, %a1 {reduction = \"sum\"}", {l, t}, "tensor<f64>"),
               {sum});
  expectValues(
      runOp("step.cross_entropy %a0, %a1 {reduction = \"none\"}", {l, t}, "tensor<2x2xf64>"),
      rows);
  EXPECT_NEAR(rows[1], std::log(3.0), 1e-15);  // uniform logits
}

TEST_F(Reductions, CrossEntropyTargetOutOfRangeIsAnError) {
  Tensor l = tensor("tensor<2x3xf64>", {0, 0, 0, 0, 0, 0});
  Tensor t = tensor("tensor<2xi64>", {1, 3});
  std::string errors = runOpError("step.cross_entropy %a0, %a1", {l, t}, "tensor<f64>");
  EXPECT_NE(errors.find("out of range"), std::string::npos) << errors;
}

}  // namespace
}  // namespace stepc::interp::testing
