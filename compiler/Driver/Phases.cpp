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
    {Phase::Linalg, "linalg",
     "+ func @eval_loss and the step.program description (what each buffer is); both "
     "functions lowered to linalg/tensor/arith/math/scf"},
    {Phase::Kernels, "kernels",
     "elementwise ops fused into their consumers (elementwise ops and reductions); each "
     "linalg op left is one kernel"},
    {Phase::Buffers, "buffers",
     "bufferized: memrefs, results written to caller-owned out-parameters, every temporary "
     "freed; each kernel outlined into a @kernel_N function, so @train_step is the host plan"},
    {Phase::LLVM, "llvm",
     "the LLVM dialect: loops, bare-pointer calls, packed entry points stepc_train_step / "
     "stepc_eval_loss and the embedded @stepc_program_description"},
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
