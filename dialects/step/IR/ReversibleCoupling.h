//===- ReversibleCoupling.h - the inverse of a reversible repeat's layer -*- C++ -*-===//
//
// A `reversible` step.repeat's layer must be invertible in closed form, so that its backward
// can rebuild each layer's carried inputs from its outputs instead of storing them. The form
// it accepts is the coupling that RevNet, revlib and MomentumNets use, generalised: every
// carried output is
//
//     y_k = x_k + g_k      or      y_k = x_k * c + g_k      (c a nonzero scalar constant)
//
// (either operand order), where g_k does not depend on x_k, and the carried slots can be
// ordered so that each g_k depends only on the layer's outputs, its `over` slices, values from
// outside the layer and the inputs recovered before it. Then, in that order,
// x_k = y_k - g_k (or (y_k - g_k) / c). A MomentumNet layer
//     a' = a + f(x),   x' = x * beta + a' * (1 - beta)
// inverts as x = (x' - a' (1 - beta)) / beta, then a = a' - f(x).
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_DIALECTS_STEP_IR_REVERSIBLECOUPLING_H
#define STEPC_DIALECTS_STEP_IR_REVERSIBLECOUPLING_H

#include <optional>
#include <string>
#include <utility>

#include "dialects/step/IR/StepDialect.h"

namespace stepc::step {

/// How one carried input is recovered: x_slot = (y_slot - g) / scale (no division without a
/// scale). In exact streams (`streams = "exact"`, ForwardClone) the scaling is a
/// step.exact_scale instead, whose information buffer is carried in `bufferSlot`: then
/// (x_slot, buffer) = exact_scale^-1(y_slot - g, y_bufferSlot), both recovered at once.
struct CouplingStep {
  unsigned slot = 0;
  mlir::Value g;      // a value of the layer's body
  mlir::Value scale;  // a scalar constant, or null
  ExactScaleOp exactScale;  // or null
  unsigned bufferSlot = 0;
};

/// The order in which `repeat`'s carried inputs are recovered from its outputs, or failure with
/// what is not invertible in `why`.
mlir::FailureOr<llvm::SmallVector<CouplingStep>> deriveCouplingInverse(RepeatOp repeat,
                                                                      std::string &why);

/// Exact streams hold values on the grid 2^-kExactStreamBits: |x| < 2^21 keeps f64 sums exact.
inline constexpr int64_t kExactStreamBits = 32;
/// The largest denominator `exactRatio` tries.
inline constexpr int64_t kExactRatioMaxDen = 1024;

/// A coupling scale c as num/den (den <= kExactRatioMaxDen, the smallest that matches c to
/// within f32 rounding, since the model's constant is f32), or nullopt.
std::optional<std::pair<int64_t, int64_t>> exactRatio(double c);

/// The bits an exact_scale information buffer reaches after `count` scalings by num/den: it
/// grows by log2(den/num) a layer, from den.
double exactBufferBits(int64_t num, int64_t den, int64_t count);

}  // namespace stepc::step

#endif  // STEPC_DIALECTS_STEP_IR_REVERSIBLECOUPLING_H
