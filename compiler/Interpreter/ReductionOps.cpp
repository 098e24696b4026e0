//===- ReductionOps.cpp - reduction and scan kernels of the interpreter --===//
//
// sum, mean and reduce_max over a set of axes, and cumsum along one axis. The mean of an
// integer tensor truncates toward zero, like integer division.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <limits>

#include "compiler/Interpreter/Kernels.h"
#include "compiler/Interpreter/TensorUtils.h"
#include "dialects/step/IR/ShapeRules.h"
#include "llvm/ADT/TypeSwitch.h"

namespace stepc::interp {
namespace {

enum class Reduction { Sum, Mean, Max };

// For every input element, the linear index of the output element it reduces into.
std::vector<int64_t> reductionTargets(llvm::ArrayRef<int64_t> shape,
                                      llvm::ArrayRef<bool> reduced) {
  int64_t rank = static_cast<int64_t>(shape.size());
  // Output strides per input dimension: 0 on reduced axes (keepdim or not, the output index
  // is the same).
  llvm::SmallVector<int64_t> outStrides(rank, 0);
  for (int64_t d = rank - 1, stride = 1; d >= 0; --d) {
    if (reduced[d]) continue;
    outStrides[d] = stride;
    stride *= shape[d];
  }
  std::vector<int64_t> targets(elementCount(shape));
  llvm::SmallVector<int64_t> counter(rank, 0);
  int64_t target = 0;
  for (int64_t &t : targets) {
    t = target;
    for (int64_t d = rank - 1; d >= 0; --d) {
      target += outStrides[d];
      if (++counter[d] < shape[d]) break;
      target -= outStrides[d] * shape[d];
      counter[d] = 0;
    }
  }
  return targets;
}

void reduce(Reduction kind, mlir::ArrayAttr axes, const Tensor &in, Tensor &out) {
  int64_t rank = static_cast<int64_t>(in.shape().size());
  llvm::SmallVector<bool> reduced(rank, false);
  int64_t reducedCount = 1;
  for (int64_t axis : step::toI64Vector(axes)) {
    int64_t a = positiveAxis(axis, rank);
    reduced[a] = true;
    reducedCount *= in.shape()[a];
  }
  std::vector<int64_t> targets = reductionTargets(in.shape(), reduced);
  double init = kind == Reduction::Max ? -std::numeric_limits<double>::infinity() : 0.0;
  std::fill(out.data.begin(), out.data.end(), init);
  for (int64_t i = 0; i < in.numElements(); ++i) {
    double &acc = out.data[targets[i]], v = in.data[i];
    if (kind != Reduction::Max) acc += v;
    else if (std::isnan(v) || v > acc) acc = std::isnan(acc) ? acc : v;
  }
  if (kind != Reduction::Mean) return;
  bool integer = !isFloatElement(out.type.getElementType());
  for (double &v : out.data) v = integer ? std::trunc(v / reducedCount) : v / reducedCount;
}

void cumsum(step::CumsumOp op, const Tensor &in, Tensor &out) {
  AxisView view = axisView(in.shape(), positiveAxis(static_cast<int64_t>(op.getAxis()),
                                                    in.shape().size()));
  bool reverse = op.getReverse();
  for (int64_t o = 0; o < view.outer; ++o)
    for (int64_t i = 0; i < view.inner; ++i) {
      double running = 0.0;
      for (int64_t step = 0; step < view.size; ++step) {
        int64_t k = reverse ? view.size - 1 - step : step;
        running += in.data[view.at(o, k, i)];
        out.data[view.at(o, k, i)] = running;
      }
    }
}

}  // namespace

KernelResult runReductionOp(mlir::Operation *op, Operands in, Results out) {
  return llvm::TypeSwitch<mlir::Operation *, KernelResult>(op)
      .Case<step::SumOp>([&](step::SumOp sum) {
        reduce(Reduction::Sum, sum.getAxes(), *in[0], out[0]);
        return mlir::success();
      })
      .Case<step::MeanOp>([&](step::MeanOp mean) {
        reduce(Reduction::Mean, mean.getAxes(), *in[0], out[0]);
        return mlir::success();
      })
      .Case<step::ReduceMaxOp>([&](step::ReduceMaxOp max) {
        reduce(Reduction::Max, max.getAxes(), *in[0], out[0]);
        return mlir::success();
      })
      .Case<step::CumsumOp>([&](step::CumsumOp scan) {
        cumsum(scan, *in[0], out[0]);
        return mlir::success();
      })
      .Default([](mlir::Operation *) { return std::nullopt; });
}

}  // namespace stepc::interp
