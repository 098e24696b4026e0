//===- Elementwise.h - the step ops that act on each element alone -*- C++ -*-===//
//
// The elementwise (broadcasting) step ops: each result element reads only the operands'
// elements at its own index. The passes that re-slice a graph (a layer's update moved into its
// repeat, a forward rebuilt for one position) may run them on any slice as they are.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_TRAINING_ELEMENTWISE_H
#define STEPC_COMPILER_TRAINING_ELEMENTWISE_H

#include "dialects/step/IR/StepDialect.h"

namespace stepc::train {

inline bool isElementwise(mlir::Operation *op) {
  return llvm::isa<step::NegOp, step::AbsOp, step::ExpOp, step::LogOp, step::SqrtOp,
                   step::RsqrtOp, step::TanhOp, step::SigmoidOp, step::ReluOp, step::SiluOp,
                   step::ErfOp, step::SinOp, step::CosOp, step::GeluOp, step::LeakyReluOp,
                   step::PowOp, step::AddOp, step::SubOp, step::MulOp, step::DivOp, step::MaxOp,
                   step::MinOp, step::CompareOp, step::SelectOp, step::CastOp>(op);
}

}  // namespace stepc::train

#endif  // STEPC_COMPILER_TRAINING_ELEMENTWISE_H
