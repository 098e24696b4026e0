//===- Patterns.h - step → linalg rewrite patterns, by op family -*- C++ -*-===//
#ifndef STEPC_COMPILER_CONVERSION_STEPTOLINALG_PATTERNS_H
#define STEPC_COMPILER_CONVERSION_STEPTOLINALG_PATTERNS_H

#include "mlir/IR/PatternMatch.h"

namespace stepc::lowering {

/// Unary, binary (broadcasting), compare, select, cast and constant.
void populateElementwisePatterns(mlir::RewritePatternSet &patterns);
/// sum, mean, reduce_max.
void populateReductionPatterns(mlir::RewritePatternSet &patterns);
/// matmul, batch_matmul, embedding.
void populateContractionPatterns(mlir::RewritePatternSet &patterns);
/// reshape, transpose, broadcast, slice, pad, concat, split, iota.
void populateShapePatterns(mlir::RewritePatternSet &patterns);
/// layer_norm, rms_norm (f32, f64).
void populateNormPatterns(mlir::RewritePatternSet &patterns);
/// conv1d, conv1d_grad_input, conv1d_grad_weight (linalg.generic over the definition).
void populateConvolutionPatterns(mlir::RewritePatternSet &patterns);
/// The discardable attribute by which --step-choose-conv-algorithm asks for a convolution by
/// Winograd's F(m, K): its value is m, the outputs per tile.
inline constexpr llvm::StringLiteral kWinogradTileAttr = "step.winograd_tile";
/// How many batch chunks a marked convolution's tiles are computed in (absent: 1); set by
/// --step-choose-conv-algorithm so that the transformed tiles and the α GEMM products, arena
/// temporaries, take 1/chunks of the space while each chunk's GEMMs keep enough rows.
inline constexpr llvm::StringLiteral kWinogradChunksAttr = "step.winograd_chunks";
/// Tests only: G's last coefficient moved by 1% (step-choose-conv-algorithm{test-only-perturb}).
inline constexpr llvm::StringLiteral kWinogradPerturbAttr = "step.winograd_perturb";
/// conv1d and its gradients marked with kWinogradTileAttr: F(m, K) transforms around α GEMMs
/// (WinogradPatterns.cpp); preferred over populateConvolutionPatterns' lowerings.
void populateWinogradPatterns(mlir::RewritePatternSet &patterns);
/// gather_rows and top_k (linalg.generic); route_tokens and route_experts as loops over the
/// choices or tokens (scf.for on tensors), or with `parallelRouting` in parallel kernels
/// (populateParallelRoutingPatterns): a GPU runs such a loop in one thread.
void populateRoutingPatterns(mlir::RewritePatternSet &patterns, bool parallelRouting);
/// route_tokens and route_experts without a chain of dependent steps: cumsums, searches and
/// generics (ParallelRoutingPatterns.cpp), the same numbers as the loops.
void populateParallelRoutingPatterns(mlir::RewritePatternSet &patterns);
/// cumsum, embedding_grad (scf.for loops on tensors).
void populateScanPatterns(mlir::RewritePatternSet &patterns);
/// Lowers every step.repeat inside a func.func under `root` to an scf.for over a clone of its
/// body (its step ops still to lower), innermost first.
void lowerRepeatsToLoops(mlir::Operation *root);
/// softmax, log_softmax, cross_entropy (f32, f64).
void populateSoftmaxPatterns(mlir::RewritePatternSet &patterns);
/// step.dropout, step.jitter: Philox masks and factors drawn as the interpreter draws them.
void populateRandomPatterns(mlir::RewritePatternSet &patterns);
/// bf16/f16 norms, softmax and cross-entropy: computed in f32 between casts.
void populateLowPrecisionPatterns(mlir::RewritePatternSet &patterns);
/// The attribute naming a collective's marked linalg.copy ("all_reduce_sum").
inline constexpr llvm::StringLiteral kCollectiveAttr = "step.collective";
/// step.all_reduce and step.all_gather: a linalg.copy marked with kCollectiveAttr;
/// step.rank_shard: a slice from the rank's first row (a call `stepc_rank`).
void populateCollectivePatterns(mlir::RewritePatternSet &patterns);

}  // namespace stepc::lowering

#endif  // STEPC_COMPILER_CONVERSION_STEPTOLINALG_PATTERNS_H
