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
  // --shard-optimizer: set when `value` and `grad` are this rank's block of the rows (the
  // whole parameter, which every rank has, for norms over its rows).
  mlir::Value wholeValue = nullptr;
};

/// The learning rate at step `step` (a rank-0 float counter; the result has its type).
mlir::Value emitLearningRate(ad::GradBuilder &g, const TrainConfig &config, mlir::Value step);

/// How emitGlobalNorm sums each value's squares.
struct NormOptions {
  /// By columns first (GradBuilder::sumOfSquares: the CPU's choice).
  bool byColumns = false;
  /// In blocks of rows first (--data-parallel): the rows cut into normRowBlocks blocks, each
  /// block's squares summed, then the blocks' sums in a pairwise tree (pairwiseSum). A rank
  /// that holds only a block of a value's rows (--shard-optimizer's reduce-scatter) can then
  /// compute its share, and the norm is one process's bit for bit.
  bool rowBlocks = false;
  /// Per value, whether it is this rank's block of rows, 1/`parts` of the value (each rank's
  /// subtree's sum is all-gathered: one step.all_gather of `parts` floats per value).
  llvm::ArrayRef<bool> blocks;
  int64_t parts = 0;
};

/// The most row blocks a norm sums separately; --shard-optimizer's rank count is at most this.
constexpr int64_t kMaxNormRowBlocks = 16;
/// The row blocks of `v`'s norm: the largest power of two dividing its rows, at most
/// kMaxNormRowBlocks (1 for a scalar).
int64_t normRowBlocks(mlir::Value v);
/// The same for a tensor of `rows` rows (1 for none).
int64_t normRowBlocks(int64_t rows);
/// The sums of squares of `x`'s rows cut into `blocks` equal blocks ([blocks]), summed the way
/// those of a tensor of `wholeRows` rows are (x may be a rank's block of it).
mlir::Value blockSquares(ad::GradBuilder &g, mlir::Value x, int64_t blocks, int64_t wholeRows,
                         bool byColumns);

/// The sum over the first axis of `x` [2^k, ...] in a pairwise tree, ((x0 + x1) + (x2 + x3))
/// ...: [1, ...]. A rank's aligned block of the rows is a subtree of it.
mlir::Value pairwiseSum(ad::GradBuilder &g, mlir::Value x);
/// Every rank's `shares` (each [1, ...], this rank's), all-gathered in one step.all_gather of
/// `parts` ranks: `gathered` gets each share's [parts, ...], rank order. Returns the gather.
mlir::Value gatherShares(ad::GradBuilder &g, llvm::ArrayRef<mlir::Value> shares, int64_t parts,
                         llvm::SmallVectorImpl<mlir::Value> &gathered);

/// sqrt of the sum of squares of every element of `values` (rank-0 of `type`); zero when empty.
mlir::Value emitGlobalNorm(ad::GradBuilder &g, llvm::ArrayRef<mlir::Value> values,
                           mlir::Type type, const NormOptions &options = {});

/// `v` converted to element type `type` (itself when it already has it).
mlir::Value castTo(ad::GradBuilder &g, mlir::Value v, mlir::Type type);

/// The clipped gradients (config.clip), given their global norm.
/// AGC's norms over a first axis sum by blocks of rows as `options` says (emitGlobalNorm's).
llvm::SmallVector<mlir::Value> emitClipping(ad::GradBuilder &g, const TrainConfig &config,
                                            llvm::ArrayRef<ParamSlot> params, mlir::Value norm,
                                            const NormOptions &options = {});

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
