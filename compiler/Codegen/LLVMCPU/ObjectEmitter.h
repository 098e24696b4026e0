//===- ObjectEmitter.h - the `llvm` stage to x86 object code ----*- C++ -*-===//
#ifndef STEPC_COMPILER_CODEGEN_OBJECTEMITTER_H
#define STEPC_COMPILER_CODEGEN_OBJECTEMITTER_H

#include <string>
#include <vector>

#include "mlir/IR/BuiltinOps.h"

namespace stepc::codegen {

struct ObjectOptions {
  /// The CPU to generate code for: "native" (this machine's CPU and features) or an LLVM CPU
  /// name such as "x86-64-v3".
  std::string cpu = "native";
  /// LLVM's optimisation level, 0-3.
  int optLevel = 3;
  /// Threads for the backend (0: one per CPU): the optimised module is split into as many
  /// object files, compiled at once.
  int threads = 0;
};

/// Translates `module` (at the `llvm` stage) to LLVM IR, optimises it and writes object code:
/// `path`, and with more than one backend thread `path`.1, `path`.2, ... too; `objects`
/// receives the files written (link them all).
mlir::LogicalResult emitObject(mlir::ModuleOp module, const std::string &path,
                               const ObjectOptions &options, std::vector<std::string> &objects);

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_OBJECTEMITTER_H
