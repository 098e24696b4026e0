//===- Vjp.h - registering the vector-Jacobian products of step ops -*- C++ -*-===//
#ifndef STEPC_COMPILER_AUTODIFF_VJP_H
#define STEPC_COMPILER_AUTODIFF_VJP_H

#include "mlir/IR/DialectRegistry.h"

namespace stepc::ad {

/// Attaches DifferentiableOpInterface to every differentiable step op.
void registerVjpModels(mlir::DialectRegistry &registry);

}  // namespace stepc::ad

#endif  // STEPC_COMPILER_AUTODIFF_VJP_H
