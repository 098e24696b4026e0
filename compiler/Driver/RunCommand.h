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

/// `module` is at the `train` stage with @eval_loss and the program description
/// (codegen::describeProgram). Runs the training executable's own loop (runtime/harness:
/// initialisation, BatchSource's batches, --init-from / --save-params) with the interpreter's
/// StepProgram as the step, printing one line of metrics per step (`step 0 loss 5.545177
/// grad_norm ... lr ...`), or with steps == 0 the loss of the starting parameters on step 0's
/// batch (the loop's `eval` over one batch). Each step computes in the interpreter's precision;
/// between steps the loop holds f32 parameters and state, as an executable does. Returns 0 or
/// 1 (errors already reported).
int runInInterpreter(mlir::ModuleOp module, const RunOptions &options, llvm::raw_ostream &os);

}  // namespace stepc

#endif  // STEPC_COMPILER_DRIVER_RUNCOMMAND_H
