// Interpreter: unary and binary arithmetic, broadcasting, compare, select, cast, dropout, jitter.
#include <cmath>

#include "interpreter_test_util.h"
#include "runtime/base/Philox.h"

namespace stepc::interp::testing {
namespace {

using Elementwise = InterpreterTest;

const std::vector<double> kInputs = {-2.5, -1.0, -0.25, 0.0, 0.5, 1.0, 3.0};
const char *kType = "tensor<7xf64>";

// Runs a unary op on kInputs (or `inputs`) and compares with `reference` applied to each.
void checkUnary(Elementwise &t, const std::string &op, double (*reference)(double),
                std::vector<double> inputs = kInputs, double tolerance = 1e-14) {
  std::vector<double> expected;
  for (double x : inputs) expected.push_back(reference(x));
  Tensor out = t.runOp("step." + op + " %a0", {t.tensor(kType, inputs)}, kType);
  SCOPED_TRACE(op);
  expectValues(out, expected, tolerance);
}

TEST_F(Elementwise, UnaryArithmetic) {
  checkUnary(*this, "neg", [](double x) { return -x; });
  checkUnary(*this, "abs", [](double x) { return x < 0 ? -x : x; });
  checkUnary(*this, "exp", [](double x) { return std::exp(x); });
  checkUnary(*this, "tanh", [](double x) { return std::tanh(x); });
  checkUnary(*this, "erf", [](double x) { return std::erf(x); });
  checkUnary(*this, "sin", [](double x) { return std::sin(x); });
  checkUnary(*this, "cos", [](double x) { return std::cos(x); });
  checkUnary(*this, "relu", [](double x) { return x > 0 ? x : 0.0; });
  checkUnary(*this, "sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
  checkUnary(*this, "silu", [](double x) { return x / (1.0 + std::exp(-x)); });
  std::vector<double> positive = {0.25, 1.0, 2.0, 4.0, 9.0, 100.0, 1e-4};
  checkUnary(*this, "log", [](double x) { return std::log(x); }, positive);
  checkUnary(*this, "sqrt", [](double x) { return std::sqrt(x); }, positive);
  checkUnary(*this, "rsqrt", [](double x) { return 1.0 / std::sqrt(x); }, positive);
}

TEST_F(Elementwise, SigmoidIsStableForLargeMagnitudes) {
  Tensor out = runOp("step.sigmoid %a0", {tensor("tensor<3xf64>", {-800.0, 0.0, 800.0})},
                     "tensor<3xf64>");
  expectValues(out, {0.0, 0.5, 1.0});
  for (double v : out.data) EXPECT_FALSE(std::isnan(v));
}

TEST_F(Elementwise, GeluTanhAndErf) {
  // Reference values: 0.5 x (1 + erf(x / sqrt 2)) and the tanh form, from the definitions.
  auto exact = [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); };
  auto approx = [](double x) {
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  };
  Tensor x = tensor("tensor<3xf64>", {-1.0, 1.0, 2.0});
  Tensor byDefault = runOp("step.gelu %a0", {x}, "tensor<3xf64>");
  Tensor tanhForm = runOp("step.gelu %a0 {approximate = \"tanh\"}", {x}, "tensor<3xf64>");
  Tensor erfForm = runOp("step.gelu %a0 {approximate = \"erf\"}", {x}, "tensor<3xf64>");
  expectValues(byDefault, {approx(-1.0), approx(1.0), approx(2.0)});
  expectValues(tanhForm, byDefault.data);
  expectValues(erfForm, {exact(-1.0), exact(1.0), exact(2.0)});
  EXPECT_NEAR(erfForm.data[1], 0.8413447460685429, 1e-15);   // Φ(1)
  EXPECT_NEAR(tanhForm.data[1], 0.8411919906082768, 1e-15);  // the tanh approximation at 1
}

TEST_F(Elementwise, LeakyReluAndPowTakeTheirAttributes) {
  Tensor x = tensor("tensor<4xf64>", {-2.0, -0.5, 0.5, 3.0});
  expectValues(runOp("step.leaky_relu %a0 {alpha = 0.2}", {x}, "tensor<4xf64>"),
               {-0.4, -0.1, 0.5, 3.0});
  expectValues(runOp("step.leaky_relu %a0", {x}, "tensor<4xf64>"), {-0.02, -0.005, 0.5, 3.0});
  expectValues(runOp("step.pow %a0 {exponent = 3.0}", {x}, "tensor<4xf64>"),
               {-8.0, -0.125, 0.125, 27.0});
}

TEST_F(Elementwise, BinaryOpsBroadcastTrailingDims) {
  Tensor a = tensor("tensor<2x3xf64>", {1, 2, 3, 4, 5, 6});
  Tensor b = tensor("tensor<3xf64>", {10, 20, 30});
  expectValues(runOp("step.add %a0, %a1", {a, b}, "tensor<2x3xf64>"), {11, 22, 33, 14, 25, 36});
  expectValues(runOp("step.sub %a0, %a1", {a, b}, "tensor<2x3xf64>"),
               {-9, -18, -27, -6, -15, -24});
  expectValues(runOp("step.mul %a0, %a1", {a, b}, "tensor<2x3xf64>"),
               {10, 40, 90, 40, 100, 180});
  expectValues(runOp("step.div %a0, %a1", {a, b}, "tensor<2x3xf64>"),
               {0.1, 0.1, 0.1, 0.4, 0.25, 0.2});
}

TEST_F(Elementwise, SizeOneDimsStretchOnBothSides) {
  Tensor col = tensor("tensor<2x1xf64>", {1, 2});
  Tensor row = tensor("tensor<1x3xf64>", {10, 20, 30});
  Tensor out = runOp("step.add %a0, %a1", {col, row}, "tensor<2x3xf64>");
  EXPECT_EQ(shapeOf(out), (std::vector<int64_t>{2, 3}));
  expectValues(out, {11, 21, 31, 12, 22, 32});
  Tensor scalar = tensor("tensor<f64>", {0.5});
  expectValues(runOp("step.max %a0, %a1", {row, scalar}, "tensor<1x3xf64>"), {10, 20, 30});
}

TEST_F(Elementwise, MaxMinAndNaN) {
  Tensor a = tensor("tensor<3xf64>", {1, 5, NAN});
  Tensor b = tensor("tensor<3xf64>", {2, 4, 0});
  Tensor max = runOp("step.max %a0, %a1", {a, b}, "tensor<3xf64>");
  Tensor min = runOp("step.min %a0, %a1", {a, b}, "tensor<3xf64>");
  EXPECT_EQ(max.data[0], 2);
  EXPECT_EQ(max.data[1], 5);
  EXPECT_TRUE(std::isnan(max.data[2]));
  EXPECT_EQ(min.data[0], 1);
  EXPECT_EQ(min.data[1], 4);
  EXPECT_TRUE(std::isnan(min.data[2]));
}

TEST_F(Elementwise, IntegerArithmeticIsExactAndDivisionTruncates) {
  Tensor a = tensor("tensor<4xi32>", {7, -7, 6, 100000});
  Tensor b = tensor("tensor<4xi32>", {2, 2, 3, 100000});
  expectValues(runOp("step.div %a0, %a1", {a, b}, "tensor<4xi32>"), {3, -3, 2, 1});
  expectValues(runOp("step.mul %a0, %a1", {a, b}, "tensor<4xi32>"), {14, -14, 18, 1e10});
  expectValues(runOp("step.neg %a0", {a}, "tensor<4xi32>"), {-7, 7, -6, -100000});
  expectValues(runOp("step.abs %a0", {a}, "tensor<4xi32>"), {7, 7, 6, 100000});
}

TEST_F(Elementwise, IntegerDivisionByZeroIsAnError) {
  std::string errors = runOpError("step.div %a0, %a1",
                                  {tensor("tensor<2xi64>", {1, 2}), tensor("tensor<2xi64>", {1, 0})},
                                  "tensor<2xi64>");
  EXPECT_NE(errors.find("division by zero"), std::string::npos) << errors;
}

TEST_F(Elementwise, CompareGivesZeroOrOneForEveryPredicate) {
  Tensor a = tensor("tensor<3xf64>", {1, 2, 3});
  Tensor b = tensor("tensor<f64>", {2});
  auto compare = [&](const std::string &p) {
    return runOp("step.compare %a0, %a1 {predicate = \"" + p + "\"}", {a, b}, "tensor<3xi1>")
        .data;
  };
  EXPECT_EQ(compare("lt"), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(compare("le"), (std::vector<double>{1, 1, 0}));
  EXPECT_EQ(compare("gt"), (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(compare("ge"), (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(compare("eq"), (std::vector<double>{0, 1, 0}));
  EXPECT_EQ(compare("ne"), (std::vector<double>{1, 0, 1}));
}

TEST_F(Elementwise, SelectBroadcastsAllThreeOperands) {
  Tensor mask = tensor("tensor<2x1xi1>", {1, 0});
  Tensor x = tensor("tensor<2x3xf64>", {1, 2, 3, 4, 5, 6});
  Tensor fill = tensor("tensor<f64>", {-1});
  expectValues(runOp("step.select %a0, %a1, %a2", {mask, x, fill}, "tensor<2x3xf64>"),
               {1, 2, 3, -1, -1, -1});
}

TEST_F(Elementwise, CastTruncatesFloatsToIntegers) {
  Tensor x = tensor("tensor<5xf32>", {2.7, -2.7, 0.5, -0.5, 7.0});
  expectValues(runOp("step.cast %a0 {to = i32}", {x}, "tensor<5xi32>"), {2, -2, 0, 0, 7});
  expectValues(runOp("step.cast %a0 {to = i1}", {x}, "tensor<5xi1>"), {1, 1, 1, 1, 1});
  Tensor i = tensor("tensor<3xi64>", {0, 3, -4});
  expectValues(runOp("step.cast %a0 {to = f32}", {i}, "tensor<3xf32>"), {0, 3, -4});
  expectValues(runOp("step.cast %a0 {to = i1}", {i}, "tensor<3xi1>"), {0, 1, 1});
}

TEST_F(Elementwise, CastRoundsToNarrowFloatsToNearestEven) {
  // 1 + 2^-8 is halfway between the bf16 neighbours 1 and 1 + 2^-7: ties go to even (1).
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: ties go to even (1 + 2^-6).
  Tensor x = tensor("tensor<3xf64>", {1.0 + 0x1p-8, 1.0 + 3 * 0x1p-8, 1.0 / 3.0});
  expectValues(runOp("step.cast %a0 {to = bf16}", {x}, "tensor<3xbf16>"),
               {1.0, 1.0 + 0x1p-6, 0.333984375}, 0);
  expectValues(runOp("step.cast %a0 {to = f16}", {x}, "tensor<3xf16>"),
               {1.0 + 0x1p-8, 1.0 + 3 * 0x1p-8, 0.333251953125}, 0);
  expectValues(runOp("step.cast %a0 {to = f32}", {x}, "tensor<3xf32>"),
               {1.0 + 0x1p-8, 1.0 + 3 * 0x1p-8, static_cast<double>(1.0f / 3.0f)}, 0);
}

TEST_F(Elementwise, CastOutOfIntegerRangeIsAnError) {
  std::string errors =
      runOpError("step.cast %a0 {to = i32}", {tensor("tensor<1xf64>", {3e9})}, "tensor<1xi32>");
  EXPECT_NE(errors.find("out of range"), std::string::npos) << errors;
}

TEST_F(Elementwise, DropoutKeepsByPhiloxAndScales) {
  constexpr int kCount = 2000;
  std::vector<double> ones(kCount, 1.0);
  Tensor x = tensor("tensor<2000xf64>", ones);
  Tensor out = runOp("step.dropout %a0 {rate = 0.25, seed = 7}", {x}, "tensor<2000xf64>");
  ASSERT_EQ(out.data.size(), size_t{kCount});
  int kept = 0;
  for (int i = 0; i < kCount; ++i) {
    bool keep = rt::uniform01(7, rt::rngStream(rt::RngPurpose::kDropout, 0), i) >= 0.25;
    EXPECT_EQ(out.data[i], keep ? 1.0 / 0.75 : 0.0) << "element " << i;
    kept += out.data[i] != 0;
  }
  EXPECT_NEAR(kept / double(kCount), 0.75, 0.04);
  Tensor none = runOp("step.dropout %a0 {rate = 0.0, seed = 7}", {x}, "tensor<2000xf64>");
  EXPECT_EQ(none.data, ones);
}

TEST_F(Elementwise, JitterScalesByPhiloxFactorsInRange) {
  constexpr int kCount = 2000;
  std::vector<double> xs(kCount);
  for (int i = 0; i < kCount; ++i) xs[i] = 1.0 + 0.001 * i;
  Tensor x = tensor("tensor<2000xf64>", xs);
  Tensor step = tensor("tensor<i64>", {9});
  Tensor out = runOp("step.jitter %a0, %a1 {eps = 0.25, seed = 7}", {x, step}, "tensor<2000xf64>");
  ASSERT_EQ(out.data.size(), size_t{kCount});
  double low = 2.0, high = 0.0, mean = 0.0;
  for (int i = 0; i < kCount; ++i) {
    // The factor from word 0's top 24 bits of the jitter stream of step 9.
    uint32_t w0 = rt::philox4x32(7, rt::rngStream(rt::RngPurpose::kJitter, 9), i)[0];
    double factor = 0.75 + 0.5 * std::ldexp(static_cast<double>(w0 >> 8), -24);
    EXPECT_EQ(out.data[i], xs[i] * factor) << "element " << i;
    double f = out.data[i] / xs[i];
    low = std::min(low, f);
    high = std::max(high, f);
    mean += f / kCount;
  }
  EXPECT_GE(low, 0.75);
  EXPECT_LT(high, 1.25);
  EXPECT_LT(low, 0.76);   // the draws cover the range
  EXPECT_GT(high, 1.24);
  EXPECT_NEAR(mean, 1.0, 0.01);
  // Another step draws other factors; eps = 0 is the identity.
  Tensor other = runOp("step.jitter %a0, %a1 {eps = 0.25, seed = 7}", {x, tensor("tensor<i64>", {10})},
                       "tensor<2000xf64>");
  EXPECT_NE(other.data, out.data);
  Tensor none = runOp("step.jitter %a0 {eps = 0.0, seed = 7}", {x}, "tensor<2000xf64>");
  EXPECT_EQ(none.data, xs);
}

}  // namespace
}  // namespace stepc::interp::testing
