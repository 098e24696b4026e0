//===- UpdateRules.h - schedule, clipping and optimizer updates -*- C++ -*-===//
//
// The pieces of the train step after the gradient, each emitted as step ops from the resolved
// TrainConfig. Formulas (t = the step counter, starting at 0):
//   constant:       lr_t = lr
//   warmup_cosine:  t < W: lr (t+1)/W;  else min_lr + (lr - min_lr)(1 + cos(pi p))/2,
//                   p = min((t - W)/(T - W), 1)
//   one_cycle:      t < W: start_lr + (lr - start_lr) t/W;
//                   else final_lr + (lr - final_lr)(1 + cos(pi p))/2
//   global_norm:    g *= min(max_norm / (||g|| + 1e-6), 1)        (||g|| over all parameters)
//   agc:            per column (all axes of the declared shape but the last; per layer for
//                   stacked parameters): g *= min(lambda max(||p||, eps_p) / max(||g||, eps_g), 1)
//   sgd:            g' = g + wd w;  b = mu b + g';  w -= lr (nesterov ? g' + mu b : b)
//                   (without momentum: w -= lr g')
//   adam:           m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
//                   w -= lr (m / (1 - b1^(t+1))) / (sqrt(v / (1 - b2^(t+1))) + eps)
//   adamw:          adam, after w *= 1 - lr wd for parameters not matching no_decay
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_TRAINING_UPDATERULES_H
#define STEPC_COMPILER_TRAINING_UPDATERULES_H

#include <string>

#include "compiler/Autodiff/GradBuilder.h"
#include "compiler/Training/TrainConfig.h"

namespace stepc::train {

struct ParamSlot {
  std::string name;  // full parameter name
  mlir::Value value;
  mlir::Value grad;
  int stackedDims;  // leading axes that stack repeat layers
};

/// The learning rate at step `step` (a rank-0 float counter; the result has its type).
mlir::Value emitLearningRate(ad::GradBuilder &g, const TrainConfig &config, mlir::Value step);

/// sqrt of the sum of squares of every element of `values` (rank-0 of `type`); zero when empty.
/// `byColumns`: each value's squares summed by columns first (GradBuilder::sumOfSquares).
mlir::Value emitGlobalNorm(ad::GradBuilder &g, llvm::ArrayRef<mlir::Value> values,
                           mlir::Type type, bool byColumns = false);

/// `v` converted to element type `type` (itself when it already has it).
mlir::Value castTo(ad::GradBuilder &g, mlir::Value v, mlir::Type type);

/// The clipped gradients (config.clip), given their global norm.
llvm::SmallVector<mlir::Value> emitClipping(ad::GradBuilder &g, const TrainConfig &config,
                                            llvm::ArrayRef<ParamSlot> params, mlir::Value norm);

/// The optimizer's per-parameter state slots, e.g. {"m", "v"} for Adam.
llvm::SmallVector<std::string> optimizerSlots(const TrainConfig &config);

/// Applies the optimizer: returns the new parameters, and the new state as [slot][param].
void emitOptimizerUpdate(ad::GradBuilder &g, const TrainConfig &config,
                         llvm::ArrayRef<ParamSlot> params,
                         llvm::ArrayRef<llvm::SmallVector<mlir::Value>> state, mlir::Value lr,
                         mlir::Value stepF32, llvm::SmallVectorImpl<mlir::Value> &newParams,
                         llvm::SmallVectorImpl<llvm::SmallVector<mlir::Value>> &newState);

}  // namespace stepc::train

#endif  // STEPC_COMPILER_TRAINING_UPDATERULES_H
