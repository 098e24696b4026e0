//===- NextTokenForward.h - a language model's forward to its logits --*- C++ -*-===//
//
// What both generation programs start from (@sample_logits, the full window; @sample_step, one
// position at a time): the model's forward without dropout, cut at the logits its cross-entropy
// scores against the token input's next-token targets, as [B, T, V]. Only a language model has
// one: one token input [B, T] whose targets the cross-entropy scores, and a forward that does
// not read the targets.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_TRAINING_NEXTTOKENFORWARD_H
#define STEPC_COMPILER_TRAINING_NEXTTOKENFORWARD_H

#include <string>

#include "dialects/step/IR/StepDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace stepc::train {

struct NextTokenForward {
  mlir::func::FuncOp fn;  // @name(params..., tokens [B, T]) -> logits [B, T, V]
  int64_t batch = 0, seq = 0, vocab = 0;
};

/// Appends @name to `module`. A model that is not a next-token language model gets no function:
/// failure, with the reason in `whyNot`. A model op that the forward cannot clone fails too
/// (reported at the op; `whyNot` empty).
mlir::FailureOr<NextTokenForward> buildNextTokenForward(mlir::ModuleOp module,
                                                        llvm::StringRef name,
                                                        std::string &whyNot);

}  // namespace stepc::train

#endif  // STEPC_COMPILER_TRAINING_NEXTTOKENFORWARD_H
