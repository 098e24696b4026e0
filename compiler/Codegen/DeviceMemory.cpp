//===- DeviceMemory.cpp - which buffers live in host memory, to fit the device ===//
#include "compiler/Codegen/DeviceMemory.h"

#include <algorithm>
#include <cstdio>

#include "compiler/Codegen/MemoryBudget.h"
#include "dialects/step/IR/ModelInstances.h"
#include "dialects/step/IR/StepDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "runtime/formats/ProgramDescription.h"

namespace stepc::codegen {
namespace {

std::string mib(double bytes) { return formatMiB(bytes); }

struct Candidate {
  std::string name;
  int64_t bytes = 0;
  bool state = false;
};

struct Plan {
  double peak = 0, arena = 0, params = 0, state = 0, batch = 0, host = 0;
  std::string summary;  // the pass's: what it could not stream, and why
};

mlir::Attribute request(mlir::MLIRContext *ctx, llvm::ArrayRef<Candidate> chosen,
                        llvm::StringRef mode) {
  mlir::Builder b(ctx);
  llvm::SmallVector<mlir::Attribute> names;
  for (const Candidate &c : chosen) names.push_back(b.getStringAttr(c.name));
  return b.getDictionaryAttr({b.getNamedAttr("buffers", b.getArrayAttr(names)),
                              b.getNamedAttr("mode", b.getStringAttr(mode))});
}

mlir::FailureOr<Plan> planWith(mlir::ModuleOp module, const StageOptions &options,
                               llvm::ArrayRef<Candidate> chosen, llvm::StringRef mode,
                               std::string *description = nullptr) {
  mlir::Attribute attr = request(module.getContext(), chosen, mode);
  std::string text;
  auto memory = planOnCopy(
      module, options, [&](mlir::ModuleOp copy) { copy->setAttr("step.offload", attr); }, &text);
  if (failed(memory)) return mlir::failure();
  auto get = [&](llvm::StringRef key) {
    auto v = llvm::dyn_cast_or_null<mlir::IntegerAttr>(memory->get(key));
    return v ? static_cast<double>(v.getInt()) : 0.0;
  };
  Plan p{get("peak_bytes"), get("arena_bytes"), get("params_bytes"),
         get("state_bytes"), get("batch_bytes"), get("host_bytes"), ""};
  rt::ProgramDescription d;
  if (rt::parseProgramDescription(text, d).ok()) p.summary = d.info.offloadSummary;
  if (description) *description = text;
  return p;
}

}  // namespace

mlir::LogicalResult applyDeviceMemory(mlir::ModuleOp module, const StageOptions &options,
                                      int64_t deviceBytes, llvm::StringRef mode) {
  mlir::Operation *where = module.getOperation();
  if (auto models = step::trainedModels(module); !models.empty()) where = models.front();
  std::string flag = "--device-memory=" + mib(static_cast<double>(deviceBytes));
  std::string text;
  auto resident = planWith(module, options, {}, mode, &text);
  if (failed(resident)) return mlir::failure();
  mlir::Builder b(module.getContext());
  if (resident->peak <= static_cast<double>(deviceBytes)) {
    module->setAttr("step.offload_summary",
                    b.getStringAttr(flag + ": everything on the device (planned peak " +
                                    mib(resident->peak) + ")"));
    return mlir::success();
  }
  // The stacked layers' buffers, cheapest to stream per byte first.
  rt::ProgramDescription d;
  if (rt::Status s = rt::parseProgramDescription(text, d); !s.ok())
    return where->emitError("program description: ") << s.message();
  std::vector<Candidate> candidates;
  auto bytes = [](const std::vector<int64_t> &shape) {
    int64_t n = 4;
    for (int64_t x : shape) n *= x;
    return n;
  };
  for (const rt::StateSpec &s : d.info.state)
    for (const rt::ParamSpec &p : d.info.params)
      if (p.name == s.param && p.stackedDims > 0)
        candidates.push_back({"state:" + s.slot + "/" + s.param, bytes(s.shape), true});
  for (const rt::ParamSpec &p : d.info.params)
    if (p.stackedDims > 0) candidates.push_back({"param:" + p.name, bytes(p.shape), false});
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate &a, const Candidate &c) {
    if (a.state != c.state) return a.state;
    return a.bytes > c.bytes;
  });
  llvm::DenseMap<size_t, Plan> plans;
  auto planned = [&](size_t n) -> mlir::FailureOr<Plan> {
    if (auto it = plans.find(n); it != plans.end()) return it->second;
    auto p = planWith(module, options, llvm::ArrayRef(candidates).take_front(n), mode);
    if (succeeded(p)) plans[n] = *p;
    return p;
  };
  auto all = planned(candidates.size());
  if (failed(all)) return mlir::failure();
  if (candidates.empty() || all->peak > static_cast<double>(deviceBytes))
    return where->emitError() << flag << " cannot be met: with every stacked layer's parameters "
                              << "and optimizer state in host memory (" << mib(all->host)
                              << ") the device still needs " << mib(all->peak) << ": parameters "
                              << mib(all->params) << ", optimizer state " << mib(all->state)
                              << ", batch " << mib(all->batch) << ", the step's arena "
                              << mib(all->arena) << " (activations, gradients, temporaries and "
                              << "the transfer slots)"
                              << (all->summary.empty() ? "" : "; " + all->summary);
  // The shortest prefix that fits: the peak falls as buffers leave.
  size_t over = 0, fit = candidates.size();
  while (fit - over > 1) {
    size_t mid = (over + fit) / 2;
    auto p = planned(mid);
    if (failed(p)) return mlir::failure();
    (p->peak <= static_cast<double>(deviceBytes) ? fit : over) = mid;
  }
  const Plan &chosen = plans[fit];
  llvm::ArrayRef<Candidate> streamed = llvm::ArrayRef(candidates).take_front(fit);
  module->setAttr("step.offload", request(module.getContext(), streamed, mode));
  std::string names;
  for (const Candidate &c : streamed) names += (names.empty() ? "" : ", ") + c.name;
  std::string summary = flag + ": planned device peak " + mib(chosen.peak) + " (parameters " +
                        mib(chosen.params) + ", optimizer state " + mib(chosen.state) +
                        ", batch " + mib(chosen.batch) + ", arena " + mib(chosen.arena) +
                        "); in host memory, streamed layer by layer (" + mode.str() + "): " +
                        names + " (" + mib(chosen.host) + ")";
  if (fit > 0 && plans.count(fit - 1))
    summary += "; one buffer fewer plans " + mib(plans[fit - 1].peak);
  module->setAttr("step.offload_summary", b.getStringAttr(summary));
  return mlir::success();
}

}  // namespace stepc::codegen
