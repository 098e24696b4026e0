//===- InterpretedTrainer.h - train a model in the reference interpreter -*- C++ -*-===//
//
// Runs the `train` stage's @train_step step after step in the reference interpreter: parameters
// from the model's initialisers, optimizer state from zeros, each step's batch from the built-in
// data, wired to the function's arguments by their `step.role` / `step.name` attributes. It is
// the oracle compiled training is compared against, and `stepc run` uses it.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_REFERENCE_INTERPRETEDTRAINER_H
#define STEPC_COMPILER_REFERENCE_INTERPRETEDTRAINER_H

#include <map>
#include <string>
#include <vector>

#include "compiler/Interpreter/Interpreter.h"
#include "mlir/IR/BuiltinOps.h"

namespace stepc::ref {

class InterpretedTrainer {
 public:
  /// `module` must be at the `train` stage (a step.model and func @train_step).
  static mlir::FailureOr<InterpretedTrainer> create(mlir::ModuleOp module, uint64_t seed,
                                                    interp::Options options = {});

  /// Runs one step on the built-in batch for the current step; returns the metrics by name.
  mlir::FailureOr<std::map<std::string, double>> step();
  /// Runs one step on the given inputs (by input name, one tensor per step.input result).
  mlir::FailureOr<std::map<std::string, double>> step(
      const std::map<std::string, std::vector<interp::Tensor>> &inputs);

  std::map<std::string, interp::Tensor> &params() { return params_; }
  /// Optimizer state by slot, then parameter name.
  std::map<std::string, std::map<std::string, interp::Tensor>> &state() { return state_; }
  uint64_t stepCount() const { return step_; }

 private:
  InterpretedTrainer(mlir::func::FuncOp fn, step::ModelOp model, uint64_t seed,
                     interp::Options options)
      : fn_(fn), model_(model), seed_(seed), interpreter_(options) {}

  mlir::func::FuncOp fn_;
  step::ModelOp model_;
  uint64_t seed_;
  uint64_t step_ = 0;
  interp::Interpreter interpreter_;
  std::map<std::string, interp::Tensor> params_;
  std::map<std::string, std::map<std::string, interp::Tensor>> state_;
};

}  // namespace stepc::ref

#endif  // STEPC_COMPILER_REFERENCE_INTERPRETEDTRAINER_H
