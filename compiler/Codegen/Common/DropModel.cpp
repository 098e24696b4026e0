//===- DropModel.cpp - --step-drop-model ----------------------------------===//
//
// Erases the step.model (and any step.func library) once the step program's functions are
// lowered and described (`linalg` stage): the later stages work on @train_step / @eval_loss
// alone, and the model's tensor-typed graph would otherwise be taken for code to bufferize.
// Refuses if a function still holds a step op, which would mean a lowering gap.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/Passes.h"
#include "dialects/step/IR/StepDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_DROPMODEL
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

struct DropModelPass : impl::DropModelBase<DropModelPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    bool failed = false;
    for (auto fn : module.getOps<mlir::func::FuncOp>())
      fn.walk([&](mlir::Operation *op) {
        if (!llvm::isa<step::StepDialect>(op->getDialect()) || failed) return;
        op->emitError("the CPU backend cannot lower '")
            << op->getName() << "' yet (in @" << fn.getSymName()
            << "); it is missing from --step-lower-to-linalg";
        failed = true;
      });
    if (failed) return signalPassFailure();
    for (mlir::Operation &op : llvm::make_early_inc_range(module.getBody()->getOperations()))
      if (llvm::isa<step::StepDialect>(op.getDialect())) op.erase();
  }
};

}  // namespace

}  // namespace stepc::codegen
