//===- Autodiff.h - reverse-mode differentiation of step IR -----*- C++ -*-===//
//
// Reverse mode on the step dialect. Each op contributes its vector-Jacobian product through
// DifferentiableOpInterface; fan-out accumulates adjoints; broadcasting is summed back in the
// VJPs; integer values carry no gradient; only values both influenced by `wrt` and influencing a
// seed are differentiated (gradients nobody needs are never built).
//
// A step.repeat stays one loop: its forward is rewritten to also stack each iteration's carried
// input, and its backward is one reverse repeat over those saved inputs and the stacked `over`
// values, recomputing the layer's body from its input and applying the body's VJP (as JAX
// differentiates lax.scan with a per-layer checkpoint). The IR does not grow with depth.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_AUTODIFF_AUTODIFF_H
#define STEPC_COMPILER_AUTODIFF_AUTODIFF_H

#include <utility>

#include <string>

#include "mlir/IR/Builders.h"

namespace stepc::ad {

/// Emits the gradients of the seeded values (value, adjoint) with respect to `wrt`, for
/// `forward` (ops in program order in one block, followed by the builder's insertion point).
/// Returns one gradient per `wrt` value, zeros where it influences no seed. Fails with a
/// located error when a needed gradient passes through an op without a gradient rule.
/// Differentiating a repeat replaces it (to save its per-layer inputs): values the caller still
/// needs afterwards (e.g. the loss) go in `tracked`, which is updated to the replacements.
/// With `rebuildErrors`, the backward of each reversible repeat also measures its rebuilt
/// inputs against the forward's (the forward's are then kept until the backward ends) and
/// appends the measures, f64 scalars max|rebuilt - x| / max|x| (0: bit for bit), to it; a
/// nested repeat's measures are carried out of the layers holding it as their maximum.
mlir::FailureOr<llvm::SmallVector<mlir::Value>> emitGradients(
    mlir::OpBuilder &builder, llvm::ArrayRef<mlir::Operation *> forward,
    llvm::ArrayRef<std::pair<mlir::Value, mlir::Value>> seeds, llvm::ArrayRef<mlir::Value> wrt,
    llvm::MutableArrayRef<mlir::Value> tracked = {},
    llvm::SmallVectorImpl<mlir::Value> *rebuildErrors = nullptr);

/// The GEMMs (matmuls and convolutions) of `repeat`'s layer whose outputs its backward may keep
/// instead of recomputing, most FLOPs per output element first: the order in which they are
/// kept (all of them by default, the first `step.saved_gemms` of them under --memory-budget).
struct GemmCandidate {
  mlir::Operation *op;
  double flopsPerElement;
  double bytesPerLayer;  // of its output
};
llvm::SmallVector<GemmCandidate> savedGemmCandidates(mlir::Operation *repeat);

/// The FLOPs of one step.matmul or step.conv1d (2 x the reduction length per output element).
double gemmFlops(mlir::Operation *gemm);

/// Erases step ops whose results are unused, innermost first (prunes unneeded gradient code).
void eraseDeadStepOps(mlir::Region &region);

/// Tests only (`stepc --test-only-flip-vjp=step.gelu`): negates the gradient every op of that
/// name passes to its operands, a deliberately broken VJP the parity tests must catch. Empty:
/// off.
void setFlippedVjpForTesting(std::string opName);

}  // namespace stepc::ad

#endif  // STEPC_COMPILER_AUTODIFF_AUTODIFF_H
