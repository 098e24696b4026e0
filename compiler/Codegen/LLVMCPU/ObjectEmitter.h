//===- ObjectEmitter.h - the `llvm` stage to x86 object code ----*- C++ -*-===//
#ifndef STEPC_COMPILER_CODEGEN_OBJECTEMITTER_H
#define STEPC_COMPILER_CODEGEN_OBJECTEMITTER_H

#include <string>

#include "mlir/IR/BuiltinOps.h"

namespace stepc::codegen {

struct ObjectOptions {
  /// The CPU to generate code for: "native" (this machine's CPU and features) or an LLVM CPU
  /// name such as "x86-64-v3".
  std::string cpu = "native";
  /// LLVM's optimisation level, 0-3.
  int optLevel = 3;
};

/// Translates `module` (at the `llvm` stage) to LLVM IR, optimises it and writes an object
/// file to `path`. With `llvmIr`, also returns the optimised LLVM IR text. `target` receives
/// the target it compiled for ("x86_64-pc-linux-gnu znver3").
mlir::LogicalResult emitObject(mlir::ModuleOp module, const std::string &path,
                               const ObjectOptions &options, std::string *llvmIr = nullptr,
                               std::string *target = nullptr);

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_OBJECTEMITTER_H
