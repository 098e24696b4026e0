//===- FuseElementwise.cpp - --step-fuse-elementwise ----------------------===//
//
// The `kernels` stage's fusion: an elementwise producer fuses into its consumer (elementwise
// op or reduction), so the pair is one kernel and the intermediate tensor never exists. It is
// upstream's elementwise fusion with a stricter rule than its default (single use), because
// two fusions upstream allows are losses here:
// - into a contraction that is a GEMM (an operand read through a broadcast): the result would
//   no longer be a GEMM the library can run, and the producer would be recomputed once per
//   output column;
// - through a broadcast (the consumer reads the producer with a non-permutation map): the
//   producer would be recomputed for every broadcast element.
// Two exceptions to single use. A producer used after its consumer as well fuses into the
// consumer as one kernel that writes both results (fusesWithItsOtherUses: AdamW's m and v
// updates into the parameter's). And a producer a few arith ops long whose every use is a
// fusible consumer in its block is first cloned once per use (cloneCheapProducers), when
// redoing it in each consumer reads no more memory than writing its result once and reading
// it back there, and keeps no buffer alive longer than the result's did (its inputs live on
// anyway, or are no larger than the result). A gradient's square feeds both the global norm and AGC's unit norms, AGC's
// clipped gradient feeds the optimizer's three updates: each was a parameter-sized buffer of
// its own, written once and read two or three times, for a multiply. A gather (rows read by
// index through tensor.extract: an MoE's combine, step.gather_rows) counts as cheap too: its
// cost is the rows it reads, which its result would be written and read back for anyway. The
// combine's gathered rows feed the gate-weighted sum and, in the backward, the gate's gradient;
// cloned, the forward's gather fuses into the weighted sum (one pass over the experts' rows)
// and the backward's into the gradient's dot, and the [T, k, D] copy is never written.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/FusionRules.h"
#include "compiler/Codegen/Common/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

// Whether `map` reads each element it reads of a tensor of `type` once, so that a producer
// fused through it computes nothing twice: a permutation of the loops, where some dims may be
// read at a fixed index (a slice: --step-unit-reductions reads a [T, 1, D] operand at 0,
// --step-unroll-reductions a [T, 2, D] one at 0 and at 1), which is no broadcast.
bool readsEachOnce(mlir::AffineMap map, mlir::Type type) {
  auto shape = llvm::cast<mlir::ShapedType>(type).getShape();
  llvm::SmallVector<bool> seen(map.getNumDims(), false);
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    if (auto dim = llvm::dyn_cast<mlir::AffineDimExpr>(expr)) {
      if (seen[dim.getPosition()]) return false;
      seen[dim.getPosition()] = true;
      continue;
    }
    auto constant = llvm::dyn_cast<mlir::AffineConstantExpr>(expr);
    if (!constant || constant.getValue() < 0 || constant.getValue() >= shape[i]) return false;
  }
  return llvm::all_of(seen, [](bool s) { return s; });
}

// The rule for one producer -> consumer edge, the producer's other uses aside.
bool fusibleEdge(mlir::OpOperand *operand) {
  mlir::Operation *producer = operand->get().getDefiningOp();
  auto consumer = llvm::dyn_cast<mlir::linalg::LinalgOp>(operand->getOwner());
  if (!producer || !consumer) return false;
  // A collective (a marked copy, StepToLinalg's CollectivePatterns.cpp) is a call, not a kernel.
  if (producer->hasAttr("step.collective") || consumer->hasAttr("step.collective")) return false;
  // A contraction a library runs as a GEMM reads some operand through a broadcast (A misses
  // the n loop, B the m loop). One whose every input spans all its loops is a reduction of an
  // elementwise product (a dot per row: an MoE gate's gradient), a kernel either way.
  if (mlir::linalg::isaContractionOpInterface(consumer) &&
      llvm::any_of(consumer.getDpsInputOperands(), [&](mlir::OpOperand *in) {
        return !consumer.getMatchingIndexingMap(in).isPermutation();
      }))
    return false;
  if (!consumer.isDpsInput(operand)) return false;
  return readsEachOnce(consumer.getMatchingIndexingMap(operand), operand->get().getType());
}

// A producer with uses besides this consumer fuses into it as one kernel with both results
// (upstream's fusion keeps a producer result that is used elsewhere as an output of the fused
// op): nothing is computed twice, the producer's result is still written once, and the
// consumer no longer reads it back. AdamW's m and v updates and the parameter's update, which
// reads both, were three passes (ten parameter-sized reads and writes); fused, one (seven).
// Only where that moves no work past anything else: the consumer elementwise, every other use
// of the result after it (the fused kernel, at the consumer, must define it first), and
// nothing between the two but the consumer's other producers, so that no input of the
// producer lives across more than those.
bool fusesWithItsOtherUses(mlir::OpOperand *operand) {
  auto producer = operand->get().getDefiningOp<mlir::linalg::GenericOp>();
  auto consumer = llvm::dyn_cast<mlir::linalg::GenericOp>(operand->getOwner());
  // The consumer's loops are the producer's (it reads the result through a permutation): the
  // fused kernel then writes the kept result whole, each element once.
  if (!producer || !consumer || producer->getBlock() != consumer->getBlock() ||
      !producer->isBeforeInBlock(consumer) ||
      consumer.getNumParallelLoops() != consumer.getNumLoops() ||
      !consumer.getMatchingIndexingMap(operand).isPermutation())
    return false;
  // The other uses hand the result out of the step as it is: the function's results, or a
  // layer's slice of a stack a loop carries (the updated optimizer state). A result read on
  // by more work (a carried activation, a value other kernels consume) stays a kernel's own:
  // computing it later, at the consumer, would keep the producer's inputs alive longer and
  // move its buffer past others (tried: byte_lm's arena grew by 227 MB).
  mlir::Block *block = consumer->getBlock();
  for (mlir::OpOperand &use : producer->getUses()) {
    mlir::Operation *user = use.getOwner();
    if (user == consumer.getOperation()) continue;
    auto insert = llvm::dyn_cast<mlir::tensor::InsertSliceOp>(user);
    bool handedOut = llvm::isa<mlir::func::ReturnOp>(user) ||
                     (insert && use.get() == insert.getSource() && isLoopCarried(insert.getDest()));
    if (!handedOut || user->getBlock() != block || !consumer->isBeforeInBlock(user)) return false;
  }
  for (mlir::Operation *op = producer->getNextNode(); op != consumer.getOperation();
       op = op->getNextNode()) {
    if (llvm::isa<mlir::tensor::EmptyOp, mlir::arith::ConstantOp>(op)) continue;
    bool feedsConsumer = llvm::any_of(op->getResults(), [&](mlir::Value r) {
      return llvm::is_contained(consumer->getOperands(), r);
    });
    if (!feedsConsumer) return false;
  }
  llvm::SmallPtrSet<mlir::Value, 4> inputs;
  for (mlir::OpOperand *input : producer.getDpsInputOperands()) inputs.insert(input->get());
  return !writtenBetween(inputs, producer, consumer);
}

bool shouldFuse(mlir::OpOperand *operand) {
  mlir::Operation *producer = operand->get().getDefiningOp();
  return producer && producer->hasOneUse() && fusibleEdge(operand);
}

// Upstream's pattern recomputes a producer with other uses (it leaves them on the producer);
// this one makes them read the fused kernel's copy of the result and erases the producer.
struct FuseKeepingResults : mlir::OpRewritePattern<mlir::linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(mlir::linalg::GenericOp consumer,
                                      mlir::PatternRewriter &rewriter) const override {
    for (mlir::OpOperand &operand : consumer->getOpOperands()) {
      auto producer = operand.get().getDefiningOp<mlir::linalg::GenericOp>();
      if (!producer || producer->hasOneUse() ||
          !mlir::linalg::areElementwiseOpsFusable(&operand) || !fusibleEdge(&operand) ||
          !fusesWithItsOtherUses(&operand))
        continue;
      // Every result used elsewhere must come out of the fused kernel.
      llvm::SmallDenseSet<int> kept =
          mlir::linalg::ElementwiseOpFusionResult::getPreservedProducerResults(producer, consumer);
      if (llvm::any_of(producer->getResults(), [&](mlir::OpResult r) {
            return !r.use_empty() && !kept.contains(static_cast<int>(r.getResultNumber())) &&
                   llvm::any_of(r.getUsers(), [&](mlir::Operation *u) { return u != consumer; });
          }))
        continue;
      mlir::FailureOr<mlir::linalg::ElementwiseOpFusionResult> fused =
          mlir::linalg::fuseElementwiseOps(rewriter, &operand);
      if (mlir::failed(fused)) continue;
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceAllUsesWith(original, replacement);
      rewriter.eraseOp(consumer);
      rewriter.eraseOp(producer);
      return mlir::success();
    }
    return mlir::failure();
  }
};

// Recomputing a producer in each of its `uses` consumers reads its full-size inputs once per
// consumer; keeping it writes its result once, reads its inputs once and the result once per
// consumer. Broadcast inputs (a per-row scale) are small and not counted. Cheap means at most
// kMaxClonedOps arith ops: no transcendental is worth redoing to spare a buffer.
constexpr int kMaxClonedOps = 4;

// The tensors a gather's body reads by index (tensor.extract of a value from outside the op).
llvm::SmallVector<mlir::Value> gatheredTensors(mlir::linalg::GenericOp op) {
  llvm::SmallVector<mlir::Value> tensors;
  op.getRegion().walk([&](mlir::tensor::ExtractOp extract) {
    mlir::Value t = extract.getTensor();
    if (!op->isProperAncestor(t.getParentBlock()->getParentOp()) && !llvm::is_contained(tensors, t))
      tensors.push_back(t);
  });
  return tensors;
}

// A gather's index arithmetic (cast, clamp, the mask of dropped rows) is a few more ops than
// an elementwise clone may have, but integer ops on one index per row: its cost is the read.
constexpr int kMaxGatherOps = 8;

// What a clone may be, whatever its uses: one all-parallel result of a few arith ops (or a
// gather), written into a fresh tensor it never reads (not a loop's carried buffer, which one
// clone at most may write), reading no loop-carried value.
bool clonableShape(mlir::linalg::GenericOp op) {
  if (op->getNumResults() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() || op->hasAttr("step.collective"))
    return false;
  mlir::OpOperand *init = op.getDpsInitOperand(0);
  if (!op.getMatchingIndexingMap(init).isPermutation() || op.payloadUsesValueFromOperand(init) ||
      !init->get().getDefiningOp<mlir::tensor::EmptyOp>())
    return false;
  llvm::SmallVector<mlir::Value> gathered = gatheredTensors(op);
  int ops = 0, limit = gathered.empty() ? kMaxClonedOps : kMaxGatherOps;
  for (mlir::Operation &inner : op.getRegion().front().without_terminator()) {
    if (llvm::isa<mlir::linalg::IndexOp>(inner)) continue;  // free: the loop's own counter
    if (llvm::isa<mlir::tensor::ExtractOp>(inner)) continue;  // the gather's read
    if (!llvm::isa<mlir::arith::ArithDialect>(inner.getDialect()) || ++ops > limit)
      return false;
  }
  return llvm::none_of(op.getDpsInputOperands(),
                       [](mlir::OpOperand *in) { return isLoopCarried(in->get()); }) &&
         llvm::none_of(gathered, isLoopCarried);
}

// Whether `v` is live after `last` anyway (a value from outside the block, or one with a use
// after it): a clone at `last` reading it then keeps no buffer alive longer than it was.
bool liveAfter(mlir::Value v, mlir::Operation *last) {
  mlir::Block *block = last->getBlock();
  if (v.getParentBlock() != block) return true;
  return llvm::any_of(v.getUsers(), [&](mlir::Operation *user) {
    mlir::Operation *at = block->findAncestorOpInBlock(*user);
    return at && last->isBeforeInBlock(at);
  });
}

// Cloning `op` to consumers as late as `last` moves its reads there, and gives each
// single-use generic producing one of its inputs a use per clone, which fuses into none of
// them unless it is cloned in turn. So the whole chain must be clonable, and every value the
// chain reads must be live after `last` anyway: otherwise a buffer would move up the chain,
// or live longer, instead of disappearing.
// The one allowance: inputs of the cloned producer itself that would die at it may live on
// to `last` while they are no larger than its result, whose buffer lived exactly as long (AGC's
// clipped gradient, read by the optimizer's three updates, from the gradient it replaces).
bool chainClonable(mlir::linalg::GenericOp op, mlir::Operation *last, int depth = 0) {
  if (depth > 8 || !clonableShape(op)) return false;
  int64_t extended = 0;
  llvm::SmallPtrSet<mlir::Value, 4> seen;
  llvm::SmallVector<mlir::Value> gathered = gatheredTensors(op);
  for (mlir::OpOperand *input : op.getDpsInputOperands()) {
    auto producer = input->get().getDefiningOp<mlir::linalg::GenericOp>();
    if (producer && producer->hasOneUse() && producer->getBlock() == op->getBlock()) {
      if (!chainClonable(producer, last, depth + 1)) return false;
    } else if (!liveAfter(input->get(), last) && seen.insert(input->get()).second) {
      if (depth > 0) return false;
      // A gather's index map (read through a broadcast, one index per row) is small beside
      // the rows it selects.
      if (!gathered.empty() && !op.getMatchingIndexingMap(input).isPermutation())
        continue;
      extended += tensorBytes(input->get().getType());
    }
  }
  // The gathered tensors are read where each clone is, as the inputs are.
  for (mlir::Value t : gathered)
    if (!liveAfter(t, last) && seen.insert(t).second) {
      if (depth > 0) return false;
      extended += tensorBytes(t.getType());
    }
  return extended <= tensorBytes(op->getResult(0).getType());
}

// A clone computes where its consumer is. It must not read an input after an op between the
// two has written into that input's buffer (a value copied into a loop's iteration argument).
bool inputOverwrittenBefore(mlir::linalg::GenericOp producer, mlir::Operation *user) {
  llvm::SmallPtrSet<mlir::Value, 4> inputs;
  for (mlir::OpOperand *input : producer.getDpsInputOperands()) inputs.insert(input->get());
  for (mlir::Value t : gatheredTensors(producer)) inputs.insert(t);
  return writtenBetween(inputs, producer, user);
}

bool worthCloning(mlir::linalg::GenericOp producer) {
  int64_t uses = 0;
  mlir::Operation *last = nullptr;
  for (mlir::OpOperand &use : producer->getResult(0).getUses()) {
    if (use.getOwner()->getBlock() != producer->getBlock() || !fusibleEdge(&use) ||
        inputOverwrittenBefore(producer, use.getOwner()))
      return false;
    if (!last || last->isBeforeInBlock(use.getOwner())) last = use.getOwner();
    ++uses;
  }
  if (uses < 2 || !chainClonable(producer, last)) return false;
  int64_t fullInputs = static_cast<int64_t>(gatheredTensors(producer).size());
  for (mlir::OpOperand *input : producer.getDpsInputOperands())
    fullInputs += producer.getMatchingIndexingMap(input).isPermutation();
  return fullInputs * uses <= fullInputs + 1 + uses;
}

// Consumers first: cloning a producer gives each of its own single-use producers one use per
// clone, which are then judged (and cloned) in turn, instead of being left materialised.
void cloneCheapProducers(mlir::ModuleOp module) {
  llvm::SmallVector<mlir::linalg::GenericOp> generics;
  module.walk([&](mlir::linalg::GenericOp op) { generics.push_back(op); });
  for (mlir::linalg::GenericOp producer : llvm::reverse(generics)) {
    if (!worthCloning(producer)) continue;
    llvm::SmallVector<mlir::OpOperand *> uses;
    for (mlir::OpOperand &use : producer->getResult(0).getUses()) uses.push_back(&use);
    mlir::OpBuilder b(producer);
    for (mlir::OpOperand *use : uses) {
      b.setInsertionPoint(use->getOwner());
      use->set(b.clone(*producer)->getResult(0));
    }
    producer->erase();
  }
}

struct FuseElementwisePass : impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    cloneCheapProducers(getOperation());
    mlir::RewritePatternSet patterns(&getContext());
    mlir::linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuse);
    patterns.add<FuseKeepingResults>(&getContext());
    if (mlir::failed(mlir::applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

}  // namespace

}  // namespace stepc::codegen
