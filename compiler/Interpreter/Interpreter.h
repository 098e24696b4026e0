//===- Interpreter.h - the reference interpreter of `step` ------*- C++ -*-===//
//
// The oracle every later stage is compared against: executes `step` ops one at a time on
// row-major tensors held in float64, simply and obviously correctly, not fast. With
// Precision::Declared every op result is rounded to its declared element type (f32, bf16, f16;
// integers stay exact) so a compiled f32 step can be compared op for op.
//
// It runs `func.func` functions (the `train` stage's @train_step, test functions) whose bodies
// hold step ops, func.call and func.return, and the forward graph of a `step.model`.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_INTERPRETER_INTERPRETER_H
#define STEPC_COMPILER_INTERPRETER_INTERPRETER_H

#include <map>
#include <string>
#include <vector>

#include "dialects/step/IR/StepDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace stepc::interp {

/// A static-shaped tensor: its type (shape and element type) and row-major values in float64.
/// Integer and i1 elements are stored exactly (i1 as 0 or 1).
struct Tensor {
  mlir::RankedTensorType type;
  std::vector<double> data;

  static Tensor zeros(mlir::RankedTensorType type);
  static Tensor filled(mlir::RankedTensorType type, double value);
  int64_t numElements() const { return static_cast<int64_t>(data.size()); }
  llvm::ArrayRef<int64_t> shape() const { return type.getShape(); }
};

enum class Precision {
  F64,       // every op computes and stores in float64
  Declared,  // every op result is rounded to its element type (f32, bf16, f16)
};

struct Options {
  Precision precision = Precision::F64;
};

/// Runs functions and models. Errors (an out-of-range id, an unsupported op) are emitted at the
/// op's location and returned as failure.
class Interpreter {
 public:
  explicit Interpreter(Options options = {}) : options_(options) {}

  /// Runs `fn` on `args` (one per argument, types must match) and returns its results.
  mlir::FailureOr<std::vector<Tensor>> run(mlir::func::FuncOp fn, llvm::ArrayRef<Tensor> args);

  /// Evaluates the forward graph of `model`: `params` by full name (stored shape: stacked on a
  /// leading axis per enclosing repeat), `inputs` by input name (one tensor per result of the
  /// step.input). Returns the loss.
  mlir::FailureOr<Tensor> runModelLoss(step::ModelOp model,
                                       const std::map<std::string, Tensor> &params,
                                       const std::map<std::string, std::vector<Tensor>> &inputs);

 private:
  Options options_;
};

}  // namespace stepc::interp

#endif  // STEPC_COMPILER_INTERPRETER_INTERPRETER_H
