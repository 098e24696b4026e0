// The optimizers, LR schedules and clipping of the train step against closed-form values
// computed here, independently of the compiler: the model is the quadratic
// L(w) = 1/2 sum(a * w^2), whose gradient is a * w, trained in the reference interpreter.
#include <cmath>

#include "train_test_util.h"

namespace stepc::testing {
namespace {

// Hyperparameters are emitted as f32 constants; the interpreter computes in f64, so expected
// values use the same f32-rounded constants and agree to ~1e-12; 1e-9 leaves room.
constexpr double kTol = 1e-9;
double f32(double v) { return static_cast<double>(static_cast<float>(v)); }

const double kA[3] = {1.0, 2.0, -0.5};

std::string quadraticModel(const std::string &config) {
  return R"(
step.model @quadratic {
  %w = step.param "w" [3] f32 = constant(value = 1.5)
  %a = step.constant {value = dense<[1.0, 2.0, -0.5]> : tensor<3xf32>}
  %aw = step.mul %a, %w
  %aww = step.mul %aw, %w
  %s = step.sum %aww {axes = [0]}
  %half = step.constant {value = dense<0.5> : tensor<f32>}
  %loss = step.mul %s, %half
  step.loss %loss
  step.config { )" + config + R"( }
}
)";
}

struct TrainRun {
  std::vector<std::vector<double>> params;  // after each step
  std::vector<std::map<std::string, double>> metrics;
};

TrainRun train(const std::string &config, int steps, train::BuildTrainStepOptions options = {}) {
  Compiled c = compileTrain(quadraticModel(config), options);
  EXPECT_TRUE(c.module) << c.diagnostics;
  TrainRun run;
  if (!c.module) return run;
  auto trainer = ref::InterpretedTrainer::create(*c.module, /*seed=*/0);
  EXPECT_TRUE(succeeded(trainer));
  for (int s = 0; s < steps; ++s) {
    auto metrics = trainer->step();
    EXPECT_TRUE(succeeded(metrics));
    run.metrics.push_back(*metrics);
    run.params.push_back(trainer->params().at("w").data);
  }
  return run;
}

void expectNear(const std::vector<double> &got, const std::vector<double> &want, const char *what,
                int step) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], kTol * std::max(1.0, std::abs(want[i])))
        << what << " element " << i << " after step " << step;
}

TEST(Optimizer, SgdPlain) {
  TrainRun run = train("optimizer = sgd(lr = 0.1)", 3);
  std::vector<double> w(3, 1.5);
  for (int s = 0; s < 3; ++s) {
    for (int i = 0; i < 3; ++i) w[i] -= f32(0.1) * kA[i] * w[i];
    expectNear(run.params[s], w, "sgd", s);
  }
}

TEST(Optimizer, SgdMomentumAndNesterovAndWeightDecay) {
  for (bool nesterov : {false, true}) {
    TrainRun run = train(std::string("optimizer = sgd(lr = 0.1, momentum = 0.9, weight_decay = 0.01, "
                                "nesterov = ") + (nesterov ? "true" : "false") + ")",
                    3);
    std::vector<double> w(3, 1.5), buf(3, 0.0);
    for (int s = 0; s < 3; ++s) {
      for (int i = 0; i < 3; ++i) {
        double g = kA[i] * w[i] + f32(0.01) * w[i];
        buf[i] = f32(0.9) * buf[i] + g;
        double update = nesterov ? g + f32(0.9) * buf[i] : buf[i];
        w[i] -= f32(0.1) * update;
      }
      expectNear(run.params[s], w, nesterov ? "nesterov" : "momentum", s);
    }
  }
}

TEST(Optimizer, Adam) {
  TrainRun run = train("optimizer = adam(lr = 0.01, beta1 = 0.8, beta2 = 0.9, eps = 1.0e-6)", 4);
  std::vector<double> w(3, 1.5), m(3, 0.0), v(3, 0.0);
  double b1 = f32(0.8), b2 = f32(0.9);
  for (int s = 0; s < 4; ++s) {
    for (int i = 0; i < 3; ++i) {
      double g = kA[i] * w[i];
      m[i] = b1 * m[i] + f32(1 - 0.8) * g;
      v[i] = b2 * v[i] + f32(1 - 0.9) * g * g;
      double mhat = m[i] / (1 - std::pow(0.8, s + 1)), vhat = v[i] / (1 - std::pow(0.9, s + 1));
      w[i] -= f32(0.01) * mhat / (std::sqrt(vhat) + f32(1e-6));
    }
    expectNear(run.params[s], w, "adam", s);
  }
}

TEST(Optimizer, AdamWDecaysOnlyMatchingParameters) {
  TrainRun decayed = train("optimizer = adamw(lr = 0.01, weight_decay = 0.5)", 1);
  TrainRun excluded = train("optimizer = adamw(lr = 0.01, weight_decay = 0.5, no_decay = [\"w\"])", 1);
  TrainRun adam = train("optimizer = adam(lr = 0.01)", 1);
  for (int i = 0; i < 3; ++i) {
    // Step 1 of Adam moves every coordinate by lr * sign(g) (up to eps).
    double adamW = 1.5 - 0.01 * (kA[i] > 0 ? 1 : -1);
    EXPECT_NEAR(adam.params[0][i], adamW, 1e-6);
    EXPECT_NEAR(excluded.params[0][i], adam.params[0][i], kTol);
    EXPECT_NEAR(decayed.params[0][i], 1.5 * (1 - f32(0.01) * 0.5) - 0.01 * (kA[i] > 0 ? 1 : -1),
                1e-6);
  }
}

// --optimizer on a model written for AdamW keeps its weight decay and no_decay masks: SGD adds
// the decay to the gradient (for plain SGD the same as decoupled decay), Adam as an L2 term
// before its moments; neither decays what no_decay excludes.
TEST(Optimizer, AnotherOptimizerKeepsTheWeightDecayAndItsMasks) {
  train::BuildTrainStepOptions sgd;
  sgd.optimizer = "sgd";
  TrainRun decayed = train("optimizer = adamw(lr = 0.1, weight_decay = 0.5)", 2, sgd);
  TrainRun excluded =
      train("optimizer = adamw(lr = 0.1, weight_decay = 0.5, no_decay = [\"w\"])", 2, sgd);
  std::vector<double> wd(3, 1.5), wx(3, 1.5);
  for (int s = 0; s < 2; ++s) {
    for (int i = 0; i < 3; ++i) {
      wd[i] -= f32(0.1) * (kA[i] * wd[i] + 0.5 * wd[i]);
      wx[i] -= f32(0.1) * kA[i] * wx[i];
    }
    expectNear(decayed.params[s], wd, "sgd with the decay", s);
    expectNear(excluded.params[s], wx, "sgd, w excluded by no_decay", s);
  }
  train::BuildTrainStepOptions adam;
  adam.optimizer = "adam";
  TrainRun l2 = train("optimizer = adamw(lr = 0.01, weight_decay = 0.5)", 2, adam);
  std::vector<double> w(3, 1.5), m(3, 0.0), v(3, 0.0);
  for (int s = 0; s < 2; ++s) {
    for (int i = 0; i < 3; ++i) {
      double g = kA[i] * w[i] + 0.5 * w[i];
      m[i] = f32(0.9) * m[i] + f32(1 - 0.9) * g;
      v[i] = f32(0.999) * v[i] + f32(1 - 0.999) * g * g;
      double mhat = m[i] / (1 - std::pow(0.9, s + 1)), vhat = v[i] / (1 - std::pow(0.999, s + 1));
      w[i] -= f32(0.01) * mhat / (std::sqrt(vhat) + f32(1e-8));
    }
    expectNear(l2.params[s], w, "adam with L2", s);
  }
}

double warmupCosine(int t, double lr, int warmup, int total, double minLr) {
  if (t < warmup) return lr * (t + 1) / warmup;
  double p = std::min(1.0, double(t - warmup) / (total - warmup));
  return minLr + 0.5 * (lr - minLr) * (1 + std::cos(M_PI * p));
}

double oneCycle(int t, double lr, int warmup, int total, double start, double final) {
  if (t < warmup) return start + (lr - start) * t / warmup;
  double p = std::min(1.0, double(t - warmup) / (total - warmup));
  return final + 0.5 * (lr - final) * (1 + std::cos(M_PI * p));
}

TEST(Schedule, ConstantWarmupCosineAndOneCycle) {
  TrainRun constant = train("optimizer = sgd(lr = 0.05)", 3);
  for (auto &m : constant.metrics) EXPECT_NEAR(m.at("lr"), f32(0.05), 1e-12);
  TrainRun cosine = train(
      "optimizer = sgd(lr = 0.1), schedule = warmup_cosine(warmup = 3, total = 9, min_lr = 0.01)",
      12);
  for (int t = 0; t < 12; ++t)
    EXPECT_NEAR(cosine.metrics[t].at("lr"), warmupCosine(t, 0.1, 3, 9, 0.01), 1e-6) << "t=" << t;
  TrainRun cycle = train(
      "optimizer = sgd(lr = 0.1), schedule = one_cycle(warmup = 4, total = 10, start_lr = 0.02, "
      "final_lr = 0.001)",
      12);
  for (int t = 0; t < 12; ++t)
    EXPECT_NEAR(cycle.metrics[t].at("lr"), oneCycle(t, 0.1, 4, 10, 0.02, 0.001), 1e-6)
        << "t=" << t;
}

TEST(Clipping, GlobalNormScalesTheUpdate) {
  TrainRun run = train("optimizer = sgd(lr = 1.0), clip = global_norm(max_norm = 0.5)", 1);
  double g[3], norm = 0;
  for (int i = 0; i < 3; ++i) {
    g[i] = kA[i] * 1.5;
    norm += g[i] * g[i];
  }
  norm = std::sqrt(norm);
  EXPECT_NEAR(run.metrics[0].at("grad_norm"), norm, 1e-9);
  double coef = std::min(1.0, f32(0.5) / (norm + f32(1e-6)));
  std::vector<double> want;
  for (int i = 0; i < 3; ++i) want.push_back(1.5 - g[i] * coef);
  expectNear(run.params[0], want, "global_norm", 0);
}

TEST(Clipping, AdaptivePerColumn) {
  // A [2, 2] parameter: AGC compares each column's norms.
  std::string model = R"(
step.model @agc_columns {
  %w = step.param "w" [2, 2] f32 = constant(value = 1.0)
  %a = step.constant {value = dense<[[1.0, 100.0], [2.0, 0.001]]> : tensor<2x2xf32>}
  %aw = step.mul %a, %w
  %aww = step.mul %aw, %w
  %s = step.sum %aww {axes = [0, 1]}
  %half = step.constant {value = dense<0.5> : tensor<f32>}
  %loss = step.mul %s, %half
  step.loss %loss
  step.config { optimizer = sgd(lr = 1.0), clip = agc(lambda = 0.1) }
}
)";
  Compiled c = compileTrain(model);
  ASSERT_TRUE(c.module) << c.diagnostics;
  auto trainer = ref::InterpretedTrainer::create(*c.module, 0);
  ASSERT_TRUE(succeeded(trainer));
  ASSERT_TRUE(succeeded(trainer->step()));
  double a[2][2] = {{1.0, 100.0}, {2.0, 0.001}};
  std::vector<double> want(4);
  for (int col = 0; col < 2; ++col) {
    double pn = std::sqrt(2.0), gn = std::sqrt(a[0][col] * a[0][col] + a[1][col] * a[1][col]);
    double scale = std::min(f32(0.1) * std::max(pn, f32(1e-3)) / std::max(gn, f32(1e-6)), 1.0);
    for (int row = 0; row < 2; ++row) want[row * 2 + col] = 1.0 - a[row][col] * scale;
  }
  expectNear(trainer->params().at("w").data, want, "agc", 0);
}

TEST(Sam, PerturbsAlongTheNormalisedGradient) {
  for (bool adaptive : {false, true}) {
    TrainRun run = train(std::string("optimizer = sgd(lr = 0.1), sam = sam(rho = 0.3, adaptive = ") +
                        (adaptive ? "true" : "false") + ")",
                    1);
    // Hand-unrolled: g1 = a w; eps = rho d / ||s|| with d = g1 (or T^2 g1) and s = g1 (or
    // T g1), T = |w| + eta (ASAM; eta's default 0.01, in f32 as the step computes it).
    double w[3], g1[3], d[3], s2 = 0;
    for (int i = 0; i < 3; ++i) {
      w[i] = 1.5;
      g1[i] = kA[i] * w[i];
      double t = std::abs(w[i]) + f32(0.01);
      d[i] = adaptive ? t * t * g1[i] : g1[i];
      double si = adaptive ? t * g1[i] : g1[i];
      s2 += si * si;
    }
    double factor = f32(0.3) / (std::sqrt(s2) + f32(1e-12)), samLoss = 0;
    std::vector<double> want;
    for (int i = 0; i < 3; ++i) {
      double wp = w[i] + d[i] * factor;
      samLoss += 0.5 * kA[i] * wp * wp;
      want.push_back(w[i] - f32(0.1) * kA[i] * wp);  // the update uses g2 = a (w + eps), at w
    }
    expectNear(run.params[0], want, adaptive ? "adaptive sam" : "sam", 0);
    EXPECT_NEAR(run.metrics[0].at("sam_loss"), samLoss, 1e-9);
    EXPECT_NEAR(run.metrics[0].at("loss"), 0.5 * 1.5 * 1.5 * (1.0 + 2.0 - 0.5), 1e-9);
  }
}

TEST(Sam, RhoZeroFlagTurnsItOff) {
  train::BuildTrainStepOptions options;
  options.samRho = 0.0;
  TrainRun run = train("optimizer = sgd(lr = 0.1), sam = sam(rho = 0.3)", 1, options);
  EXPECT_EQ(run.metrics[0].count("sam_loss"), 0u);
  std::vector<double> want;
  for (int i = 0; i < 3; ++i) want.push_back(1.5 - f32(0.1) * kA[i] * 1.5);
  expectNear(run.params[0], want, "no sam", 0);
}

}  // namespace
}  // namespace stepc::testing
