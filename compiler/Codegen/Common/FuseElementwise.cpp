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
// Three more allowances serve top_k's picks on the CPU (one slot of k chosen by index, read by
// the gates, the load-balancing loss and route_tokens' loop), so that they are no kernels:
// - a producer that only selects among its inputs by its loop indices fuses through a
//   broadcast (isSelection: it redoes no work there, the consumer reads the chosen input);
// - a slice or a unit-dim expand_shape of a cheap producer read only by linalg ops is read
//   through their maps instead (foldViewsIntoReads), so fusion sees the producer;
// - an element read in a scan loop is a use a clone may serve (cloned before the loop,
//   --step-fuse-into-gathers then computes it at the read).
//
//===----------------------------------------------------------------------===//
#include <functional>

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

// Whether `op` only chooses, by its loop indices, which of its inputs' elements to yield
// (top_k's pick of a slot on the CPU: selects on `linalg.index`): fused through a broadcast it
// redoes no work, the consumer reads the chosen input where it read the result.
bool isSelection(mlir::linalg::GenericOp op) {
  if (op->getNumResults() != 1 || op.getNumParallelLoops() != op.getNumLoops()) return false;
  mlir::Block &body = op.getRegion().front();
  std::function<bool(mlir::Value)> byIndices = [&](mlir::Value v) {
    mlir::Operation *def = v.getDefiningOp();
    if (!def) return false;  // a block argument is data
    if (llvm::isa<mlir::linalg::IndexOp, mlir::arith::ConstantOp>(def)) return true;
    return llvm::isa<mlir::arith::CmpIOp, mlir::arith::AndIOp, mlir::arith::OrIOp>(def) &&
           llvm::all_of(def->getOperands(), byIndices);
  };
  std::function<bool(mlir::Value)> chosen = [&](mlir::Value v) {
    if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(v))
      return arg.getOwner() == &body &&
             arg.getArgNumber() < static_cast<unsigned>(op.getNumDpsInputs());
    auto select = v.getDefiningOp<mlir::arith::SelectOp>();
    return select && byIndices(select.getCondition()) && chosen(select.getTrueValue()) &&
           chosen(select.getFalseValue());
  };
  return chosen(body.getTerminator()->getOperand(0));
}

// A map whose results are loop dims and constant indices (a broadcast, a slice, or both).
bool dimsAndConstants(mlir::AffineMap map) {
  return llvm::all_of(map.getResults(), [](mlir::AffineExpr e) {
    return llvm::isa<mlir::AffineDimExpr, mlir::AffineConstantExpr>(e);
  });
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
  mlir::AffineMap map = consumer.getMatchingIndexingMap(operand);
  if (readsEachOnce(map, operand->get().getType())) return true;
  auto selection = llvm::dyn_cast<mlir::linalg::GenericOp>(producer);
  return selection && isSelection(selection) && dimsAndConstants(map);
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

// Where a use's clone goes: before its consumer, or, for an element read in a scan loop
// (tensor.extract: route_tokens reading top_k's indices), before the loop in the producer's
// block, where --step-fuse-into-gathers then computes the clone at the read. Null: neither.
mlir::Operation *cloneSite(mlir::linalg::GenericOp producer, mlir::OpOperand &use) {
  mlir::Operation *user = use.getOwner();
  if (user->getBlock() == producer->getBlock()) return fusibleEdge(&use) ? user : nullptr;
  if (!llvm::isa<mlir::tensor::ExtractOp>(user) || !insideScan(user) ||
      user->getParentOfType<mlir::linalg::GenericOp>())
    return nullptr;
  // Computed at the read, each element once at most (top_k's pick: once per choice).
  auto type = llvm::cast<mlir::RankedTensorType>(producer->getResult(0).getType());
  if (!type.hasStaticShape() || runsPer(user, producer->getBlock()) > type.getNumElements())
    return nullptr;
  return producer->getBlock()->findAncestorOpInBlock(*user);
}

bool worthCloning(mlir::linalg::GenericOp producer) {
  int64_t uses = 0;
  mlir::Operation *last = nullptr;
  for (mlir::OpOperand &use : producer->getResult(0).getUses()) {
    mlir::Operation *site = cloneSite(producer, use);
    if (!site || inputOverwrittenBefore(producer, site)) return false;
    if (!last || last->isBeforeInBlock(site)) last = site;
    ++uses;
  }
  if (uses < 2 || !chainClonable(producer, last)) return false;
  int64_t fullInputs = static_cast<int64_t>(gatheredTensors(producer).size());
  for (mlir::OpOperand *input : producer.getDpsInputOperands())
    fullInputs += producer.getMatchingIndexingMap(input).isPermutation();
  return fullInputs * uses <= fullInputs + 1 + uses;
}

// Where each of a view's readers reads the viewed tensor: for each dim of the view, the
// producer's dim it is (or -1: one the view adds) and the offset there.
struct ViewDims {
  llvm::SmallVector<int64_t> source, offset;
  llvm::SmallVector<bool> narrowed;  // read at one index only (a slice narrower, an added dim)
};

// A slice with unit strides and static bounds, keeping the rank, or an expand_shape adding
// unit dims (top_k's values as the gates [T, k, 1]).
std::optional<ViewDims> viewDims(mlir::Operation *view) {
  ViewDims dims;
  if (auto slice = llvm::dyn_cast<mlir::tensor::ExtractSliceOp>(view)) {
    if (!slice.hasUnitStride() || slice.getType().getRank() != slice.getSourceType().getRank() ||
        mlir::ShapedType::isDynamicShape(slice.getStaticOffsets()) ||
        mlir::ShapedType::isDynamicShape(slice.getStaticSizes()))
      return std::nullopt;
    auto full = slice.getSourceType().getShape();
    for (int64_t d = 0; d < slice.getType().getRank(); ++d) {
      dims.source.push_back(d);
      dims.offset.push_back(slice.getStaticOffsets()[d]);
      dims.narrowed.push_back(slice.getStaticOffsets()[d] != 0 ||
                              slice.getStaticSizes()[d] != full[d]);
    }
    return dims;
  }
  auto expand = llvm::dyn_cast<mlir::tensor::ExpandShapeOp>(view);
  if (!expand || !expand.getType().hasStaticShape()) return std::nullopt;
  auto from = expand.getSrcType().getShape(), to = expand.getType().getShape();
  if (from.empty()) {  // a scalar's every dim is added
    for (int64_t size : to) {
      if (size != 1) return std::nullopt;
      dims.source.push_back(-1);
      dims.offset.push_back(0);
      dims.narrowed.push_back(true);
    }
    return dims;
  }
  for (auto [d, group] : llvm::enumerate(expand.getReassociationIndices())) {
    bool kept = false;
    for (int64_t e : group) {
      bool keep = !kept && (to[e] == from[d] || e == group.back());
      if (!keep && to[e] != 1) return std::nullopt;
      kept |= keep;
      dims.source.push_back(keep ? static_cast<int64_t>(d) : -1);
      dims.offset.push_back(0);
      dims.narrowed.push_back(!keep);
    }
  }
  return dims;
}

// A view of a cheap producer that only linalg ops read, a slice (top_k's first choices for
// the load-balancing loss, indices[:, 0:1]) or an expand_shape adding unit dims (its values
// as the gates [T, k, 1]), is read by them through their maps instead: each reader must read
// a narrowed dim at one index (a constant), which moves by the slice's offset; an added dim's
// read is dropped. The producer then has fusible readers where it had a view that fusion does
// not look through, and, cloned into them, is no kernel of its own.
void foldViewsIntoReads(mlir::ModuleOp module) {
  llvm::SmallVector<mlir::Operation *> views;
  module.walk([&](mlir::Operation *op) {
    if (llvm::isa<mlir::tensor::ExtractSliceOp, mlir::tensor::ExpandShapeOp>(op))
      views.push_back(op);
  });
  for (mlir::Operation *view : views) {
    auto producer = view->getOperand(0).getDefiningOp<mlir::linalg::GenericOp>();
    std::optional<ViewDims> dims = viewDims(view);
    if (!producer || !clonableShape(producer) || !dims || view->use_empty()) continue;
    bool readsIndices = llvm::all_of(view->getUses(), [&](mlir::OpOperand &use) {
      auto reader = llvm::dyn_cast<mlir::linalg::GenericOp>(use.getOwner());
      if (!reader || !reader.isDpsInput(&use)) return false;
      mlir::AffineMap map = reader.getMatchingIndexingMap(&use);
      for (auto [d, narrowed] : llvm::enumerate(dims->narrowed)) {
        auto constant = llvm::dyn_cast<mlir::AffineConstantExpr>(map.getResult(d));
        if (narrowed && (!constant || (dims->source[d] < 0 && constant.getValue() != 0)))
          return false;
      }
      return true;
    });
    if (!readsIndices) continue;
    for (mlir::OpOperand &use : llvm::make_early_inc_range(view->getUses())) {
      auto reader = llvm::cast<mlir::linalg::GenericOp>(use.getOwner());
      mlir::AffineMap map = reader.getMatchingIndexingMap(&use);
      llvm::SmallVector<mlir::AffineExpr> moved;
      for (auto [d, expr] : llvm::enumerate(map.getResults()))
        if (dims->source[d] >= 0) moved.push_back(expr + dims->offset[d]);
      llvm::SmallVector<mlir::AffineMap> maps = reader.getIndexingMapsArray();
      maps[use.getOperandNumber()] =
          mlir::AffineMap::get(map.getNumDims(), 0, moved, reader.getContext());
      reader.setIndexingMapsAttr(mlir::Builder(reader).getAffineMapArrayAttr(maps));
      use.set(view->getOperand(0));
    }
    view->erase();
  }
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
      b.setInsertionPoint(cloneSite(producer, *use));
      use->set(b.clone(*producer)->getResult(0));
    }
    producer->erase();
  }
}

struct FuseElementwisePass : impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    foldViewsIntoReads(getOperation());
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
