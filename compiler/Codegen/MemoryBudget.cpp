//===- MemoryBudget.cpp - what each repeat's backward keeps, to fit a budget ===//
#include "compiler/Codegen/MemoryBudget.h"

#include <cmath>
#include <cstdio>

#include "compiler/Autodiff/Autodiff.h"
#include "dialects/step/IR/ModelInstances.h"
#include "dialects/step/IR/ReversibleCoupling.h"
#include "dialects/step/IR/StepDialect.h"

namespace stepc::codegen {

std::string formatMiB(double bytes) {
  char text[32];
  if (bytes < (1 << 20)) std::snprintf(text, sizeof text, "%.1f KiB", bytes / (1 << 10));
  else std::snprintf(text, sizeof text, "%.1f MiB", bytes / (1 << 20));
  return text;
}

namespace {

std::string mib(double bytes) { return formatMiB(bytes); }

double tensorBytes(mlir::Type type) {
  auto t = llvm::cast<mlir::RankedTensorType>(type);
  return static_cast<double>(t.getNumElements()) *
         std::max<unsigned>(1, t.getElementTypeBitWidth() / 8);
}

// One repeat of the model and what its backward may keep. Level 0 is the least memory:
// reversible when the layer inverts, else recompute; each level above keeps one thing more.
struct RepeatChoices {
  std::string name;
  int64_t count = 0;
  bool canReverse = false;
  llvm::SmallVector<ad::GemmCandidate> gemms;
  double layerFlops = 0;  // one forward of the layer's GEMMs: what a rebuild recomputes
  double inputBytes = 0;  // one layer's carried inputs
  int numLevels() const { return (canReverse ? 1 : 0) + 1 + static_cast<int>(gemms.size()); }
  bool reversibleAt(int level) const { return canReverse && level == 0; }
  int64_t gemmsAt(int level) const { return level - (canReverse ? 1 : 0); }
  std::string describe(int level) const {
    if (reversibleAt(level)) return "reversible (nothing kept per layer)";
    int64_t k = gemmsAt(level), n = static_cast<int64_t>(gemms.size());
    if (k == 0) return "recompute (each layer's input kept)";
    if (k == n) return "store (each layer's input and all " + std::to_string(n) + " GEMM outputs kept)";
    return "each layer's input and " + std::to_string(k) + " of " + std::to_string(n) +
           " GEMM outputs kept";
  }
};

// Moving one repeat up one level: the bytes it keeps more and the FLOPs its backward spares.
struct Upgrade {
  size_t repeat;
  double bytes, flops;
  std::string what;
};

// One forward of the layer's matmuls and convolutions: what a rebuild recomputes.
double layerGemmFlops(step::RepeatOp repeat) {
  double flops = 0;
  for (mlir::Operation &op : repeat.getBody().front())
    if (llvm::isa<step::MatmulOp, step::Conv1dOp>(op)) flops += ad::gemmFlops(&op);
  return flops;
}

// Writes level `level` of `choices` on `repeat` (a model's step.repeat).
void applyLevel(step::RepeatOp repeat, const RepeatChoices &choices, int level) {
  mlir::Builder b(repeat.getContext());
  if (choices.reversibleAt(level)) {
    repeat.setReversible(true);
    repeat->removeAttr("step.saved_gemms");
    return;
  }
  repeat.setReversible(false);
  repeat->removeAttr("segment");  // only a reversible repeat has segments
  repeat->setAttr("step.saved_gemms", b.getI64IntegerAttr(choices.gemmsAt(level)));
}

llvm::SmallVector<step::RepeatOp> modelRepeats(mlir::ModuleOp module) {
  llvm::SmallVector<step::RepeatOp> repeats;
  for (step::ModelOp model : step::trainedModels(module))
    model.walk([&](step::RepeatOp r) { repeats.push_back(r); });
  return repeats;
}

struct Planned {
  double peak = 0, arena = 0, params = 0, state = 0, batch = 0;
};

// The planned memory of `module` with each repeat at `levels`.
mlir::FailureOr<Planned> plan(mlir::ModuleOp module, const StageOptions &options,
                              llvm::ArrayRef<RepeatChoices> choices, llvm::ArrayRef<int> levels) {
  auto memory = planOnCopy(module, options, [&](mlir::ModuleOp copy) {
    for (auto [i, repeat] : llvm::enumerate(modelRepeats(copy))) applyLevel(repeat, choices[i], levels[i]);
  });
  if (failed(memory)) return mlir::failure();
  auto get = [&](llvm::StringRef key) {
    auto v = llvm::dyn_cast_or_null<mlir::IntegerAttr>(memory->get(key));
    return v ? static_cast<double>(v.getInt()) : 0.0;
  };
  return Planned{get("peak_bytes"), get("arena_bytes"), get("params_bytes"), get("state_bytes"),
                 get("batch_bytes")};
}

}  // namespace

mlir::FailureOr<mlir::DictionaryAttr> planOnCopy(mlir::ModuleOp module, const StageOptions &options,
                                                 llvm::function_ref<void(mlir::ModuleOp)> edit,
                                                 std::string *description) {
  mlir::OwningOpRef<mlir::ModuleOp> copy(module.clone());
  edit(*copy);
  bool started = false;
  for (const Stage *stage : stagesOf(options.target)) {
    if (llvm::StringRef(stage->name) == "train") started = true;
    if (!started || stage->kind == StageKind::View) continue;
    if (failed(runStage(*stage, *copy, options))) return mlir::failure();
    if (llvm::StringRef(stage->name) == "buffers") break;
  }
  auto memory = (*copy)->getAttrOfType<mlir::DictionaryAttr>("step.memory");
  if (!memory) return module.emitError("the memory plan did not run"), mlir::failure();
  if (description)
    if (auto text = (*copy)->getAttrOfType<mlir::StringAttr>("step.program"))
      *description = text.str();
  return memory;
}

std::optional<int64_t> parseByteSize(llvm::StringRef text) {
  text = text.trim();
  double scale = 1;
  for (auto [suffix, s] : {std::pair<const char *, double>{"GiB", 1 << 30}, {"MiB", 1 << 20},
                           {"KiB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}})
    if (text.consume_back(suffix)) {
      scale = s;
      break;
    }
  double value = 0;
  if (text.empty() || text.trim().getAsDouble(value) || !(value > 0) || !std::isfinite(value))
    return std::nullopt;
  return static_cast<int64_t>(value * scale);
}

mlir::LogicalResult applyMemoryBudget(mlir::ModuleOp module, const StageOptions &options,
                                      int64_t budget) {
  llvm::SmallVector<step::RepeatOp> repeats = modelRepeats(module);
  llvm::SmallVector<RepeatChoices> choices;
  for (step::RepeatOp repeat : repeats) {
    RepeatChoices c;
    c.name = repeat.getName().str();
    c.count = repeat.getCount();
    std::string why;
    c.canReverse = succeeded(step::deriveCouplingInverse(repeat, why));
    c.gemms = ad::savedGemmCandidates(repeat);
    c.layerFlops = layerGemmFlops(repeat);
    for (mlir::Value init : repeat.getInits()) c.inputBytes += tensorBytes(init.getType());
    choices.push_back(std::move(c));
  }
  // Each repeat's upgrades in its own order; merged by FLOPs spared per byte kept.
  llvm::SmallVector<llvm::SmallVector<Upgrade>> chains;
  for (auto [i, c] : llvm::enumerate(choices)) {
    llvm::SmallVector<Upgrade> chain;
    double count = static_cast<double>(c.count);
    if (c.canReverse)
      chain.push_back({i, count * c.inputBytes, count * c.layerFlops,
                       "repeat '" + c.name + "': keeping each layer's input instead of rebuilding it"});
    for (const ad::GemmCandidate &g : c.gemms)
      chain.push_back({i, count * g.bytesPerLayer, count * ad::gemmFlops(g.op),
                       "repeat '" + c.name + "': keeping one more GEMM output per layer (" +
                           llvm::StringRef(g.op->getName().getStringRef()).str() + ")"});
    chains.push_back(std::move(chain));
  }
  llvm::SmallVector<Upgrade> order;
  llvm::SmallVector<size_t> next(chains.size(), 0);
  while (true) {
    int best = -1;
    double bestRatio = -1;
    for (size_t i = 0; i < chains.size(); ++i) {
      if (next[i] == chains[i].size()) continue;
      const Upgrade &u = chains[i][next[i]];
      double ratio = u.flops / std::max(1.0, u.bytes);
      if (ratio > bestRatio) bestRatio = ratio, best = static_cast<int>(i);
    }
    if (best < 0) break;
    order.push_back(chains[best][next[best]++]);
  }
  auto levelsAfter = [&](size_t upgrades) {
    llvm::SmallVector<int> levels(choices.size(), 0);
    for (size_t k = 0; k < upgrades; ++k) ++levels[order[k].repeat];
    return levels;
  };
  llvm::DenseMap<size_t, Planned> planned;
  auto peakAfter = [&](size_t upgrades) -> mlir::FailureOr<Planned> {
    if (auto it = planned.find(upgrades); it != planned.end()) return it->second;
    auto p = plan(module, options, choices, levelsAfter(upgrades));
    if (succeeded(p)) planned[upgrades] = *p;
    return p;
  };
  std::string budgetText = "--memory-budget=" + mib(static_cast<double>(budget));
  auto least = peakAfter(0);
  if (failed(least)) return mlir::failure();
  if (least->peak > static_cast<double>(budget)) {
    double stored = 0;
    std::string levels;
    for (const RepeatChoices &c : choices) {
      if (!c.canReverse) stored += static_cast<double>(c.count) * c.inputBytes;
      levels += "; repeat '" + c.name + "' " + c.describe(0);
    }
    mlir::Operation *where = module.getOperation();
    if (auto models = step::trainedModels(module); !models.empty()) where = models.front();
    return where->emitError() << budgetText << " cannot be met: the least memory this step plans is "
                              << mib(least->peak) << ": parameters " << mib(least->params)
                              << ", optimizer state " << mib(least->state) << ", batch "
                              << mib(least->batch) << ", the step's arena " << mib(least->arena)
                              << " (of which the layers' stored inputs " << mib(stored)
                              << ", the rest temporaries)" << levels;
  }
  // The longest prefix of `order` that fits: the peak grows with each upgrade.
  size_t fit = 0, over = order.size() + 1;
  auto all = peakAfter(order.size());
  if (failed(all)) return mlir::failure();
  if (all->peak <= static_cast<double>(budget)) {
    fit = order.size();
  } else {
    over = order.size();
    while (over - fit > 1) {
      size_t mid = (fit + over) / 2;
      auto p = peakAfter(mid);
      if (failed(p)) return mlir::failure();
      (p->peak <= static_cast<double>(budget) ? fit : over) = mid;
    }
  }
  llvm::SmallVector<int> levels = levelsAfter(fit);
  const Planned &chosen = planned[fit];
  std::string declined;
  if (fit < order.size())
    declined = "; not " + order[fit].what + ", which plans " + mib(planned[over].peak);
  mlir::Builder b(module.getContext());
  std::string summary = budgetText + ": planned peak " + mib(chosen.peak) + " (parameters " +
                        mib(chosen.params) + ", optimizer state " + mib(chosen.state) +
                        ", batch " + mib(chosen.batch) + ", arena " + mib(chosen.arena) + ")";
  for (auto [i, repeat] : llvm::enumerate(repeats)) {
    const RepeatChoices &c = choices[i];
    applyLevel(repeat, c, levels[i]);
    std::string why = levels[i] + 1 == c.numLevels()
                          ? "the most it can keep fits"
                          : "the least recompute that fits" +
                                (fit < order.size() && order[fit].repeat == i ? declined : "");
    repeat->setAttr("step.memory_choice", b.getStringAttr("chosen by " + budgetText + ": " + why));
    summary += "; repeat '" + c.name + "': " + c.describe(levels[i]);
  }
  summary += declined;
  module->setAttr("step.memory_budget", b.getStringAttr(summary));
  return mlir::success();
}

}  // namespace stepc::codegen
