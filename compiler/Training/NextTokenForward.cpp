//===- NextTokenForward.cpp - a language model's forward to its logits ---===//
#include "compiler/Training/NextTokenForward.h"

#include "compiler/Autodiff/Autodiff.h"
#include "compiler/Autodiff/GradBuilder.h"
#include "compiler/Training/LossFunction.h"
#include "dialects/step/IR/ModelInstances.h"
#include "dialects/step/IR/StepSpecs.h"

namespace stepc::train {
namespace {

// `v` through the reshapes producing it.
mlir::Value throughReshapes(mlir::Value v) {
  while (auto reshape = v.getDefiningOp<step::ReshapeOp>()) v = reshape.getInput();
  return v;
}

}  // namespace

mlir::FailureOr<NextTokenForward> buildNextTokenForward(mlir::ModuleOp module,
                                                        llvm::StringRef name,
                                                        std::string &whyNot) {
  auto models = step::trainedModels(module);
  if (models.size() != 1) return whyNot = "expected one step.model", mlir::failure();
  step::ModelOp model = models.front();
  llvm::SmallVector<step::InputOp> inputs;
  for (mlir::Operation &op : model.getBody().front())
    if (auto input = llvm::dyn_cast<step::InputOp>(op)) inputs.push_back(input);
  if (inputs.size() != 1 || step::specKind(inputs.front().getSource()) != "token_stream")
    return whyNot = "the model does not take one token stream", mlir::failure();
  auto fn = buildLossFunction(module, model, name, /*differentiate=*/false);
  if (failed(fn)) return mlir::failure();
  auto refuse = [&](llvm::StringRef why) -> mlir::FailureOr<NextTokenForward> {
    fn->erase();
    whyNot = why.str();
    return mlir::failure();
  };
  unsigned numParams = fn->getNumArguments() - 2;  // then tokens, targets
  mlir::BlockArgument tokens = fn->getArgument(numParams), targets = fn->getArgument(numParams + 1);
  // Generation is inference: no dropout, no jitter.
  fn->walk([](step::StochasticOpInterface random) {
    random->getResult(0).replaceAllUsesWith(random.getInput());
    random->erase();
  });
  // The cross-entropy scoring the next tokens: its targets are the input's targets.
  step::CrossEntropyOp scored;
  fn->walk([&](step::CrossEntropyOp ce) {
    if (throughReshapes(ce.getTargets()) == targets) scored = ce;
  });
  if (!scored) return refuse("no cross-entropy scores the next tokens");
  auto tokensType = llvm::cast<mlir::RankedTensorType>(tokens.getType());
  auto logitsType = llvm::cast<mlir::RankedTensorType>(scored.getLogits().getType());
  if (tokensType.getRank() != 2) return refuse("the token input is not [batch, sequence]");
  NextTokenForward out;
  out.batch = tokensType.getDimSize(0);
  out.seq = tokensType.getDimSize(1);
  if (logitsType.getNumElements() % (out.batch * out.seq) != 0)
    return refuse("the scored logits are not one row per token");
  out.vocab = logitsType.getNumElements() / (out.batch * out.seq);
  auto ret = llvm::cast<mlir::func::ReturnOp>(fn->getBody().front().getTerminator());
  mlir::OpBuilder b(ret);
  ad::GradBuilder g(b, scored.getLoc());
  mlir::Value window = g.reshape(scored.getLogits(), {out.batch, out.seq, out.vocab});
  if (g.failed()) return refuse("the scored logits do not reshape to [batch, sequence, vocab]");
  ret->setOperands(window);
  // What only the loss needed goes: the cross-entropy, the loss after it, the targets.
  ad::eraseDeadStepOps(fn->getBody());
  if (!targets.use_empty()) return refuse("the forward reads the targets");
  fn->eraseArgument(numParams + 1);
  fn->setFunctionType(
      mlir::FunctionType::get(module.getContext(), fn->getArgumentTypes(), {window.getType()}));
  out.fn = *fn;
  return out;
}

}  // namespace stepc::train
