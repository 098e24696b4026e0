//===- InterpreterProgram.h - the reference interpreter as a StepProgram -*- C++ -*-===//
//
// Runs a module's @train_step / @eval_loss (described by --step-describe-program) in the
// reference interpreter behind the same rt::StepProgram interface the compiled step has. The
// training executable's host side (init, data, checkpoints, metrics: runtime/) can then drive
// either one, so compiled training is compared with the oracle on identical inputs:
// `stepc interpret MODEL -- train --steps 3 --metrics m.jsonl` against `NAME train --steps 3
// --metrics m.jsonl`. Buffers are f32 (as in the executable); arithmetic is float64 or
// rounded per op (interp::Precision).
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_REFERENCE_INTERPRETERPROGRAM_H
#define STEPC_COMPILER_REFERENCE_INTERPRETERPROGRAM_H

#include "compiler/Interpreter/Interpreter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "runtime/formats/ProgramDescription.h"
#include "runtime/harness/StepProgram.h"

namespace stepc::ref {

class InterpreterProgram : public rt::StepProgram {
 public:
  /// `module` holds @train_step, @eval_loss and the `step.program` attribute.
  static mlir::FailureOr<std::unique_ptr<InterpreterProgram>> create(mlir::ModuleOp module,
                                                                     interp::Options options);

  const rt::ProgramInfo &info() const override { return description_.info; }
  rt::Status run(const rt::StepBuffers &buffers, int64_t step, rt::StepMetrics &metrics) override;
  bool canEvaluate() const override { return true; }
  const std::vector<std::vector<float>> *lastGradients() const override {
    return grads_.empty() ? nullptr : &grads_;
  }
  rt::Status evaluate(const rt::StepBuffers &buffers, int64_t step, double &loss) override;
  /// The interpreter runs on the CPU; --device and `info` report the GPU as a CPU-only
  /// executable does (runtime/hal/Device.h).
  rt::Status selectDevice(const std::string &device) override;
  std::string describeGpu() const override;

 private:
  InterpreterProgram(rt::ProgramDescription d, mlir::func::FuncOp train, mlir::func::FuncOp eval,
                     interp::Options options)
      : description_(std::move(d)), train_(train), eval_(eval), interpreter_(options) {}
  rt::Status call(mlir::func::FuncOp fn, const rt::EntryDescription &entry,
                  const rt::StepBuffers &buffers, int64_t step,
                  std::vector<interp::Tensor> &results);

  rt::ProgramDescription description_;
  std::vector<std::vector<float>> grads_;  // the last step's gradients (--export-grads)
  mlir::func::FuncOp train_, eval_;
  interp::Interpreter interpreter_;
};

}  // namespace stepc::ref

#endif  // STEPC_COMPILER_REFERENCE_INTERPRETERPROGRAM_H
