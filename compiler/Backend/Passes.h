//===- Passes.h - the CPU backend: from @train_step to an object file -*- C++ -*-===//
//
// The stages after `train` (Driver/Phases.h), each a pass pipeline whose text is below, so
// every stage can be reproduced with stepc-opt:
//
//   linalg    --step-describe-program, then --step-lower-to-linalg: @train_step and @eval_loss
//             on linalg/tensor/arith/math/scf
//   kernels   elementwise fusion: each linalg op left is one kernel
//   buffers   params and state tied to their arguments (updated in place), one-shot
//             bufferization over function boundaries, results to out-params, deallocation;
//             each kernel outlined into its own function (the step functions are the host
//             plan) and tiled to an scf.forall; the static memory plan
//   llvm      tiled kernels as ranges for the runtime's threads, loops, then the LLVM dialect
//             with bare-pointer calls; --step-pack-entry-points adds the packed entry points
//             and the embedded program description
//
// ObjectEmitter.h turns the `llvm` stage into x86 object code; Linker.h links it with the
// runtime.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_BACKEND_PASSES_H
#define STEPC_COMPILER_BACKEND_PASSES_H

#include <memory>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/Pass.h"

namespace stepc::backend {

// The backend's own passes, declared in Passes.td: create<Name>() and
// registerStepBackendPasses().
#define GEN_PASS_DECL
#include "compiler/Backend/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "compiler/Backend/Passes.h.inc"

/// Registers the backend's passes and the upstream passes its pipelines name.
void registerBackendPasses();
/// Adds the dialects and interface models (bufferization, deallocation, LLVM translation) the
/// backend's pipelines need.
void registerBackendDialects(mlir::DialectRegistry &registry);

/// The pass pipelines (textual, as `stepc-opt --pass-pipeline=...` takes them) that advance a
/// module from the previous stage to `linalg`, `kernels`, `buffers` and `llvm`.
llvm::StringRef linalgPipeline();
llvm::StringRef kernelsPipeline();
llvm::StringRef buffersPipeline();
llvm::StringRef llvmPipeline();

/// Parses and runs `pipeline` (anchored on builtin.module) on `module`.
mlir::LogicalResult runPipeline(mlir::ModuleOp module, llvm::StringRef pipeline);

}  // namespace stepc::backend

#endif  // STEPC_COMPILER_BACKEND_PASSES_H
