// Interpreter: reshape, transpose, broadcast, slice, split, concat, pad, constant, iota.
#include "interpreter_test_util.h"

namespace stepc::interp::testing {
namespace {

using ShapeOps = InterpreterTest;

std::vector<double> iotaData(int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

TEST_F(ShapeOps, ReshapeKeepsRowMajorOrderAndResolvesZeroAndMinusOne) {
  Tensor x = tensor("tensor<2x3x4xf64>", iotaData(24));
  Tensor out = runOp("step.reshape %a0 {shape = [0, -1, 2]}", {x}, "tensor<2x6x2xf64>");
  EXPECT_EQ(shapeOf(out), (std::vector<int64_t>{2, 6, 2}));
  expectValues(out, iotaData(24));
  Tensor flat = runOp("step.reshape %a0 {shape = [24]}", {x}, "tensor<24xf64>");
  expectValues(flat, iotaData(24));
}

TEST_F(ShapeOps, TransposePermutesIndices) {
  Tensor x = tensor("tensor<2x3x4xf64>", iotaData(24));
  Tensor out = runOp("step.transpose %a0 {perm = [2, 0, 1]}", {x}, "tensor<4x2x3xf64>");
  // out[k, i, j] = x[i, j, k] = 12 i + 4 j + k.
  std::vector<double> expected;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) expected.push_back(12 * i + 4 * j + k);
  expectValues(out, expected);
}

TEST_F(ShapeOps, BroadcastPrependsAndStretches) {
  Tensor x = tensor("tensor<3x1xf64>", {1, 2, 3});
  Tensor out = runOp("step.broadcast %a0 {shape = [2, 3, 2]}", {x}, "tensor<2x3x2xf64>");
  expectValues(out, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
}

TEST_F(ShapeOps, SliceWithStartLimitAndStrides) {
  Tensor x = tensor("tensor<4x5xf64>", iotaData(20));
  Tensor box = runOp("step.slice %a0 {start = [1, 1], limit = [3, 4]}", {x}, "tensor<2x3xf64>");
  expectValues(box, {6, 7, 8, 11, 12, 13});
  Tensor strided = runOp("step.slice %a0 {start = [0, 1], limit = [4, 5], strides = [2, 3]}",
                         {x}, "tensor<2x2xf64>");
  expectValues(strided, {1, 4, 11, 14});
}

TEST_F(ShapeOps, SplitIntoEqualParts) {
  Tensor x = tensor("tensor<2x6xf64>", iotaData(12));
  std::string source = oneOpFunction("step.split %a0 {axis = -1, parts = 3}", {x},
                                     {"tensor<2x2xf64>", "tensor<2x2xf64>", "tensor<2x2xf64>"});
  std::vector<Tensor> parts = run(source, {x});
  ASSERT_EQ(parts.size(), 3u);
  expectValues(parts[0], {0, 1, 6, 7});
  expectValues(parts[1], {2, 3, 8, 9});
  expectValues(parts[2], {4, 5, 10, 11});
}

TEST_F(ShapeOps, ConcatAlongAnAxis) {
  Tensor a = tensor("tensor<2x1xf64>", {1, 2});
  Tensor b = tensor("tensor<2x2xf64>", {3, 4, 5, 6});
  expectValues(runOp("step.concat %a0, %a1 {axis = 1}", {a, b}, "tensor<2x3xf64>"),
               {1, 3, 4, 2, 5, 6});
  Tensor c = tensor("tensor<1x2xf64>", {7, 8});
  expectValues(runOp("step.concat %a0, %a1 {axis = 0}", {b, c}, "tensor<3x2xf64>"),
               {3, 4, 5, 6, 7, 8});
}

TEST_F(ShapeOps, PadFillsLowAndHighWithValue) {
  Tensor x = tensor("tensor<2x2xf64>", {1, 2, 3, 4});
  Tensor out = runOp("step.pad %a0 {low = [1, 0], high = [0, 2], value = -1.0}", {x},
                     "tensor<3x4xf64>");
  expectValues(out, {-1, -1, -1, -1, 1, 2, -1, -1, 3, 4, -1, -1});
  Tensor ints = tensor("tensor<2xi32>", {5, 6});
  expectValues(runOp("step.pad %a0 {low = [2], high = [1]}", {ints}, "tensor<5xi32>"),
               {0, 0, 5, 6, 0});
}

TEST_F(ShapeOps, ConstantsDenseSplatAndBoolean) {
  std::vector<Tensor> out = run(R"(
    func.func @f() -> (tensor<2x2xf32>, tensor<3xf64>, tensor<3xi1>, tensor<2xi32>) {
      %a = step.constant {value = dense<[[1.5, -2.0], [0.25, 4.0]]> : tensor<2x2xf32>}
      %b = step.constant {value = dense<0.5> : tensor<3xf64>}
      %c = step.constant {value = dense<[true, false, true]> : tensor<3xi1>}
      %d = step.constant {value = dense<[-7, 9]> : tensor<2xi32>}
      return %a, %b, %c, %d : tensor<2x2xf32>, tensor<3xf64>, tensor<3xi1>, tensor<2xi32>
    })",
                                {});
  ASSERT_EQ(out.size(), 4u);
  expectValues(out[0], {1.5, -2.0, 0.25, 4.0});
  expectValues(out[1], {0.5, 0.5, 0.5});
  expectValues(out[2], {1, 0, 1});
  expectValues(out[3], {-7, 9});
}

TEST_F(ShapeOps, IotaOverAShapeWithOffset) {
  std::vector<Tensor> out = run(R"(
    func.func @f() -> tensor<2x3xf32> {
      %i = step.iota {shape = [2, 3], axis = 1, dtype = f32, offset = 1}
      return %i : tensor<2x3xf32>
    })",
                                {});
  ASSERT_EQ(out.size(), 1u);
  expectValues(out[0], {1, 2, 3, 1, 2, 3});
}

TEST_F(ShapeOps, IotaLikeAnOperand) {
  Tensor like = tensor("tensor<2x3xi32>", {9, 9, 9, 9, 9, 9});
  expectValues(runOp("step.iota %a0 {axis = 0, dtype = i64}", {like}, "tensor<2x3xi64>"),
               {0, 0, 0, 1, 1, 1});
  expectValues(runOp("step.iota %a0 {axis = -1, dtype = i32, offset = -2}", {like},
                     "tensor<2x3xi32>"),
               {-2, -1, 0, -2, -1, 0});
}

}  // namespace
}  // namespace stepc::interp::testing
