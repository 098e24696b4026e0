//===- Passes.h - the codegen passes every target shares -*- C++ -*-===//
//
// From the `linalg` stage to `buffers`, for every target: elementwise fusion, in-place updates,
// library calls and their epilogues, strided copies, fill sinking, kernel outlining and tiling,
// the static memory plan, and the step program's description. The pipelines that run them are
// in compiler/Codegen/Pipelines.h.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_COMMON_PASSES_H
#define STEPC_COMPILER_CODEGEN_COMMON_PASSES_H

#include <memory>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace stepc::codegen {

// Declared in Passes.td: create<Name>() and registerStepCodegenCommonPasses().
#define GEN_PASS_DECL
#include "compiler/Codegen/Common/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "compiler/Codegen/Common/Passes.h.inc"

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_COMMON_PASSES_H
