//===- Passes.h - the GPU emulator's pass (a testing target) -*- C++ -*-===//
//
// `--target=cuda-emulated`: the CUDA mapping run on the CPU, block after block, each block's
// threads in lock-step between barriers. Nothing but the emulated pipeline depends on it.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_EMULATION_PASSES_H
#define STEPC_COMPILER_CODEGEN_EMULATION_PASSES_H

#include <memory>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace stepc::codegen {

// Declared in Passes.td: create<Name>() and registerStepCodegenEmulationPasses().
#define GEN_PASS_DECL
#include "compiler/Codegen/Emulation/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "compiler/Codegen/Emulation/Passes.h.inc"

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_EMULATION_PASSES_H
