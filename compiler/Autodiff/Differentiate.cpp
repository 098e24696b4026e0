//===- Differentiate.cpp - the --step-differentiate pass -----------------===//
#include "compiler/Autodiff/Autodiff.h"
#include "compiler/Autodiff/GradBuilder.h"
#include "compiler/Autodiff/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace stepc::ad {

#define GEN_PASS_DEF_DIFFERENTIATE
#include "compiler/Autodiff/Passes.h.inc"

namespace {

mlir::LogicalResult differentiateFunction(mlir::func::FuncOp fn) {
  mlir::Block &entry = fn.getBody().front();
  auto ret = llvm::cast<mlir::func::ReturnOp>(entry.getTerminator());
  if (ret.getNumOperands() == 0 || !isFloatTensor(ret.getOperand(0).getType()) ||
      rankOf(ret.getOperand(0)) != 0)
    return fn.emitError() << "step.differentiate needs a rank-0 float first result (the loss)";
  llvm::SmallVector<mlir::Operation *> forward;
  for (mlir::Operation &op : entry.without_terminator()) {
    if (llvm::isa<mlir::func::CallOp>(op))
      return op.emitError() << "inline calls before differentiating";
    forward.push_back(&op);
  }
  llvm::SmallVector<mlir::Value> wrt;
  for (mlir::BlockArgument arg : entry.getArguments())
    if (isFloatTensor(arg.getType())) wrt.push_back(arg);
  mlir::OpBuilder b(ret);
  mlir::Value loss = ret.getOperand(0);
  mlir::Value seed = GradBuilder(b, fn.getLoc()).splat(1.0, loss.getType());
  auto grads = emitGradients(b, forward, {{loss, seed}}, wrt);
  if (failed(grads)) return mlir::failure();
  llvm::SmallVector<mlir::Value> results(ret.getOperands());
  results.append(grads->begin(), grads->end());
  ret->setOperands(results);
  fn.setFunctionType(b.getFunctionType(entry.getArgumentTypes(), mlir::ValueRange(results).getTypes()));
  fn->removeAttr("step.differentiate");
  eraseDeadStepOps(fn.getBody());
  return mlir::success();
}

struct DifferentiatePass : impl::DifferentiateBase<DifferentiatePass> {
  void runOnOperation() override {
    for (auto fn : llvm::to_vector(getOperation().getOps<mlir::func::FuncOp>()))
      if (fn->hasAttr("step.differentiate") && failed(differentiateFunction(fn)))
        return signalPassFailure();
  }
};

}  // namespace
}  // namespace stepc::ad
