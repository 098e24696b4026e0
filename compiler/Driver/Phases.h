//===- Phases.h - the ordered stages of the stepc pipeline ------*- C++ -*-===//
//
// The one table of compiler stages. `--emit=STAGE` and `--dump-phases-to=DIR` (files
// `NN.STAGE.mlir`) are both driven from it; a stage is listed once it is implemented.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_DRIVER_PHASES_H
#define STEPC_COMPILER_DRIVER_PHASES_H

#include <optional>
#include <string>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace stepc {

enum class Phase {
  Model,  // the user's graph, verified, with overrides (--batch, --dim) applied
  Train,  // + @train_step: forward, backward, SAM, clipping, schedule, optimizer in one function
  Linalg,   // + @eval_loss and the `step.program` description; both on linalg/tensor/scf
  Kernels,  // elementwise ops fused into their consumers: one linalg op is one kernel
  Buffers,  // bufferized: memrefs, results as out-parameters, deallocations
  LLVM,     // the LLVM dialect, with packed entry points and the embedded description
};

struct PhaseInfo {
  Phase phase;
  const char *name;
  const char *description;
};

/// All implemented stages, in pipeline order.
llvm::ArrayRef<PhaseInfo> allPhases();
std::optional<Phase> parsePhase(llvm::StringRef name);
const PhaseInfo &phaseInfo(Phase phase);
/// "model, train, ..." for messages.
std::string phaseNames();

}  // namespace stepc

#endif  // STEPC_COMPILER_DRIVER_PHASES_H
