//===- Optimizer.cpp - SGD, Adam and AdamW updates -----------------------===//
#include <cmath>

#include "compiler/Training/UpdateRules.h"
#include "llvm/Support/GlobPattern.h"

namespace stepc::train {

llvm::SmallVector<std::string> optimizerSlots(const TrainConfig &c) {
  if (c.optimizer == "sgd") return c.momentum > 0 ? llvm::SmallVector<std::string>{"momentum"}
                                                  : llvm::SmallVector<std::string>{};
  return {"m", "v"};
}

namespace {

bool decays(const TrainConfig &c, llvm::StringRef name) {
  for (const std::string &pattern : c.noDecay) {
    llvm::Expected<llvm::GlobPattern> glob = llvm::GlobPattern::create(pattern);
    if (!glob) {
      llvm::consumeError(glob.takeError());
      continue;
    }
    if (glob->match(name)) return false;
  }
  return true;
}

}  // namespace

void emitOptimizerUpdate(ad::GradBuilder &g, const TrainConfig &c, llvm::ArrayRef<ParamSlot> params,
                         llvm::ArrayRef<llvm::SmallVector<mlir::Value>> state, mlir::Value lr_,
                         mlir::Value t, llvm::SmallVectorImpl<mlir::Value> &newParams,
                         llvm::SmallVectorImpl<llvm::SmallVector<mlir::Value>> &newState) {
  // The step size is an f32 scalar, the bias corrections f64; each update runs in its
  // parameter's dtype.
  newState.assign(state.size(), {});
  if (c.optimizer == "sgd") {
    for (auto [i, p] : llvm::enumerate(params)) {
      mlir::Value lr = castTo(g, lr_, ad::elementTypeOf(p.value));
      // Weight decay as PyTorch's SGD has it (added to the gradient; for plain SGD the same as
      // decoupled decay), on the parameters no_decay does not exclude.
      mlir::Value grad = c.weightDecay != 0 && decays(c, p.name)
                             ? g.add(p.grad, g.scale(p.value, c.weightDecay))
                             : p.grad;
      mlir::Value update = grad;
      if (c.momentum > 0) {
        mlir::Value buf = g.add(g.scale(state[0][i], c.momentum), grad);
        newState[0].push_back(buf);
        update = c.nesterov ? g.add(grad, g.scale(buf, c.momentum)) : buf;
      }
      newParams.push_back(g.sub(p.value, g.mul(lr, update)));
    }
    return;
  }
  // Bias corrections 1 - beta^(t+1), with beta^n = exp(n ln beta), in the counter's f64.
  mlir::Type tType = ad::elementTypeOf(t);
  auto st = [&](double v) { return g.scalar(v, tType); };
  mlir::Value n = g.add(t, st(1.0));
  auto correction = [&](double beta) {
    return g.sub(st(1.0), g.one<step::ExpOp>({g.scale(n, std::log(beta))}));
  };
  mlir::Value bc1_ = correction(c.beta1), bc2_ = correction(c.beta2);
  for (auto [i, p] : llvm::enumerate(params)) {
    mlir::Type et = ad::elementTypeOf(p.value);
    auto s = [&](double v) { return g.scalar(v, et); };
    mlir::Value lr = castTo(g, lr_, et), bc1 = castTo(g, bc1_, et), bc2 = castTo(g, bc2_, et);
    // Adam's weight decay is an L2 penalty in the gradient (PyTorch's Adam), before the moments;
    // AdamW's is decoupled, applied to the weights below.
    mlir::Value grad = c.optimizer == "adam" && c.weightDecay != 0 && decays(c, p.name)
                           ? g.add(p.grad, g.scale(p.value, c.weightDecay))
                           : p.grad;
    mlir::Value m = g.add(g.scale(state[0][i], c.beta1), g.scale(grad, 1 - c.beta1));
    mlir::Value v = g.add(g.scale(state[1][i], c.beta2), g.scale(g.mul(grad, grad), 1 - c.beta2));
    newState[0].push_back(m);
    newState[1].push_back(v);
    mlir::Value denom = g.add(g.one<step::SqrtOp>({g.div(v, bc2)}), s(c.eps));
    mlir::Value step = g.mul(lr, g.div(g.div(m, bc1), denom));
    mlir::Value w = p.value;
    if (c.optimizer == "adamw" && c.weightDecay != 0 && decays(c, p.name))
      w = g.mul(w, g.sub(s(1.0), g.scale(lr, c.weightDecay)));
    newParams.push_back(g.sub(w, step));
  }
}

}  // namespace stepc::train
