//===- Phases.cpp - the ordered stages of the stepc pipeline -------------===//
#include "compiler/Driver/Phases.h"

#include "llvm/ADT/STLExtras.h"

namespace stepc {

static const PhaseInfo kPhases[] = {
    {Phase::Model, "model",
     "the user's graph: step ops on static-shaped tensors with declarations, loss and config"},
    {Phase::Train, "train",
     "+ func @train_step(params, optimizer state, batch, step) -> (params', state', metrics): "
     "forward, backward, SAM, clipping, LR schedule and optimizer in one function"},
};

llvm::ArrayRef<PhaseInfo> allPhases() { return kPhases; }

std::optional<Phase> parsePhase(llvm::StringRef name) {
  for (const PhaseInfo &info : kPhases)
    if (name == info.name) return info.phase;
  return std::nullopt;
}

const PhaseInfo &phaseInfo(Phase phase) {
  return *llvm::find_if(kPhases, [&](const PhaseInfo &i) { return i.phase == phase; });
}

std::string phaseNames() {
  std::string out;
  for (const PhaseInfo &info : kPhases) out += (out.empty() ? "" : ", ") + std::string(info.name);
  return out;
}

}  // namespace stepc
