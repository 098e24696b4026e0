//===- UnrollReductions.cpp - --step-unroll-reductions --------------------===//
//
// A reduction over loops of small total extent K (2 to kMaxUnrolled) into a fill is rewritten
// as an all-parallel generic that reads each of the K slices of its inputs as an operand of its
// own and applies the payload K times, in the loops' order, starting from the fill's value:
// each element is the same ((fill + x0) + x1) + ... as before, bit for bit. K = 1 is
// --step-unit-reductions'.
//
// Why: a reduction fuses with its producers only, and only with those it reads whole. An MoE
// with k = 2 sums each token's two weighted expert rows: the gathered rows [T, 2, D], their
// gate-weighted copy and the [T, D] sum were kernels and buffers of their own, and the
// residual add one more. Unrolled, the sum is elementwise, and each producer read only through
// fixed slices (all-parallel, result in loop order) is split into one producer per slice
// (the slice's loops dropped, fixed at its index; through chains of such producers). Each
// slice producer has one use that reads it whole, so --step-fuse-elementwise makes the
// combine one pass over the experts' rows, with the residual add.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/DropUnitLoops.h"
#include "llvm/ADT/SetVector.h"
#include "compiler/Codegen/Common/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_UNROLLREDUCTIONS
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

// Beyond a few slices the unrolled payload and its operand list grow while the saving (one
// fewer buffer) stays the same.
constexpr int64_t kMaxUnrolled = 4;

// The fill `op` accumulates into, where its reduction loops' extents multiply to 2 ..
// kMaxUnrolled and the result is one statically shaped tensor; null otherwise.
mlir::linalg::FillOp smallReductionFill(mlir::linalg::GenericOp op) {
  if (op->getNumResults() != 1 || op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0 ||
      op->hasAttr("step.collective"))
    return {};
  int64_t count = 1;
  for (auto [range, iterator] : llvm::zip(op.getStaticLoopRanges(), op.getIteratorTypesArray()))
    if (iterator == mlir::utils::IteratorType::reduction) {
      if (mlir::ShapedType::isDynamic(range)) return {};
      count *= range;
    }
  if (count < 2 || count > kMaxUnrolled) return {};
  auto type = llvm::dyn_cast<mlir::RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.hasStaticShape()) return {};
  mlir::OpOperand *init = op.getDpsInitOperand(0);
  if (!op.getMatchingIndexingMap(init).isProjectedPermutation()) return {};
  return init->get().getDefiningOp<mlir::linalg::FillOp>();
}

// `op` as an all-parallel generic applying its payload once per point of its reduction loops,
// in lexicographic (loop) order; see the file comment.
mlir::linalg::GenericOp unroll(mlir::linalg::GenericOp op, mlir::linalg::FillOp fill) {
  mlir::MLIRContext *context = op.getContext();
  llvm::SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto iterators = op.getIteratorTypesArray();
  // Loop d is the new loop newIndex[d], or (-1) the reduction loop reductionDims[position[d]].
  llvm::SmallVector<unsigned> reductionDims;
  llvm::SmallVector<int64_t> newIndex, position;
  unsigned kept = 0;
  for (auto [d, iterator] : llvm::enumerate(iterators)) {
    bool reduction = iterator == mlir::utils::IteratorType::reduction;
    position.push_back(reduction ? static_cast<int64_t>(reductionDims.size()) : -1);
    if (reduction) reductionDims.push_back(d);
    newIndex.push_back(reduction ? -1 : static_cast<int64_t>(kept++));
  }
  // The points of the reduction loops, outer loop first.
  llvm::SmallVector<llvm::SmallVector<int64_t>> points{{}};
  for (unsigned d : reductionDims) {
    llvm::SmallVector<llvm::SmallVector<int64_t>> next;
    for (const auto &p : points)
      for (int64_t i = 0; i < ranges[d]; ++i) {
        next.push_back(p);
        next.back().push_back(i);
      }
    points = std::move(next);
  }
  auto replacementAt = [&](llvm::ArrayRef<int64_t> point) {
    llvm::SmallVector<mlir::AffineExpr> replacement;
    for (auto [d, to] : llvm::enumerate(newIndex))
      replacement.push_back(
          to >= 0 ? mlir::getAffineDimExpr(static_cast<unsigned>(to), context)
                  : mlir::getAffineConstantExpr(point[position[d]], context));
    return replacement;
  };
  // Operands: an input the reduction loops do not index once; any other once per point.
  llvm::SmallVector<mlir::Value> inputs;
  llvm::SmallVector<mlir::AffineMap> maps;
  // operandOf[p][i]: the new operand input i reads at point p.
  llvm::SmallVector<llvm::SmallVector<unsigned>> operandOf(points.size());
  for (mlir::OpOperand *input : op.getDpsInputOperands()) {
    mlir::AffineMap map = op.getMatchingIndexingMap(input);
    bool indexed = llvm::any_of(reductionDims, [&](unsigned d) { return map.isFunctionOfDim(d); });
    for (auto [p, point] : llvm::enumerate(points)) {
      if (!indexed && p > 0) {
        operandOf[p].push_back(operandOf[0].back());
        continue;
      }
      operandOf[p].push_back(inputs.size());
      inputs.push_back(input->get());
      maps.push_back(map.replaceDimsAndSymbols(replacementAt(point), {}, kept, map.getNumSymbols()));
    }
  }
  mlir::AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  maps.push_back(out.replaceDimsAndSymbols(replacementAt(points.front()), {}, kept,
                                           out.getNumSymbols()));

  auto type = llvm::cast<mlir::RankedTensorType>(op->getResult(0).getType());
  mlir::OpBuilder b(op);
  mlir::Value empty =
      b.create<mlir::tensor::EmptyOp>(op.getLoc(), type.getShape(), type.getElementType());
  llvm::SmallVector<mlir::utils::IteratorType> parallel(kept, mlir::utils::IteratorType::parallel);
  auto generic = b.create<mlir::linalg::GenericOp>(
      op.getLoc(), mlir::TypeRange{type}, inputs, mlir::ValueRange{empty}, maps, parallel,
      [&](mlir::OpBuilder &nb, mlir::Location loc, mlir::ValueRange args) {
        mlir::Block &body = op.getRegion().front();
        mlir::Value acc = fill.getInputs().front();
        for (auto [p, point] : llvm::enumerate(points)) {
          mlir::IRMapping mapping;
          for (unsigned i = 0; i + 1 < body.getNumArguments(); ++i)
            mapping.map(body.getArgument(i), args[operandOf[p][i]]);
          mapping.map(body.getArguments().back(), acc);
          for (mlir::Operation &inner : body.without_terminator()) {
            if (auto index = llvm::dyn_cast<mlir::linalg::IndexOp>(inner)) {
              int64_t to = newIndex[index.getDim()];
              mlir::Value v =
                  to >= 0 ? nb.create<mlir::linalg::IndexOp>(loc, to).getResult()
                          : nb.create<mlir::arith::ConstantIndexOp>(loc, point[position[index.getDim()]])
                                .getResult();
              mapping.map(index.getResult(), v);
              continue;
            }
            nb.clone(inner, mapping);
          }
          acc = mapping.lookupOrDefault(body.getTerminator()->getOperand(0));
        }
        nb.create<mlir::linalg::YieldOp>(loc, acc);
      });
  generic->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  op->getResult(0).replaceAllUsesWith(generic->getResult(0));
  op->erase();
  if (fill->use_empty()) fill->erase();
  return generic;
}

// The loops a use fixes: for each result dim of the producer, the constant index the use's map
// reads it at, or -1 where the map reads a loop of the consumer. Empty where the use is not a
// generic's input whose map is constants and distinct loops.
llvm::SmallVector<int64_t> slicePoint(mlir::OpOperand &use) {
  auto consumer = llvm::dyn_cast<mlir::linalg::GenericOp>(use.getOwner());
  if (!consumer || !consumer.isDpsInput(&use) || consumer->hasAttr("step.collective")) return {};
  mlir::AffineMap map = consumer.getMatchingIndexingMap(&use);
  llvm::SmallVector<int64_t> point;
  llvm::SmallVector<bool> seen(map.getNumDims(), false);
  bool fixesOne = false;
  for (mlir::AffineExpr expr : map.getResults()) {
    if (auto constant = llvm::dyn_cast<mlir::AffineConstantExpr>(expr)) {
      point.push_back(constant.getValue());
      fixesOne = true;
    } else if (auto dim = llvm::dyn_cast<mlir::AffineDimExpr>(expr); dim && !seen[dim.getPosition()]) {
      seen[dim.getPosition()] = true;
      point.push_back(-1);
    } else {
      return {};
    }
  }
  if (!fixesOne) return {};
  return point;
}

// Whether `producer` can be split into one producer per slice its uses read: all parallel,
// one result written in loop order into a fresh tensor, every use a distinct fixed slice.
bool splittable(mlir::linalg::GenericOp producer) {
  if (producer->getNumResults() != 1 || producer.getNumDpsInits() != 1 ||
      producer.getNumParallelLoops() != producer.getNumLoops() ||
      producer->hasAttr("step.collective") || producer->use_empty())
    return false;
  mlir::OpOperand *init = producer.getDpsInitOperand(0);
  auto type = llvm::dyn_cast<mlir::RankedTensorType>(init->get().getType());
  if (!type || !type.hasStaticShape() || !producer.getMatchingIndexingMap(init).isIdentity() ||
      producer.payloadUsesValueFromOperand(init) ||
      !init->get().getDefiningOp<mlir::tensor::EmptyOp>())
    return false;
  llvm::SmallVector<llvm::SmallVector<int64_t>> points;
  for (mlir::OpOperand &use : producer->getResult(0).getUses()) {
    llvm::SmallVector<int64_t> point = slicePoint(use);
    if (point.empty() || llvm::is_contained(points, point)) return false;
    points.push_back(point);
  }
  return true;
}

// Each use of `producer` reads a producer of its own slice, read whole; the slices.
llvm::SmallVector<mlir::linalg::GenericOp> split(mlir::linalg::GenericOp producer) {
  llvm::SmallVector<mlir::linalg::GenericOp> slices;
  auto type = llvm::cast<mlir::RankedTensorType>(producer->getResult(0).getType());
  llvm::SmallVector<std::pair<llvm::SmallVector<int64_t>, mlir::OpOperand *>> uses;
  for (mlir::OpOperand &use : producer->getResult(0).getUses())
    uses.push_back({slicePoint(use), &use});
  // Slices in index order (use lists have none), so the program is the same from run to run.
  llvm::sort(uses, [](const auto &a, const auto &b) { return a.first < b.first; });
  for (auto &[point, use] : uses) {
    llvm::SmallVector<bool> drop;
    llvm::SmallVector<int64_t> at, shape;
    for (auto [d, fixed] : llvm::enumerate(point)) {
      drop.push_back(fixed >= 0);
      at.push_back(std::max<int64_t>(fixed, 0));
      if (fixed < 0) shape.push_back(type.getDimSize(d));
    }
    auto sliceType = mlir::RankedTensorType::get(shape, type.getElementType());
    mlir::linalg::GenericOp slice = rebuildWithoutLoops(producer, drop, sliceType, {}, at);
    slices.push_back(slice);
    // The consumer reads the slice with its map less the fixed results.
    auto consumer = llvm::cast<mlir::linalg::GenericOp>(use->getOwner());
    mlir::AffineMap map = consumer.getMatchingIndexingMap(use);
    llvm::SmallVector<mlir::AffineExpr> results;
    for (mlir::AffineExpr expr : map.getResults())
      if (!llvm::isa<mlir::AffineConstantExpr>(expr)) results.push_back(expr);
    llvm::SmallVector<mlir::AffineMap> maps = consumer.getIndexingMapsArray();
    maps[use->getOperandNumber()] =
        mlir::AffineMap::get(map.getNumDims(), map.getNumSymbols(), results, map.getContext());
    use->set(slice->getResult(0));
    consumer.setIndexingMapsAttr(mlir::Builder(consumer).getAffineMapArrayAttr(maps));
  }
  producer->erase();
  return slices;
}

// The generic producers of `op`'s inputs.
// (A set: an op reading one producer twice must not queue it twice, as it is erased when split.)
using Worklist = llvm::SetVector<mlir::Operation *>;
void pushProducers(mlir::linalg::GenericOp op, Worklist &to) {
  for (mlir::Value input : op.getDpsInputs())
    if (auto producer = input.getDefiningOp<mlir::linalg::GenericOp>()) to.insert(producer);
}

struct UnrollReductionsPass : impl::UnrollReductionsBase<UnrollReductionsPass> {
  void runOnOperation() override {
    llvm::SmallVector<std::pair<mlir::linalg::GenericOp, mlir::linalg::FillOp>> found;
    getOperation().walk([&](mlir::linalg::GenericOp op) {
      if (mlir::linalg::FillOp fill = smallReductionFill(op)) found.push_back({op, fill});
    });
    // Split the producers the unrolled reductions read through fixed slices, and in turn the
    // producers of those slices: only along these chains, so the rest of the program keeps
    // its kernels.
    Worklist worklist;
    for (auto [op, fill] : found) pushProducers(unroll(op, fill), worklist);
    while (!worklist.empty()) {
      auto producer = llvm::cast<mlir::linalg::GenericOp>(worklist.pop_back_val());
      if (!splittable(producer)) continue;
      for (mlir::linalg::GenericOp slice : split(producer)) pushProducers(slice, worklist);
    }
  }
};

}  // namespace

}  // namespace stepc::codegen
