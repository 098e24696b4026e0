//===- RuntimeCallWrites.h - which operands a runtime call writes --------*- C++ -*-===//
//
// The host plan calls the runtime by name (runtime/hal/Gemm.h, Collectives.h, Offload.h);
// passes that reason about memory (--step-offload-buffers, the emulator's race check) need to
// know which operands such a call may write.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_COMMON_RUNTIMECALLWRITES_H
#define STEPC_COMPILER_CODEGEN_COMMON_RUNTIMECALLWRITES_H

#include <optional>

#include "llvm/ADT/StringRef.h"

namespace stepc::codegen {

/// Whether a call of the runtime function `callee` may write its operand `index`: a GEMM its
/// third (C), a collective its second (the result), an offload fetch its slot, an offload
/// write-back nothing. None for a function that is not one of these (a kernel, or a runtime
/// function the caller must treat conservatively).
inline std::optional<bool> runtimeCallWrites(llvm::StringRef callee, unsigned index) {
  if (callee.starts_with("stepc_matmul") || callee.starts_with("stepc_batch_matmul"))
    return index == 2;
  if (callee.starts_with("stepc_all_reduce") || callee.starts_with("stepc_all_gather"))
    return index == 1;
  if (callee.starts_with("stepc_offload_fetch")) return index == 2;
  if (callee.starts_with("stepc_offload_store")) return false;
  return std::nullopt;
}

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_COMMON_RUNTIMECALLWRITES_H
