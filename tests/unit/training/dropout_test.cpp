// Dropout in the train step draws a new mask every step (its Philox stream is the step
// counter) and the same mask for the same step; the gradient uses the forward's mask.
#include "train_test_util.h"

namespace stepc::testing {
namespace {

constexpr const char *kModel = R"(
step.model @dropout_mean {
  %w = step.param "w" [256] f32 = ones
  %y = step.dropout %w {rate = 0.5, seed = 11}
  %loss = step.mean %y {axes = [0]}
  step.loss %loss
  step.config { optimizer = sgd(lr = 1.0) }
}
)";

TEST(Dropout, NewMaskEveryStepSameMaskForTheSameStep) {
  Compiled c = compileTrain(kModel);
  ASSERT_TRUE(c.module) << c.diagnostics;
  std::vector<double> losses;
  std::vector<std::vector<double>> params;
  auto trainer = ref::InterpretedTrainer::create(*c.module, 0);
  ASSERT_TRUE(succeeded(trainer));
  for (int s = 0; s < 2; ++s) {
    auto metrics = trainer->step();
    ASSERT_TRUE(succeeded(metrics));
    losses.push_back(metrics->at("loss"));
    params.push_back(trainer->params().at("w").data);
  }
  // The loss is (kept count) * 2 / 256 with w = 1: different masks give different counts.
  EXPECT_NE(losses[0], losses[1]);
  // The gradient is the mask * 2 / 256: a kept element moved by exactly 2/256, a dropped one
  // did not move, and the kept count matches the loss.
  int kept = 0;
  for (double w : params[0]) {
    EXPECT_TRUE(w == 1.0 || std::abs(w - (1.0 - 2.0 / 256)) < 1e-12) << w;
    kept += w != 1.0;
  }
  EXPECT_NEAR(losses[0], kept * 2.0 / 256, 1e-12);
  // A second trainer reproduces step 0 exactly.
  auto again = ref::InterpretedTrainer::create(*c.module, 0);
  ASSERT_TRUE(succeeded(again));
  auto first = again->step();
  ASSERT_TRUE(succeeded(first));
  EXPECT_EQ(first->at("loss"), losses[0]);
}

}  // namespace
}  // namespace stepc::testing
