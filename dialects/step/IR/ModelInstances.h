//===- ModelInstances.h - the trained model and its micro-batch instance -*- C++ -*-===//
//
// A module holds the model it trains and, where micro-batching needs one, a second instance of
// the same file read with B / K as its batch dim (ModelLoader's addMicroBatchInstance): a model
// that derives shapes from B (an MoE's N = B * S tokens) cannot have its batch resized by
// rewriting its inputs, so the micro-batch forward is built from that instance instead. It
// carries `step.micro_batch_of = @model`; everything else works on the trained model alone.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_DIALECTS_STEP_IR_MODELINSTANCES_H
#define STEPC_DIALECTS_STEP_IR_MODELINSTANCES_H

#include "dialects/step/IR/StepDialect.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

namespace stepc::step {

inline constexpr char kMicroBatchOf[] = "step.micro_batch_of";

/// True for a micro-batch instance (not a model of its own).
inline bool isMicroBatchInstance(ModelOp model) { return model->hasAttr(kMicroBatchOf); }

/// The module's models other than micro-batch instances (one in a well-formed module).
inline llvm::SmallVector<ModelOp> trainedModels(mlir::ModuleOp module) {
  llvm::SmallVector<ModelOp> models;
  for (ModelOp model : module.getOps<ModelOp>())
    if (!isMicroBatchInstance(model)) models.push_back(model);
  return models;
}

/// `model`'s micro-batch instance in `module`, or null.
inline ModelOp microBatchInstance(mlir::ModuleOp module, ModelOp model) {
  for (ModelOp other : module.getOps<ModelOp>())
    if (auto of = other->getAttrOfType<mlir::FlatSymbolRefAttr>(kMicroBatchOf))
      if (of.getValue() == model.getSymName()) return other;
  return {};
}

}  // namespace stepc::step

#endif  // STEPC_DIALECTS_STEP_IR_MODELINSTANCES_H
