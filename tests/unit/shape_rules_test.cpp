// Unit tests of the shape arithmetic shared by step ops.
#include "dialects/step/IR/ShapeRules.h"

#include <gtest/gtest.h>

namespace stepc::step {
namespace {

using Shape = llvm::SmallVector<int64_t>;

TEST(BroadcastShapes, TrailingDimensionsAlign) {
  Shape a = {16, 256, 512}, b = {512};
  auto out = broadcastShapes({a, b});
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, (Shape{16, 256, 512}));
}

TEST(BroadcastShapes, SizeOneStretchesBothWays) {
  Shape a = {4, 1, 3}, b = {5, 1};
  auto out = broadcastShapes({a, b});
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(*out, (Shape{4, 5, 3}));
}

TEST(BroadcastShapes, ScalarsBroadcastToAnything) {
  Shape a = {}, b = {2, 3};
  EXPECT_EQ(*broadcastShapes({a, b}), (Shape{2, 3}));
  EXPECT_EQ(*broadcastShapes({a, a}), Shape{});
}

TEST(BroadcastShapes, MismatchIsRejected) {
  Shape a = {4, 3}, b = {4};
  EXPECT_FALSE(broadcastShapes({a, b}).has_value());
  Shape c = {2, 3}, d = {3, 3};
  EXPECT_FALSE(broadcastShapes({c, d}).has_value());
}

TEST(BroadcastShapes, ThreeOperands) {
  Shape a = {1, 3}, b = {2, 1}, c = {3};
  EXPECT_EQ(*broadcastShapes({a, b, c}), (Shape{2, 3}));
}

TEST(NormalizeAxis, NegativeAxesCountFromTheEnd) {
  EXPECT_EQ(normalizeAxis(-1, 3), 2);
  EXPECT_EQ(normalizeAxis(-3, 3), 0);
  EXPECT_EQ(normalizeAxis(0, 3), 0);
  EXPECT_EQ(normalizeAxis(2, 3), 2);
}

TEST(NormalizeAxis, OutOfRangeIsRejected) {
  EXPECT_FALSE(normalizeAxis(3, 3).has_value());
  EXPECT_FALSE(normalizeAxis(-4, 3).has_value());
  EXPECT_FALSE(normalizeAxis(0, 0).has_value());
}

}  // namespace
}  // namespace stepc::step
