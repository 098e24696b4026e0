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

#include <string>

#include "dialects/step/IR/StepDialect.h"

namespace stepc::step {

/// How one carried input is recovered: x_slot = (y_slot - g) / scale (no division without a
/// scale).
struct CouplingStep {
  unsigned slot = 0;
  mlir::Value g;      // a value of the layer's body
  mlir::Value scale;  // a scalar constant, or null
};

/// The order in which `repeat`'s carried inputs are recovered from its outputs, or failure with
/// what is not invertible in `why`.
mlir::FailureOr<llvm::SmallVector<CouplingStep>> deriveCouplingInverse(RepeatOp repeat,
                                                                      std::string &why);

}  // namespace stepc::step

#endif  // STEPC_DIALECTS_STEP_IR_REVERSIBLECOUPLING_H
