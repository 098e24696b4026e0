//===- MemoryBudget.h - what each repeat's backward keeps, to fit a budget -*- C++ -*-===//
//
// `stepc compile --memory-budget=BYTES`: for each step.repeat of the model the compiler
// chooses what its backward keeps per layer, from least memory (most recompute) to most:
//
//   reversible   nothing: the backward rebuilds each layer's inputs from its outputs and runs
//                the layer once more (only for a layer whose coupling inverts,
//                ReversibleCoupling.h, whether or not the model marks it `reversible`);
//   recompute    each layer's input (a checkpoint per layer): the backward recomputes the layer;
//   + K GEMMs    and the outputs of its first K weight GEMMs, most FLOPs per element first
//                (ad::savedGemmCandidates): the backward recomputes only the cheap ops around
//                them; all of them is "store".
//
// The upgrades of all repeats are ordered by the recompute FLOPs each spares per byte it
// keeps; the compiler takes the longest prefix of that order whose planned peak (the static
// memory plan of the target's `buffers` stage: arena, parameters, optimizer state and batch)
// fits the budget, found by bisection over real plans, not estimates. A budget that even the
// least-memory choice cannot meet is an error with the breakdown. The choice is written on the
// model's repeats (`reversible`, `step.saved_gemms`, `step.memory_choice`) for autodiff, and
// the summary on the module (`step.memory_budget`), which `--emit=plan` and `NAME info` print.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_MEMORYBUDGET_H
#define STEPC_COMPILER_CODEGEN_MEMORYBUDGET_H

#include <cstdint>
#include <optional>
#include <string>

#include "compiler/Codegen/Pipelines.h"

namespace stepc::codegen {

/// "12.3 MiB" (or "4.0 KiB" under a MiB): how the budgets' messages print sizes.
std::string formatMiB(double bytes);

/// Parses --memory-budget: bytes, or a number with K, M, G (KiB, MiB, GiB: powers of 1024).
std::optional<int64_t> parseByteSize(llvm::StringRef text);

/// Chooses what each repeat of `module`'s model (at the `model` stage) keeps for its backward
/// so that the planned peak fits `budget` bytes with the least recompute, and records it on the
/// model. Fails with a located error and the breakdown when no choice fits.
/// The static memory plan (`step.memory`) of a copy of `module` (at the `model` stage), edited
/// by `edit` and taken through the target's stages up to `buffers`; `description`, if given,
/// receives the copy's program description (JSON).
mlir::FailureOr<mlir::DictionaryAttr> planOnCopy(mlir::ModuleOp module, const StageOptions &options,
                                                 llvm::function_ref<void(mlir::ModuleOp)> edit,
                                                 std::string *description = nullptr);

mlir::LogicalResult applyMemoryBudget(mlir::ModuleOp module, const StageOptions &options,
                                      int64_t budget);

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_MEMORYBUDGET_H
