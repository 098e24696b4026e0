// Where finite differences cannot judge (kinks and ties), the gradient is checked against the
// chosen subgradient, computed here by hand.
#include <gtest/gtest.h>

#include "fd_util.h"

namespace stepc::gradtest {
namespace {

// reduce_max splits the adjoint equally among tied maxima (as JAX does); pow with exponent 0
// or 1 has no 0 * x^-1 term (NaN at 0).
TEST(Subgradient, TiesAndPowAtZero) {
  auto context = makeContext();
  auto module = parseModule(R"(
func.func @f(%x: tensor<2x4xf64>) -> tensor<f64> attributes {step.differentiate} {
  %m = step.reduce_max %x {axes = [1]} : tensor<2x4xf64>
  %p0 = step.pow %x {exponent = 0.0} : tensor<2x4xf64>
  %p1 = step.pow %x {exponent = 1.0} : tensor<2x4xf64>
  %q = step.add %p0, %p1 : tensor<2x4xf64>, tensor<2x4xf64>
  %s1 = step.sum %m {axes = [0]} : tensor<2xf64>
  %s2 = step.sum %q {axes = [0, 1]} : tensor<2x4xf64>
  %s = step.add %s1, %s2 : tensor<f64>, tensor<f64>
  return %s : tensor<f64>
}
)", context.get());
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(differentiate(*module)));
  auto fn = module->lookupSymbol<mlir::func::FuncOp>("f");
  // Row 0: all four tied at 0 (a zero-initialised layer); row 1: one maximum.
  Tensor x{llvm::cast<mlir::RankedTensorType>(fn.getArgument(0).getType()),
           {0, 0, 0, 0, 1, 3, 2, 0}};
  auto results = runF64(fn, {x});
  ASSERT_TRUE(succeeded(results));
  const std::vector<double> &grad = (*results)[1].data;
  // d/dx of max: 1/4 for each tie in row 0, 1 at the maximum of row 1; plus d/dx x^1 = 1.
  std::vector<double> want = {1.25, 1.25, 1.25, 1.25, 1, 2, 1, 1};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_DOUBLE_EQ(grad[i], want[i]) << "element " << i;
}

}  // namespace
}  // namespace stepc::gradtest
