// Interpreter: functions and calls, repeat as a scan, precision modes, and errors.
#include <cmath>

#include "interpreter_test_util.h"

namespace stepc::interp::testing {
namespace {

using Structure = InterpreterTest;

TEST_F(Structure, FuncCallRunsTheCallee) {
  std::vector<Tensor> out = run(R"(
    func.func @double(%x: tensor<2xf64>) -> tensor<2xf64> {
      %0 = step.add %x, %x : tensor<2xf64>, tensor<2xf64>
      return %0 : tensor<2xf64>
    }
    func.func @f(%x: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>) {
      %0 = func.call @double(%x) : (tensor<2xf64>) -> tensor<2xf64>
      %1 = call @double(%0) : (tensor<2xf64>) -> tensor<2xf64>
      return %1, %x : tensor<2xf64>, tensor<2xf64>
    })",
                                {tensor("tensor<2xf64>", {1.5, -2})});
  ASSERT_EQ(out.size(), 2u);
  expectValues(out[0], {6, -8});
  expectValues(out[1], {1.5, -2});
}

// h <- h * w_i + w_i over the slices w_i of %ws, saving each iteration's incoming h.
const char *kScan = R"(
    func.func @f(%x: tensor<2xf64>, %ws: tensor<3x2xf64>) -> (tensor<2xf64>, tensor<3x2xf64>) {
      %h, %saved = step.repeat "layer" 3 (%c = %x : tensor<2xf64>) over (%w = %ws : tensor<3x2xf64>) DIRECTION {
        %m = step.mul %c, %w : tensor<2xf64>, tensor<2xf64>
        %n = step.add %m, %w : tensor<2xf64>, tensor<2xf64>
        step.yield %n, %c : tensor<2xf64>, tensor<2xf64>
      }
      return %h, %saved : tensor<2xf64>, tensor<3x2xf64>
    })";

std::string scan(bool reverse) {
  std::string source = kScan;
  size_t at = source.find("DIRECTION");
  return source.replace(at, 9, reverse ? "reverse" : "");
}

void checkScan(Structure &t, bool reverse) {
  std::vector<double> x = {1, 2}, ws = {2, 3, -1, 0.5, 4, -2};
  std::vector<Tensor> out = t.run(scan(reverse), {t.tensor("tensor<2xf64>", x),
                                                  t.tensor("tensor<3x2xf64>", ws)});
  ASSERT_EQ(out.size(), 2u);
  std::vector<double> h = x, saved(6);
  for (int step = 0; step < 3; ++step) {
    int i = reverse ? 2 - step : step;
    for (int e = 0; e < 2; ++e) {
      saved[i * 2 + e] = h[e];  // stacked at the iteration's index, whatever the order
      h[e] = h[e] * ws[i * 2 + e] + ws[i * 2 + e];
    }
  }
  expectValues(out[0], h);
  expectValues(out[1], saved);
}

TEST_F(Structure, RepeatScansOverStackedOperandsAndStacksResults) { checkScan(*this, false); }

TEST_F(Structure, RepeatReverseRunsFromTheLastIterationDown) {
  checkScan(*this, true);
  // The two orders give different results here, so the test tells them apart.
  std::vector<Tensor> fwd = run(scan(false), {tensor("tensor<2xf64>", {1, 2}),
                                              tensor("tensor<3x2xf64>", {2, 3, -1, 0.5, 4, -2})});
  std::vector<Tensor> bwd = run(scan(true), {tensor("tensor<2xf64>", {1, 2}),
                                             tensor("tensor<3x2xf64>", {2, 3, -1, 0.5, 4, -2})});
  EXPECT_NE(fwd[0].data, bwd[0].data);
}

TEST_F(Structure, RepeatUsesValuesFromOutsideItsBody) {
  std::vector<Tensor> out = run(R"(
    func.func @f(%x: tensor<2x2xf64>, %w: tensor<2x2xf64>) -> tensor<2x2xf64> {
      %0 = step.repeat "cell" 3 (%h = %x : tensor<2x2xf64>) {
        %1 = step.matmul %h, %w : tensor<2x2xf64>, tensor<2x2xf64>
        step.yield %1 : tensor<2x2xf64>
      }
      return %0 : tensor<2x2xf64>
    })",
                                {tensor("tensor<2x2xf64>", {1, 0, 0, 1}),
                                 tensor("tensor<2x2xf64>", {1, 1, 0, 1})});
  expectValues(out[0], {1, 3, 0, 1});  // [[1, 1], [0, 1]]^3
}

TEST_F(Structure, CustomGradRunsItsForwardRegion) {
  // Forward: sign(x) * 3; the backward region (never run by the interpreter) would double.
  std::vector<Tensor> out = run(R"(
    func.func @f(%x: tensor<4xf64>) -> tensor<4xf64> {
      %y = step.custom_grad (%a = %x : tensor<4xf64>) {
        %zero = step.constant {value = dense<0.0> : tensor<f64>}
        %three = step.constant {value = dense<3.0> : tensor<4xf64>}
        %pos = step.compare %a, %zero {predicate = "gt"} : tensor<4xf64>, tensor<f64>
        %neg = step.neg %three : tensor<4xf64>
        %s = step.select %pos, %three, %neg : tensor<4xi1>, tensor<4xf64>, tensor<4xf64>
        step.yield %s : tensor<4xf64>
      } backward (%a2, %dy) {
        %two = step.constant {value = dense<2.0> : tensor<f64>}
        %d = step.mul %dy, %two : tensor<4xf64>, tensor<f64>
        step.yield %d : tensor<4xf64>
      }
      return %y : tensor<4xf64>
    })",
                                {tensor("tensor<4xf64>", {-2, 0.5, 0, 7})});
  ASSERT_EQ(out.size(), 1u);
  expectValues(out[0], {-3, 3, -3, 3});
}

TEST_F(Structure, DeclaredPrecisionRoundsEveryFloatResult) {
  auto oneThird = [&](const std::string &type, Precision precision) {
    std::string source = "func.func @f() -> tensor<" + type + "> {\n" +
                         "  %a = step.constant {value = dense<1.0> : tensor<" + type + ">}\n" +
                         "  %b = step.constant {value = dense<3.0> : tensor<" + type + ">}\n" +
                         "  %c = step.div %a, %b : tensor<" + type + ">, tensor<" + type + ">\n" +
                         "  return %c : tensor<" + type + ">\n}\n";
    std::vector<Tensor> out = run(source, {}, Options{precision});
    return out.empty() ? NAN : out[0].data[0];
  };
  EXPECT_EQ(oneThird("f32", Precision::F64), 1.0 / 3.0);
  EXPECT_EQ(oneThird("f32", Precision::Declared), static_cast<double>(1.0f / 3.0f));
  EXPECT_NE(static_cast<double>(1.0f / 3.0f), 1.0 / 3.0);
  EXPECT_EQ(oneThird("bf16", Precision::Declared), 0.333984375);     // 0x3EAB
  EXPECT_EQ(oneThird("f16", Precision::Declared), 0.333251953125);   // 0x3555
  EXPECT_EQ(oneThird("f64", Precision::Declared), 1.0 / 3.0);
}

TEST_F(Structure, DeclaredPrecisionRoundsIntermediateResults) {
  // 1 + 2^-30 is 1 in f32, so (x + 2^-30) - x is 0 when rounded per op and 2^-30 in f64.
  const char *source = R"(
    func.func @f(%x: tensor<f32>, %e: tensor<f32>) -> tensor<f32> {
      %0 = step.add %x, %e : tensor<f32>, tensor<f32>
      %1 = step.sub %0, %x : tensor<f32>, tensor<f32>
      return %1 : tensor<f32>
    })";
  std::vector<Tensor> args = {tensor("tensor<f32>", {1.0}), tensor("tensor<f32>", {0x1p-30})};
  EXPECT_EQ(run(source, args, Options{Precision::F64})[0].data[0], 0x1p-30);
  EXPECT_EQ(run(source, args, Options{Precision::Declared})[0].data[0], 0.0);
}

TEST_F(Structure, UnknownOpIsAnErrorAtItsLocation) {
  std::optional<std::vector<Tensor>> out = tryRun(R"(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %0 = "mystery.op"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      return %0 : tensor<2xf32>
    })",
                                                  {tensor("tensor<2xf32>", {1, 2})});
  EXPECT_FALSE(out.has_value());
  EXPECT_NE(errors_.find("does not support the op 'mystery.op'"), std::string::npos) << errors_;
  EXPECT_NE(errors_.find(":3:12): the interpreter"), std::string::npos) << errors_;  // line 3
}

TEST_F(Structure, UnboundedRecursionIsAnErrorNotAStackOverflow) {
  std::optional<std::vector<Tensor>> out = tryRun(R"(
    func.func @f(%x: tensor<f32>) -> tensor<f32> {
      %0 = func.call @f(%x) : (tensor<f32>) -> tensor<f32>
      return %0 : tensor<f32>
    })",
                                                  {tensor("tensor<f32>", {1})});
  EXPECT_FALSE(out.has_value());
  EXPECT_NE(errors_.find("calls nest deeper than"), std::string::npos) << errors_;
}

TEST_F(Structure, ArgumentOfTheWrongTypeIsAnError) {
  const char *source = R"(
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      return %x : tensor<2xf32>
    })";
  EXPECT_FALSE(tryRun(source, {tensor("tensor<3xf32>", {1, 2, 3})}).has_value());
  EXPECT_NE(errors_.find("argument #0"), std::string::npos) << errors_;
  EXPECT_FALSE(tryRun(source, {}).has_value());
  EXPECT_FALSE(tryRun(source, {tensor("tensor<2xf32>", {1, 2, 3})}).has_value());
}

}  // namespace
}  // namespace stepc::interp::testing
