//===- TrainConfig.cpp - the training configuration, resolved ------------===//
#include "compiler/Training/TrainConfig.h"

#include <sstream>

#include "dialects/step/IR/StepSpecs.h"
#include "mlir/IR/Builders.h"

#include <algorithm>

namespace stepc::train {

mlir::FailureOr<TrainConfig> resolveTrainConfig(step::ModelOp model,
                                                const TrainOverrides &overrides) {
  using step::specBool;
  using step::specFloat;
  using step::specInt;
  using step::specKind;
  TrainConfig c;
  if (step::ConfigOp config = model.getConfigOp()) {
    if (auto opt = config.getOptimizer()) {
      c.optimizer = specKind(*opt).str();
      c.lr = specFloat(*opt, "lr");
      if (c.optimizer == "sgd") {
        c.momentum = specFloat(*opt, "momentum");
        c.nesterov = specBool(*opt, "nesterov");
        c.weightDecay = specFloat(*opt, "weight_decay");
      } else {
        c.beta1 = specFloat(*opt, "beta1");
        c.beta2 = specFloat(*opt, "beta2");
        c.eps = specFloat(*opt, "eps");
      }
      if (c.optimizer == "adamw") {
        c.weightDecay = specFloat(*opt, "weight_decay");
        if (auto patterns = llvm::dyn_cast_or_null<mlir::ArrayAttr>(opt->get("no_decay")))
          for (mlir::Attribute p : patterns)
            c.noDecay.push_back(llvm::cast<mlir::StringAttr>(p).getValue().str());
      }
    }
    if (auto schedule = config.getSchedule()) {
      c.schedule = specKind(*schedule).str();
      if (c.schedule != "constant") {
        c.warmup = specInt(*schedule, "warmup");
        c.total = specInt(*schedule, "total");
      }
      if (c.schedule == "warmup_cosine") c.minLr = specFloat(*schedule, "min_lr");
      if (c.schedule == "one_cycle") {
        c.startLr = specFloat(*schedule, "start_lr");
        c.finalLr = specFloat(*schedule, "final_lr");
      }
    }
    if (auto clip = config.getClip()) {
      c.clip = specKind(*clip).str();
      if (c.clip == "global_norm") c.maxNorm = specFloat(*clip, "max_norm");
      if (c.clip == "agc") {
        c.agcLambda = specFloat(*clip, "lambda");
        c.agcEpsParam = specFloat(*clip, "eps_param");
        c.agcEpsGrad = specFloat(*clip, "eps_grad");
      }
    }
    if (auto sam = config.getSam(); sam && specKind(*sam) == "sam") {
      c.samRho = specFloat(*sam, "rho");
      if (!(c.samRho >= 0))
        return config.emitError() << "SAM's rho must be >= 0, found " << c.samRho;
      c.samAdaptive = specBool(*sam, "adaptive");
      c.samEta = specFloat(*sam, "eta");
      if (!(c.samEta >= 0))
        return config.emitError() << "SAM's eta must be >= 0, found " << c.samEta;
      c.samNextBatch = specBool(*sam, "next_batch");
    }
    if (auto k = config.getMicroBatches()) c.microBatches = *k;
  }

  if (overrides.optimizer) {
    const std::string &name = *overrides.optimizer;
    if (name != "sgd" && name != "adam" && name != "adamw")
      return model.emitError() << "--optimizer expects sgd, adam or adamw, found '" << name << "'";
    if (name == "adamw" && c.weightDecay == 0) c.weightDecay = 0.01;
    // Another optimizer keeps the model's weight decay and no_decay masks; say what that means
    // for it, since the three apply decay differently.
    if (name != c.optimizer && c.weightDecay != 0) {
      mlir::Operation *at = model.getConfigOp() ? model.getConfigOp().getOperation() : model;
      std::ostringstream decay;  // as written (0.1), not in exponent form
      decay << c.weightDecay;
      mlir::InFlightDiagnostic note = at->emitRemark();
      note << "--optimizer=" << name << " replaces " << c.optimizer
           << ": the weight decay is applied ";
      if (name == "adamw")
        note << "decoupled from the gradient (w *= 1 - lr * " << decay.str() << ")";
      else
        note << "as an L2 term in the gradient (g += " << decay.str() << " * w"
             << (name == "adam" ? ", before Adam's moments)" : ")");
      if (!c.noDecay.empty()) note << ", not to the parameters no_decay matches";
    }
    c.optimizer = name;
  }
  if (overrides.lr) {
    if (!(*overrides.lr > 0)) return model.emitError() << "--lr must be positive";
    c.lr = *overrides.lr;
  }
  if (overrides.samRho) {
    if (!(*overrides.samRho >= 0)) return model.emitError() << "--sam-rho must be >= 0";
    c.samRho = *overrides.samRho;
  }
  if (overrides.microBatches) {
    if (*overrides.microBatches < 1) return model.emitError() << "--micro-batches must be >= 1";
    c.microBatches = *overrides.microBatches;
  }
  if (overrides.clip) {
    if (*overrides.clip != "none" && *overrides.clip != "global_norm" && *overrides.clip != "agc")
      return model.emitError() << "--clip expects none, global_norm or agc, found '"
                               << *overrides.clip << "'";
    c.clip = *overrides.clip;
  }
  if (c.schedule != "constant" && c.total <= c.warmup)
    return model.emitError() << "the LR schedule needs total > warmup, found total = " << c.total
                             << ", warmup = " << c.warmup;
  // Ranges: values outside them silently diverge or switch features off.
  mlir::Operation *at = model.getConfigOp() ? model.getConfigOp().getOperation() : model;
  auto bad = [&](llvm::StringRef what, double value) {
    return at->emitError() << what << ", found " << value;
  };
  if (!(c.lr > 0)) return bad("the learning rate must be positive", c.lr);
  if (!(c.beta1 >= 0 && c.beta1 < 1)) return bad("beta1 must be in [0, 1)", c.beta1);
  if (!(c.beta2 >= 0 && c.beta2 < 1)) return bad("beta2 must be in [0, 1)", c.beta2);
  if (!(c.eps > 0)) return bad("eps must be positive", c.eps);
  if (!(c.momentum >= 0 && c.momentum < 1)) return bad("momentum must be in [0, 1)", c.momentum);
  if (!(c.weightDecay >= 0)) return bad("weight_decay must be >= 0", c.weightDecay);
  if (!(c.maxNorm > 0)) return bad("max_norm must be positive", c.maxNorm);
  if (!(c.agcLambda > 0)) return bad("AGC's lambda must be positive", c.agcLambda);
  if (!(c.agcEpsParam >= 0 && c.agcEpsGrad > 0))
    return bad("AGC's eps_param must be >= 0 and eps_grad positive", c.agcEpsGrad);
  if (!(c.samRho >= 0)) return bad("SAM's rho must be >= 0", c.samRho);
  if (c.warmup < 0) return bad("warmup must be >= 0", static_cast<double>(c.warmup));
  if (!(c.minLr >= 0 && c.startLr >= 0 && c.finalLr >= 0))
    return bad("schedule learning rates must be >= 0", std::min({c.minLr, c.startLr, c.finalLr}));
  return c;
}

void writeTrainConfig(step::ModelOp model, const TrainConfig &c) {
  mlir::OpBuilder b(model.getContext());
  step::ConfigOp config = model.getConfigOp();
  if (!config) {
    b.setInsertionPointToEnd(&model.getBody().front());
    config = b.create<step::ConfigOp>(model.getLoc(), mlir::TypeRange{}, mlir::ValueRange{},
                                      llvm::ArrayRef<mlir::NamedAttribute>{});
  }
  auto spec = [&](llvm::StringRef kind, llvm::ArrayRef<mlir::NamedAttribute> entries) {
    llvm::SmallVector<mlir::NamedAttribute> all{b.getNamedAttr("kind", b.getStringAttr(kind))};
    all.append(entries.begin(), entries.end());
    return b.getDictionaryAttr(all);
  };
  auto f = [&](llvm::StringRef key, double v) { return b.getNamedAttr(key, b.getF64FloatAttr(v)); };
  auto i = [&](llvm::StringRef key, int64_t v) {
    return b.getNamedAttr(key, b.getI64IntegerAttr(v));
  };
  llvm::SmallVector<mlir::NamedAttribute> opt{f("lr", c.lr)};
  if (c.optimizer == "sgd") {
    opt.append({f("momentum", c.momentum), b.getNamedAttr("nesterov", b.getBoolAttr(c.nesterov)),
                f("weight_decay", c.weightDecay)});
  } else {
    opt.append({f("beta1", c.beta1), f("beta2", c.beta2), f("eps", c.eps)});
  }
  if (c.optimizer == "adamw") {
    opt.push_back(f("weight_decay", c.weightDecay));
    llvm::SmallVector<mlir::Attribute> patterns;
    for (const std::string &p : c.noDecay) patterns.push_back(b.getStringAttr(p));
    opt.push_back(b.getNamedAttr("no_decay", b.getArrayAttr(patterns)));
  }
  config.setOptimizerAttr(spec(c.optimizer, opt));
  if (c.schedule == "warmup_cosine")
    config.setScheduleAttr(
        spec(c.schedule, {i("warmup", c.warmup), i("total", c.total), f("min_lr", c.minLr)}));
  else if (c.schedule == "one_cycle")
    config.setScheduleAttr(spec(c.schedule, {i("warmup", c.warmup), i("total", c.total),
                                             f("start_lr", c.startLr), f("final_lr", c.finalLr)}));
  else
    config.setScheduleAttr(spec("constant", {}));
  if (c.clip == "global_norm")
    config.setClipAttr(spec(c.clip, {f("max_norm", c.maxNorm)}));
  else if (c.clip == "agc")
    config.setClipAttr(spec(c.clip, {f("lambda", c.agcLambda), f("eps_param", c.agcEpsParam),
                                     f("eps_grad", c.agcEpsGrad)}));
  else
    config.setClipAttr(spec("none", {}));
  if (c.samRho > 0)
    config.setSamAttr(spec("sam", {f("rho", c.samRho),
                                   b.getNamedAttr("adaptive", b.getBoolAttr(c.samAdaptive)),
                                   f("eta", c.samEta),
                                   b.getNamedAttr("next_batch", b.getBoolAttr(c.samNextBatch))}));
  else
    config.setSamAttr(spec("none", {}));
  config.setMicroBatchesAttr(b.getI64IntegerAttr(c.microBatches));
}

}  // namespace stepc::train
