//===- BuildSampleLogits.cpp - --step-build-sample-logits -----------------===//
//
// The generation program next to the training step: @sample_logits(params, tokens) -> the
// next-token logits [B, V] of every row, for `NAME sample`. It is the model's forward (as
// @eval_loss runs it: no dropout) up to the logits its cross-entropy scores, at the window's
// last position: a row's window is its context, left-padded, so position T - 1 predicts the
// token after it. Built only for a model that has it: one token input whose next-token targets
// are the cross-entropy's targets (a language model); other models get no @sample_logits and
// their executables say so.
//
//===----------------------------------------------------------------------===//
#include "compiler/Autodiff/Autodiff.h"
#include "compiler/Autodiff/GradBuilder.h"
#include "compiler/Training/LossFunction.h"
#include "compiler/Training/Passes.h"
#include "dialects/step/IR/StepSpecs.h"

namespace stepc::train {

#define GEN_PASS_DEF_BUILDSAMPLELOGITS
#include "compiler/Training/Passes.h.inc"

namespace {

// `v` through the reshapes producing it.
mlir::Value throughReshapes(mlir::Value v) {
  while (auto reshape = v.getDefiningOp<step::ReshapeOp>()) v = reshape.getInput();
  return v;
}

struct BuildSampleLogitsPass : impl::BuildSampleLogitsBase<BuildSampleLogitsPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    if (module.lookupSymbol<mlir::func::FuncOp>("sample_logits")) return;
    auto models = llvm::to_vector(module.getOps<step::ModelOp>());
    if (models.size() != 1) return;
    step::ModelOp model = models.front();
    llvm::SmallVector<step::InputOp> inputs;
    for (mlir::Operation &op : model.getBody().front())
      if (auto input = llvm::dyn_cast<step::InputOp>(op)) inputs.push_back(input);
    if (inputs.size() != 1 || step::specKind(inputs.front().getSource()) != "token_stream") return;
    auto fn = buildLossFunction(module, model, "sample_logits", /*differentiate=*/false);
    if (failed(fn)) return signalPassFailure();
    unsigned numParams = fn->getNumArguments() - 2;  // then tokens, targets
    mlir::BlockArgument tokens = fn->getArgument(numParams), targets = fn->getArgument(numParams + 1);
    fn->walk([](step::DropoutOp dropout) {
      dropout.getResult().replaceAllUsesWith(dropout.getInput());
      dropout.erase();
    });
    // The cross-entropy scoring the next tokens: its targets are the input's targets.
    step::CrossEntropyOp scored;
    fn->walk([&](step::CrossEntropyOp ce) {
      if (throughReshapes(ce.getTargets()) == targets) scored = ce;
    });
    auto tokensType = llvm::cast<mlir::RankedTensorType>(tokens.getType());
    mlir::Value logits = scored ? scored.getLogits() : mlir::Value();
    auto logitsType = logits ? llvm::cast<mlir::RankedTensorType>(logits.getType()) : nullptr;
    int64_t batch = tokensType.getDimSize(0), seq = tokensType.getDimSize(1);
    if (!logitsType || tokensType.getRank() != 2 ||
        logitsType.getNumElements() % (batch * seq) != 0) {
      fn->erase();  // not a next-token model: no sampling program
      return;
    }
    int64_t vocab = logitsType.getNumElements() / (batch * seq);
    // [.., V] -> [B, T, V] -> the last position [B, 1, V] -> [B, V], in f32.
    mlir::func::ReturnOp ret = llvm::cast<mlir::func::ReturnOp>(fn->getBody().front().getTerminator());
    mlir::OpBuilder b(ret);
    ad::GradBuilder g(b, scored.getLoc());
    mlir::Value window = g.reshape(logits, {batch, seq, vocab});
    mlir::Value last = g.one<step::SliceOp>(
        {window}, {g.arrayAttr("start", {0, seq - 1, 0}), g.arrayAttr("limit", {batch, seq, vocab})});
    mlir::Value next = g.reshape(last, {batch, vocab});
    if (!logitsType.getElementType().isF32())
      next = g.one<step::CastOp>({next}, {g.attr("to", mlir::TypeAttr::get(b.getF32Type()))});
    if (g.failed()) {
      fn->erase();
      return;
    }
    ret->setOperands(next);
    // What only the loss needed goes: the cross-entropy, the loss after it, the targets.
    ad::eraseDeadStepOps(fn->getBody());
    if (!targets.use_empty()) {
      fn->erase();  // the forward reads the targets: not a plain language model
      return;
    }
    fn->eraseArgument(numParams + 1);
    fn->setFunctionType(mlir::FunctionType::get(&getContext(), fn->getArgumentTypes(),
                                                {next.getType()}));
    fn->setResultAttrs(0, b.getDictionaryAttr({b.getNamedAttr("step.role", b.getStringAttr("logits")),
                                               b.getNamedAttr("step.name", b.getStringAttr("logits"))}));
  }
};

}  // namespace
}  // namespace stepc::train
