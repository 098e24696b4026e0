//===- ConvolutionOps.cpp - conv1d and its gradients ---------------------===//
//
// All three ops are written from one definition (channels last, stride 1):
//   y[b, t, o] = Σ_k Σ_c x[b, t + k - pad, g(o) * Cin/groups + c] · w[k, c, o]
// with pad = K - 1 for "causal" and 0 for "valid", x zero outside [0, S), and g(o) the group
// of output channel o. The gradients scatter the same products back: one loop nest, three
// choices of which factor is the unknown, so they cannot disagree about indexing.
//
//===----------------------------------------------------------------------===//
#include "compiler/Interpreter/Kernels.h"
#include "llvm/ADT/TypeSwitch.h"

namespace stepc::interp {
namespace {

struct ConvDims {
  int64_t batch, seq, outSeq, cin, cout, kernel, groups, pad;
  int64_t cinPerGroup() const { return cin / groups; }
  int64_t coutPerGroup() const { return cout / groups; }
};

ConvDims convDims(int64_t batch, int64_t seq, int64_t cin, int64_t cout, int64_t kernel,
                  int64_t groups, llvm::StringRef padding) {
  bool causal = padding == "causal";
  return {batch, seq, causal ? seq : seq - kernel + 1, cin, cout, kernel, groups,
          causal ? kernel - 1 : 0};
}

// Calls visit(xIndex, wIndex, yIndex) for every product term of the definition.
template <typename Visit>
void forEachTerm(const ConvDims &d, Visit visit) {
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t t = 0; t < d.outSeq; ++t)
      for (int64_t o = 0; o < d.cout; ++o) {
        int64_t firstChannel = (o / d.coutPerGroup()) * d.cinPerGroup();
        for (int64_t k = 0; k < d.kernel; ++k) {
          int64_t s = t + k - d.pad;
          if (s < 0 || s >= d.seq) continue;  // zero padding
          for (int64_t c = 0; c < d.cinPerGroup(); ++c)
            visit((b * d.seq + s) * d.cin + firstChannel + c,
                  (k * d.cinPerGroup() + c) * d.cout + o, (b * d.outSeq + t) * d.cout + o);
        }
      }
}

// The indexing above needs whole groups; conv1d_grad_input's shape rule does not check that
// Cout divides into them, so the kernel does rather than index out of bounds.
mlir::LogicalResult checkGroups(mlir::Operation *op, const ConvDims &d) {
  if (d.cin % d.groups == 0 && d.cout % d.groups == 0) return mlir::success();
  return mlir::emitError(op->getLoc()) << "groups = " << d.groups << " must divide Cin = "
                                       << d.cin << " and Cout = " << d.cout;
}

}  // namespace

KernelResult runConvolutionOp(mlir::Operation *op, Operands in, Results out) {
  return llvm::TypeSwitch<mlir::Operation *, KernelResult>(op)
      .Case<step::Conv1dOp>([&](step::Conv1dOp conv) {
        const Tensor &x = *in[0], &w = *in[1];
        ConvDims d = convDims(x.shape()[0], x.shape()[1], x.shape()[2], w.shape()[2],
                              w.shape()[0], conv.getGroups(), conv.getPadding());
        if (failed(checkGroups(op, d))) return mlir::failure();
        Tensor &y = out[0];
        forEachTerm(d, [&](int64_t xi, int64_t wi, int64_t yi) {
          y.data[yi] += x.data[xi] * w.data[wi];
        });
        return mlir::success();
      })
      .Case<step::Conv1dGradInputOp>([&](step::Conv1dGradInputOp grad) {
        const Tensor &g = *in[0], &w = *in[1];
        Tensor &dx = out[0];
        ConvDims d = convDims(dx.shape()[0], dx.shape()[1], dx.shape()[2], w.shape()[2],
                              w.shape()[0], grad.getGroups(), grad.getPadding());
        if (failed(checkGroups(op, d))) return mlir::failure();
        forEachTerm(d, [&](int64_t xi, int64_t wi, int64_t yi) {
          dx.data[xi] += g.data[yi] * w.data[wi];
        });
        return mlir::success();
      })
      .Case<step::Conv1dGradWeightOp>([&](step::Conv1dGradWeightOp grad) {
        const Tensor &x = *in[0], &g = *in[1];
        Tensor &dw = out[0];
        ConvDims d = convDims(x.shape()[0], x.shape()[1], x.shape()[2], g.shape()[2],
                              grad.getKernel(), grad.getGroups(), grad.getPadding());
        if (failed(checkGroups(op, d))) return mlir::failure();
        forEachTerm(d, [&](int64_t xi, int64_t wi, int64_t yi) {
          dw.data[wi] += x.data[xi] * g.data[yi];
        });
        return mlir::success();
      })
      .Default([](mlir::Operation *) { return std::nullopt; });
}

}  // namespace stepc::interp
