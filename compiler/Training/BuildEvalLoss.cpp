//===- BuildEvalLoss.cpp - --step-build-eval-loss -------------------------===//
//
// The evaluation program next to the training step: @eval_loss(params, batch) -> loss, the
// model's forward pass and loss (LossFunction.h) without differentiation. A training concern
// (what `eval` measures), so it is built here rather than by the codegen that describes it.
//
//===----------------------------------------------------------------------===//
#include "compiler/Training/LossFunction.h"
#include "compiler/Training/Passes.h"
#include "dialects/step/IR/ModelInstances.h"

namespace stepc::train {

#define GEN_PASS_DEF_BUILDEVALLOSS
#include "compiler/Training/Passes.h.inc"

namespace {

struct BuildEvalLossPass : impl::BuildEvalLossBase<BuildEvalLossPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    if (module.lookupSymbol<mlir::func::FuncOp>("eval_loss")) return;
    auto models = step::trainedModels(module);
    if (models.size() != 1 || !module.lookupSymbol<mlir::func::FuncOp>("train_step")) {
      module.emitError("expected one step.model and its func @train_step (the `train` stage)");
      return signalPassFailure();
    }
    auto eval = buildLossFunction(module, models.front(), "eval_loss", /*differentiate=*/false);
    if (failed(eval)) return signalPassFailure();
    // Evaluation is inference: dropout and jitter are the identity (training-time
    // regularisers; drawing them would also tie the loss to an arbitrary step's numbers).
    eval->walk([](step::StochasticOpInterface random) {
      random->getResult(0).replaceAllUsesWith(random.getInput());
      random->erase();
    });
  }
};

}  // namespace
}  // namespace stepc::train
