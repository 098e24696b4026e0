//===- TrainConfig.h - the training configuration, resolved -----*- C++ -*-===//
//
// A model's `step.config` with the schema defaults applied and the command-line overrides
// (`--optimizer`, `--lr`, `--sam-rho`, ...) merged in. The train-step builder reads only this.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_TRAINING_TRAINCONFIG_H
#define STEPC_COMPILER_TRAINING_TRAINCONFIG_H

#include <optional>
#include <string>
#include <vector>

#include "dialects/step/IR/StepDialect.h"

namespace stepc::train {

struct TrainConfig {
  // Optimizer: "sgd", "adam" or "adamw".
  std::string optimizer = "adam";
  double lr = 1e-3, momentum = 0.0, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = 0.0;
  bool nesterov = false;
  std::vector<std::string> noDecay;  // glob patterns of parameter names
  // Schedule: "constant", "warmup_cosine" or "one_cycle".
  std::string schedule = "constant";
  int64_t warmup = 0, total = 1;
  double minLr = 0.0, startLr = 0.0, finalLr = 0.0;
  // Clipping: "none", "global_norm" or "agc".
  std::string clip = "none";
  double maxNorm = 1.0, agcLambda = 0.01, agcEpsParam = 1e-3, agcEpsGrad = 1e-6;
  // SAM: off when rho == 0.
  double samRho = 0.0;
  bool samAdaptive = false, samNextBatch = false;
  // Adaptive SAM's scale T_w = |w| + samEta (ASAM's eta): a zero weight is still perturbed.
  double samEta = 0.01;
  int64_t microBatches = 1;
};

/// Command-line overrides; unset fields keep the model's configuration.
struct TrainOverrides {
  std::optional<std::string> optimizer;
  std::optional<double> lr;
  std::optional<double> samRho;
  std::optional<int64_t> microBatches;
  std::optional<std::string> clip;
};

/// Reads `model`'s config (defaults when it has none) and applies `overrides`. Reports invalid
/// values (a non-positive lr, beta outside [0, 1), an unknown optimizer name, ...) as errors at
/// the config (or the model). Switching the optimizer keeps the learning rate; weight decay
/// carries over between sgd and adamw and defaults to 0.01 for adamw when the model had none.
mlir::FailureOr<TrainConfig> resolveTrainConfig(step::ModelOp model, const TrainOverrides &overrides);

/// Writes `config` back into the model's step.config, so the `train` stage records what it was
/// built with.
void writeTrainConfig(step::ModelOp model, const TrainConfig &config);

}  // namespace stepc::train

#endif  // STEPC_COMPILER_TRAINING_TRAINCONFIG_H
