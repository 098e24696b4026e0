//===- RunCommand.h - `stepc run`: the model in the reference interpreter -*- C++ -*-===//
#ifndef STEPC_COMPILER_DRIVER_RUNCOMMAND_H
#define STEPC_COMPILER_DRIVER_RUNCOMMAND_H

#include <cstdint>
#include <string>

#include "compiler/Interpreter/Interpreter.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/BuiltinOps.h"

namespace stepc {

struct RunOptions {
  int64_t steps = 10;  // 0: evaluate the loss once, no training
  uint64_t seed = 0;
  interp::Precision precision = interp::Precision::F64;
  std::string initFrom;    // safetensors file of parameters by name (else the initialisers)
  std::string saveParams;  // write the parameters after the run as safetensors
  std::string data;        // token file (raw bytes or llm.c shard) for token_stream inputs
};

/// `module` is at the `train` stage. Trains `steps` steps in the interpreter, printing one line
/// of metrics per step (`step 0 loss 5.545177 grad_norm ... lr ...`), or with steps == 0 prints
/// the loss at the starting parameters. Parameters come from the initialisers or `initFrom`;
/// token inputs from the built-in corpus or `data`. Returns 0 or 1 (errors already reported).
int runInInterpreter(mlir::ModuleOp module, const RunOptions &options, llvm::raw_ostream &os);

}  // namespace stepc

#endif  // STEPC_COMPILER_DRIVER_RUNCOMMAND_H
