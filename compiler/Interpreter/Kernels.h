//===- Kernels.h - the op kernels of the interpreter, by family -*- C++ -*-===//
//
// Each family runs the tensor ops of one kind on float64 data. The evaluator (Interpreter.cpp)
// hands a kernel the operands and results already sized to the op's result types; a kernel
// fills the results, or emits an error at the op and fails. Every function returns
// std::nullopt for an op outside its family, so the evaluator asks each family in turn.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_INTERPRETER_KERNELS_H
#define STEPC_COMPILER_INTERPRETER_KERNELS_H

#include <optional>

#include "compiler/Interpreter/Interpreter.h"

namespace stepc::interp {

using Operands = llvm::ArrayRef<const Tensor *>;
using Results = llvm::MutableArrayRef<Tensor>;
using KernelResult = std::optional<mlir::LogicalResult>;

/// Unary and binary arithmetic, compare, select, cast, dropout.
KernelResult runElementwiseOp(mlir::Operation *op, Operands in, Results out);
/// sum, mean, reduce_max, cumsum.
KernelResult runReductionOp(mlir::Operation *op, Operands in, Results out);
/// softmax, log_softmax, layer_norm, rms_norm, cross_entropy.
KernelResult runNormalizationOp(mlir::Operation *op, Operands in, Results out);
/// matmul, batch_matmul, embedding, embedding_grad.
KernelResult runContractionOp(mlir::Operation *op, Operands in, Results out);
/// conv1d and its input and weight gradients.
KernelResult runConvolutionOp(mlir::Operation *op, Operands in, Results out);
/// top_k, route_tokens, route_experts, gather_rows.
KernelResult runRoutingOp(mlir::Operation *op, Operands in, Results out);
/// reshape, transpose, broadcast, slice, split, concat, pad, constant, iota.
KernelResult runShapeOp(mlir::Operation *op, Operands in, Results out);

}  // namespace stepc::interp

#endif  // STEPC_COMPILER_INTERPRETER_KERNELS_H
