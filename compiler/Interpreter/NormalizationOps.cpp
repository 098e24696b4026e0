//===- NormalizationOps.cpp - softmax, norms and cross-entropy kernels ---===//
//
// Softmax-style ops subtract the maximum before exponentiating, as the compiled kernels do, so
// large logits do not overflow. Variances are the biased (population) variance.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <limits>

#include "compiler/Interpreter/Kernels.h"
#include "compiler/Interpreter/TensorUtils.h"
#include "llvm/ADT/TypeSwitch.h"

namespace stepc::interp {
namespace {

// max and log Σ exp(x - max) of the `size` elements x[base + k * stride].
std::pair<double, double> maxAndLogSumExp(const double *x, int64_t size, int64_t stride) {
  double max = -std::numeric_limits<double>::infinity();
  for (int64_t k = 0; k < size; ++k) max = std::max(max, x[k * stride]);
  double sum = 0.0;
  for (int64_t k = 0; k < size; ++k) sum += std::exp(x[k * stride] - max);
  return {max, std::log(sum)};
}

void softmax(int64_t axis, bool logarithm, const Tensor &in, Tensor &out) {
  AxisView view = axisView(in.shape(), positiveAxis(axis, in.shape().size()));
  for (int64_t o = 0; o < view.outer; ++o)
    for (int64_t i = 0; i < view.inner; ++i) {
      const double *x = &in.data[view.at(o, 0, i)];
      auto [max, logSum] = maxAndLogSumExp(x, view.size, view.inner);
      for (int64_t k = 0; k < view.size; ++k) {
        double shifted = x[k * view.inner] - max - logSum;
        out.data[view.at(o, k, i)] = logarithm ? shifted : std::exp(shifted);
      }
    }
}

// Normalises each row of the last dimension: (x - mean) / sqrt(var + eps) * gamma + beta, or
// x / sqrt(mean(x²) + eps) * gamma without centring (RMS norm, beta null).
void normalizeRows(const Tensor &in, const Tensor &gamma, const Tensor *beta, double eps,
                   bool centre, Tensor &out) {
  int64_t c = in.shape().back(), rows = in.numElements() / c;
  for (int64_t r = 0; r < rows; ++r) {
    const double *x = &in.data[r * c];
    double mean = 0.0;
    if (centre) {
      for (int64_t k = 0; k < c; ++k) mean += x[k];
      mean /= c;
    }
    double meanSquare = 0.0;
    for (int64_t k = 0; k < c; ++k) meanSquare += (x[k] - mean) * (x[k] - mean);
    meanSquare /= c;
    double scale = 1.0 / std::sqrt(meanSquare + eps);
    for (int64_t k = 0; k < c; ++k)
      out.data[r * c + k] = (x[k] - mean) * scale * gamma.data[k] + (beta ? beta->data[k] : 0.0);
  }
}

mlir::LogicalResult crossEntropy(step::CrossEntropyOp op, const Tensor &logits,
                                 const Tensor &targets, Tensor &out) {
  int64_t classes = logits.shape().back(), positions = targets.numElements();
  double total = 0.0;
  for (int64_t p = 0; p < positions; ++p) {
    double target = targets.data[p];
    if (!(target >= 0 && target < classes))
      return mlir::emitError(op.getLoc())
             << "cross_entropy target " << target << " at position " << p
             << " is out of range for " << classes << " classes";
    const double *x = &logits.data[p * classes];
    auto [max, logSum] = maxAndLogSumExp(x, classes, 1);
    double loss = max + logSum - x[static_cast<int64_t>(target)];
    if (op.getReduction() == "none") out.data[p] = loss;
    total += loss;
  }
  if (op.getReduction() == "mean") out.data[0] = total / positions;
  if (op.getReduction() == "sum") out.data[0] = total;
  return mlir::success();
}

}  // namespace

KernelResult runNormalizationOp(mlir::Operation *op, Operands in, Results out) {
  return llvm::TypeSwitch<mlir::Operation *, KernelResult>(op)
      .Case<step::SoftmaxOp>([&](step::SoftmaxOp s) {
        softmax(static_cast<int64_t>(s.getAxis()), /*logarithm=*/false, *in[0], out[0]);
        return mlir::success();
      })
      .Case<step::LogSoftmaxOp>([&](step::LogSoftmaxOp s) {
        softmax(static_cast<int64_t>(s.getAxis()), /*logarithm=*/true, *in[0], out[0]);
        return mlir::success();
      })
      .Case<step::LayerNormOp>([&](step::LayerNormOp norm) {
        normalizeRows(*in[0], *in[1], in[2], norm.getEps().convertToDouble(), true, out[0]);
        return mlir::success();
      })
      .Case<step::RmsNormOp>([&](step::RmsNormOp norm) {
        normalizeRows(*in[0], *in[1], nullptr, norm.getEps().convertToDouble(), false, out[0]);
        return mlir::success();
      })
      .Case<step::CrossEntropyOp>(
          [&](step::CrossEntropyOp ce) { return crossEntropy(ce, *in[0], *in[1], out[0]); })
      .Default([](mlir::Operation *) { return std::nullopt; });
}

}  // namespace stepc::interp
