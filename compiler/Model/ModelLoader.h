//===- ModelLoader.h - read, override and verify a model file ---*- C++ -*-===//
//
// The front door of the compiler: parses a model file into a module holding one `step.model`,
// applies the user's overrides (`--config NAME` and `--dim NAME=V` while parsing, `--batch N`
// after) and verifies it.
// Errors go to the context's diagnostic handler as `file:line:col: error: ...`.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_MODEL_MODELLOADER_H
#define STEPC_COMPILER_MODEL_MODELLOADER_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "dialects/step/IR/StepDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace llvm {
class SourceMgr;
}

namespace stepc {

struct ModelOverrides {
  /// Replaces the leading (batch) dimension of every input; nullopt keeps the file's. Where
  /// the model declares the dim B and every input leads with it, this sets B instead (what
  /// the model derives from B follows).
  std::optional<int64_t> batch;
  /// Replaces named dims declared with `dims(...)`.
  std::map<std::string, int64_t> dims;
  /// Applies the model's configuration of this name (`configs(NAME = (...))`) before `dims`;
  /// empty: the dims as declared.
  std::string config;
  /// --precision=bf16: bf16 contractions with f32 master weights (applyAutocastBf16).
  bool autocastBf16 = false;
};

/// Registers the dialects a model file may contain.
void registerStepDialects(mlir::MLIRContext &context);

/// Parses `sourceMgr`'s main buffer, applies `overrides` and verifies. Returns null on error
/// (already reported).
mlir::OwningOpRef<mlir::ModuleOp> loadModel(llvm::SourceMgr &sourceMgr, mlir::MLIRContext &context,
                                            const ModelOverrides &overrides);

/// Where micro-batching `module`'s model over `microBatches` micro-batches cannot resize its
/// inputs' batch alone (a shape derived from the dim B, e.g. an MoE's N = B * S tokens), reads
/// the file again with B / microBatches and adds that instance to the module, marked
/// `step.micro_batch_of` (dialects/step/IR/ModelInstances.h): the train step builds each
/// micro-batch's forward from it. Does nothing where it is not needed or not possible (no dim
/// B, K = 1, K not dividing B: the train stage then reports what fails). `overrides` are the
/// ones the module was loaded with.
mlir::LogicalResult addMicroBatchInstance(llvm::SourceMgr &sourceMgr, mlir::MLIRContext &context,
                                          const ModelOverrides &overrides, mlir::ModuleOp module,
                                          int64_t microBatches);

/// The single `step.model` of a module (micro-batch instances aside); reports an error and
/// returns null if there is not exactly one.
step::ModelOp getSingleModel(mlir::ModuleOp module);

/// The model's batch: the leading dim every input shares. Reports an error at the input that
/// differs (or at the model when it has no input).
mlir::FailureOr<int64_t> inputsBatch(step::ModelOp model);

/// Sets the batch dimension of every input of `model` to `batch` and re-infers every result
/// type downstream. Reports (located) errors where an op no longer fits.
mlir::LogicalResult applyBatchOverride(step::ModelOp model, int64_t batch);

/// Mixed precision as PyTorch's autocast does it (Autocast.cpp): matmuls and convolutions in
/// bf16, precision-sensitive ops in f32, the rest promoted; parameters, inputs and the loss
/// keep their declared f32. Reports (located) errors where an op no longer fits.
mlir::LogicalResult applyAutocastBf16(step::ModelOp model);

}  // namespace stepc

#endif  // STEPC_COMPILER_MODEL_MODELLOADER_H
