//===- ScanPatterns.cpp - cumsum and embedding_grad → scf.for on tensors -===//
//
// Ops whose iterations depend on each other are loops, not linalg.generic:
// - cumsum: an scf.for over the axis (from the end with `reverse`; marked `step.scan`)
//   carrying the running sum, a slice of the input with the axis of size 1, and the result;
//   each step extracts the input's slice, adds it to the running sum in place (a generic whose
//   output is the carried sum) and inserts the sum.
// - embedding_grad: the gradient is collapsed to [N, D] and the ids to [N]; an scf.for over
//   the N ids (marked `step.scan` too: its iterations may hit one row, so they stay in order)
//   carries the [vocab, D] result (zero-filled) and adds row n of the gradient into row ids[n]
//   in place (tensor.extract of the id, extract_slice, an add whose output is that row,
//   insert_slice). Ids must be in range: the compiled code does not check them.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/StepToLinalg/LoweringUtils.h"
#include "compiler/Conversion/StepToLinalg/Patterns.h"
#include "dialects/step/IR/StepDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

#include <tuple>

namespace stepc::lowering {
namespace {

using mlir::Value;

Value addValues(mlir::OpBuilder &b, mlir::Location loc, Value lhs, Value rhs) {
  if (isFloat(lhs.getType())) return b.create<mlir::arith::AddFOp>(loc, lhs, rhs);
  return b.create<mlir::arith::AddIOp>(loc, lhs, rhs);
}

struct CumsumLowering : mlir::OpRewritePattern<step::CumsumOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::CumsumOp op,
                                      mlir::PatternRewriter &rw) const override {
    mlir::Location loc = op.getLoc();
    auto resultType = llvm::cast<mlir::RankedTensorType>(op.getType());
    int64_t rank = resultType.getRank();
    if (rank == 0 || !resultType.hasStaticShape()) return mlir::failure();
    int64_t axis = op.getAxis();
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return mlir::failure();
    int64_t size = resultType.getDimSize(axis);
    llvm::SmallVector<int64_t> sliceShape(resultType.getShape());
    sliceShape[axis] = 1;
    auto sliceType = mlir::RankedTensorType::get(sliceShape, resultType.getElementType());
    Value zero = rw.create<mlir::arith::ConstantIndexOp>(loc, 0);
    Value one = rw.create<mlir::arith::ConstantIndexOp>(loc, 1);
    Value upper = rw.create<mlir::arith::ConstantIndexOp>(loc, size);
    Value last = rw.create<mlir::arith::ConstantIndexOp>(loc, size - 1);
    Value running = filledTensor(rw, loc, sliceType, 0.0);
    Value result = emptyTensor(rw, loc, resultType);
    bool reverse = op.getReverse();
    Value input = op.getInput();
    auto loop = rw.create<mlir::scf::ForOp>(
        loc, zero, upper, one, mlir::ValueRange{running, result},
        [&](mlir::OpBuilder &b, mlir::Location l, Value iv, mlir::ValueRange carried) {
          Value at = reverse ? b.create<mlir::arith::SubIOp>(l, last, iv).getResult() : iv;
          llvm::SmallVector<mlir::OpFoldResult> offsets(rank, b.getIndexAttr(0));
          offsets[axis] = at;
          llvm::SmallVector<mlir::OpFoldResult> sizes, strides(rank, b.getIndexAttr(1));
          for (int64_t s : sliceShape) sizes.push_back(b.getIndexAttr(s));
          Value slice = b.create<mlir::tensor::ExtractSliceOp>(l, sliceType, input, offsets,
                                                               sizes, strides);
          // Accumulated in place into the carried sum (its generic's output), so that
          // one-shot bufferization sees the yielded value as the iteration argument's buffer.
          auto identity = b.getMultiDimIdentityMap(rank);
          llvm::SmallVector<mlir::utils::IteratorType> iterators(
              rank, mlir::utils::IteratorType::parallel);
          Value sum = b.create<mlir::linalg::GenericOp>(
                           l, mlir::TypeRange{sliceType}, mlir::ValueRange{slice},
                           mlir::ValueRange{carried[0]},
                           llvm::SmallVector<mlir::AffineMap>{identity, identity}, iterators,
                           [&](mlir::OpBuilder &bb, mlir::Location ll, mlir::ValueRange args) {
                             bb.create<mlir::linalg::YieldOp>(
                                 ll, addValues(bb, ll, args[1], args[0]));
                           })
                          .getResult(0);
          Value next = b.create<mlir::tensor::InsertSliceOp>(l, sum, carried[1], offsets, sizes,
                                                             strides);
          b.create<mlir::scf::YieldOp>(l, mlir::ValueRange{sum, next});
        });
    // After bufferization the loop is two small kernels per step (the add and the copy into
    // the result's slice): OutlineKernels outlines the whole loop as one scan kernel.
    loop->setAttr("step.scan", rw.getUnitAttr());
    rw.replaceOp(op, loop.getResult(1));
    return mlir::success();
  }
};

struct EmbeddingGradLowering : mlir::OpRewritePattern<step::EmbeddingGradOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::EmbeddingGradOp op,
                                      mlir::PatternRewriter &rw) const override {
    mlir::Location loc = op.getLoc();
    auto resultType = llvm::cast<mlir::RankedTensorType>(op.getType());
    auto gradType = llvm::cast<mlir::RankedTensorType>(op.getGrad().getType());
    auto idsType = llvm::cast<mlir::RankedTensorType>(op.getIds().getType());
    if (!gradType.hasStaticShape() || !idsType.hasStaticShape() || idsType.getRank() == 0 ||
        resultType.getRank() != 2)
      return mlir::failure();
    int64_t n = idsType.getNumElements(), d = resultType.getDimSize(1);
    mlir::Type element = resultType.getElementType();
    auto rowType = mlir::RankedTensorType::get({1, d}, element);
    Value grad =
        reshapeTo(rw, loc, op.getGrad(), mlir::RankedTensorType::get({n, d}, element));
    Value ids = reshapeTo(rw, loc, op.getIds(),
                          mlir::RankedTensorType::get({n}, idsType.getElementType()));
    Value zero = rw.create<mlir::arith::ConstantIndexOp>(loc, 0);
    Value one = rw.create<mlir::arith::ConstantIndexOp>(loc, 1);
    Value upper = rw.create<mlir::arith::ConstantIndexOp>(loc, n);
    Value result = filledTensor(rw, loc, resultType, 0.0);
    auto loop = rw.create<mlir::scf::ForOp>(
        loc, zero, upper, one, mlir::ValueRange{result},
        [&](mlir::OpBuilder &b, mlir::Location l, Value iv, mlir::ValueRange carried) {
          Value id = b.create<mlir::tensor::ExtractOp>(l, ids, mlir::ValueRange{iv});
          Value row = clampedIndex(b, l, id, resultType.getDimSize(0));  // no write out of bounds
          llvm::SmallVector<mlir::OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(d)};
          llvm::SmallVector<mlir::OpFoldResult> strides(2, b.getIndexAttr(1));
          llvm::SmallVector<mlir::OpFoldResult> gradAt = {iv, b.getIndexAttr(0)};
          llvm::SmallVector<mlir::OpFoldResult> rowAt = {row, b.getIndexAttr(0)};
          Value g = b.create<mlir::tensor::ExtractSliceOp>(l, rowType, grad, gradAt, sizes,
                                                           strides);
          Value cur = b.create<mlir::tensor::ExtractSliceOp>(l, rowType, carried[0], rowAt,
                                                             sizes, strides);
          // Added in place (the row is the generic's output), so that the bufferized loop
          // updates the result's row directly, with no copy of the row first.
          auto identity = b.getMultiDimIdentityMap(2);
          llvm::SmallVector<mlir::utils::IteratorType> iterators(
              2, mlir::utils::IteratorType::parallel);
          Value sum = b.create<mlir::linalg::GenericOp>(
                           l, mlir::TypeRange{rowType}, mlir::ValueRange{g}, mlir::ValueRange{cur},
                           llvm::SmallVector<mlir::AffineMap>{identity, identity}, iterators,
                           [&](mlir::OpBuilder &bb, mlir::Location ll, mlir::ValueRange args) {
                             bb.create<mlir::linalg::YieldOp>(
                                 ll, addValues(bb, ll, args[1], args[0]));
                           })
                          .getResult(0);
          Value next =
              b.create<mlir::tensor::InsertSliceOp>(l, sum, carried[0], rowAt, sizes, strides);
          b.create<mlir::scf::YieldOp>(l, next);
        });
    // A sequential loop (ids may repeat), outlined whole like the cumsum's.
    loop->setAttr("step.scan", rw.getUnitAttr());
    rw.replaceOp(op, loop.getResult(0));
    return mlir::success();
  }
};


// repeat: an scf.for over the count carrying the loop-carried values and the stacked results
// (tensor.empty of the result types). Iteration i (count - 1 - i with `reverse`) takes slice
// [at] of each `over` operand with a rank-reducing tensor.extract_slice, runs a clone of the
// body (whose step ops the pass then lowers in turn), inserts the stacked yields at [at] and
// copies each new carried value into its iteration argument (linalg.copy), so that one-shot
// bufferization sees every yielded value as its iteration argument's buffer. A stacked result
// that `step.stack_over` writes over an `over` operand (--step-sink-layer-updates: a layer's
// updated parameters over the parameters) starts from that operand instead of a tensor.empty,
// and the iteration reads its slice of the operand from the carried tensor: slice [at] is
// read before the iteration replaces it and by no other iteration, so this is the same value,
// and the loop then updates the operand's buffer in place.
struct RepeatLowering : mlir::OpRewritePattern<step::RepeatOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::RepeatOp op,
                                      mlir::PatternRewriter &rw) const override {
    mlir::Location loc = op.getLoc();
    for (mlir::Type t : op->getResultTypes()) {
      auto rt = llvm::dyn_cast<mlir::RankedTensorType>(t);
      if (!rt || !rt.hasStaticShape()) return mlir::failure();
    }
    int64_t count = op.getCount();
    size_t numInits = op.getInits().size();
    mlir::Block &body = op.getBody().front();
    llvm::SmallVector<Value> iterInits(op.getInits().begin(), op.getInits().end());
    size_t numStacked = op.getStackedResults().size();
    llvm::SmallVector<int64_t> stackOver(numStacked, -1);
    if (auto attr = op->getAttrOfType<mlir::DenseI64ArrayAttr>("step.stack_over")) {
      if (static_cast<size_t>(attr.size()) != numStacked) return mlir::failure();
      for (size_t s = 0; s < numStacked; ++s) {
        int64_t j = attr[s];
        if (j >= static_cast<int64_t>(op.getXs().size()) ||
            (j >= 0 && op.getXs()[j].getType() != op.getStackedResults()[s].getType()) ||
            (j >= 0 && llvm::count(attr.asArrayRef(), j) != 1))
          return mlir::failure();
        stackOver[s] = j;
      }
    }
    for (auto [s, r] : llvm::enumerate(op.getStackedResults()))
      iterInits.push_back(stackOver[s] >= 0 ? op.getXs()[stackOver[s]]
                                            : emptyTensor(rw, loc, llvm::cast<mlir::RankedTensorType>(
                                                                       r.getType())));
    Value zero = rw.create<mlir::arith::ConstantIndexOp>(loc, 0);
    Value one = rw.create<mlir::arith::ConstantIndexOp>(loc, 1);
    Value upper = rw.create<mlir::arith::ConstantIndexOp>(loc, count);
    Value lower = zero;
    // --data-parallel's micro-batch loop: this rank's block of the iterations, from the
    // runtime (runtime/hal/cpu/Collectives.h); the iteration index stays the global one.
    // With step.rank_split_peeled the loop holds the first count of count + 1 micro-batches
    // and the rank's last runs after it (step.last_micro_batch): it stops one short.
    if (op->hasAttr("step.rank_split")) {
      if (op.getReverse() || !op.getStackedResults().empty()) return mlir::failure();
      bool peeled = op->hasAttr("step.rank_split_peeled");
      Value n = rw.create<mlir::arith::ConstantIntOp>(loc, peeled ? count + 1 : count, 64);
      auto bound = [&](llvm::StringRef name) {
        Value v = callRuntimeI64(rw, op, name, mlir::ValueRange{n});
        return rw.create<mlir::arith::IndexCastOp>(loc, rw.getIndexType(), v).getResult();
      };
      lower = bound("stepc_micro_batch_begin");
      upper = bound("stepc_micro_batch_end");
      if (peeled) upper = rw.create<mlir::arith::SubIOp>(loc, upper, one);
    }
    // step.rank_split_last = K: the one iteration of the rank's last micro-batch of K, with
    // the runtime's bounds [end - 1, end) (its body reads that micro-batch's slices itself,
    // step.last_micro_batch). Bounds the compiler cannot fold keep the loop, and with it
    // the body's buffers inside a loop body (BuildTrainStep.cpp says why).
    if (auto k = op->getAttrOfType<mlir::IntegerAttr>("step.rank_split_last")) {
      if (count != 1 || op.getReverse() || !op.getStackedResults().empty())
        return mlir::failure();
      Value n = rw.create<mlir::arith::ConstantIntOp>(loc, k.getInt(), 64);
      Value end = callRuntimeI64(rw, op, "stepc_micro_batch_end", mlir::ValueRange{n});
      upper = rw.create<mlir::arith::IndexCastOp>(loc, rw.getIndexType(), end);
      lower = rw.create<mlir::arith::SubIOp>(loc, upper, one);
    }
    Value last = rw.create<mlir::arith::ConstantIndexOp>(loc, count - 1);
    bool reverse = op.getReverse();
    llvm::SmallVector<Value> xs(op.getXs().begin(), op.getXs().end());
    auto loop = rw.create<mlir::scf::ForOp>(
        loc, lower, upper, one, iterInits,
        [&](mlir::OpBuilder &b, mlir::Location l, Value iv, mlir::ValueRange carried) {
          Value at = reverse ? b.create<mlir::arith::SubIOp>(l, last, iv).getResult() : iv;
          // offsets [at, 0, ...], sizes [1, shape...], strides 1, for a stacked tensor.
          auto sliceOf = [&](mlir::RankedTensorType stacked) {
            int64_t rank = stacked.getRank();
            llvm::SmallVector<mlir::OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
                strides(rank, b.getIndexAttr(1));
            offsets[0] = at;
            sizes.push_back(b.getIndexAttr(1));
            for (int64_t s : stacked.getShape().drop_front()) sizes.push_back(b.getIndexAttr(s));
            return std::make_tuple(offsets, sizes, strides);
          };
          mlir::IRMapping mapping;
          for (size_t i = 0; i < numInits; ++i) mapping.map(body.getArgument(i), carried[i]);
          for (auto [k, x] : llvm::enumerate(xs)) {
            auto [offsets, sizes, strides] =
                sliceOf(llvm::cast<mlir::RankedTensorType>(x.getType()));
            const int64_t *over = llvm::find(stackOver, static_cast<int64_t>(k));
            Value source = over == stackOver.end() ? x : carried[numInits + (over - stackOver.begin())];
            mlir::BlockArgument arg = body.getArgument(numInits + k);
            Value slice = b.create<mlir::tensor::ExtractSliceOp>(
                l, llvm::cast<mlir::RankedTensorType>(arg.getType()), source, offsets, sizes,
                strides);
            mapping.map(arg, slice);
          }
          mlir::Operation *yield = body.getTerminator();
          llvm::SmallVector<Value> next(carried.size());
          // A stacked iteration input (the backward's saved layer input) is stored first: the
          // layer may then write its new value into the carried buffer in place
          // (--step-carry-in-place), which a later read of the old value would prevent.
          auto isCarriedArg = [&](Value v) {
            auto arg = llvm::dyn_cast<mlir::BlockArgument>(v);
            return arg && arg.getOwner() == &body && arg.getArgNumber() < numInits;
          };
          for (size_t k = numInits; k < carried.size(); ++k) {
            if (!isCarriedArg(yield->getOperand(k))) continue;
            auto [offsets, sizes, strides] =
                sliceOf(llvm::cast<mlir::RankedTensorType>(carried[k].getType()));
            next[k] = b.create<mlir::tensor::InsertSliceOp>(
                l, mapping.lookupOrDefault(yield->getOperand(k)), carried[k], offsets, sizes,
                strides);
          }
          for (mlir::Operation &inner : body.without_terminator()) b.clone(inner, mapping);
          for (size_t k = numInits; k < carried.size(); ++k) {
            if (next[k]) continue;
            auto [offsets, sizes, strides] =
                sliceOf(llvm::cast<mlir::RankedTensorType>(carried[k].getType()));
            next[k] = b.create<mlir::tensor::InsertSliceOp>(
                l, mapping.lookupOrDefault(yield->getOperand(k)), carried[k], offsets, sizes,
                strides);
          }
          for (size_t k = 0; k < numInits; ++k)
            next[k] = b.create<mlir::linalg::CopyOp>(
                           l, mapping.lookupOrDefault(yield->getOperand(k)), carried[k])
                          .getResult(0);
          b.create<mlir::scf::YieldOp>(l, next);
        });
    rw.replaceOp(op, loop.getResults());
    return mlir::success();
  }
};

}  // namespace

void populateScanPatterns(mlir::RewritePatternSet &patterns) {
  patterns.add<CumsumLowering, EmbeddingGradLowering>(patterns.getContext());
}

void lowerRepeatsToLoops(mlir::Operation *root) {
  // Innermost first (a post-order walk), outside the dialect conversion: a repeat inside a
  // repeat (the layers inside --micro-batches' loop) then is an scf.for of step ops when its
  // parent's body is cloned, which the conversion lowers like any other. (Inside the
  // conversion, the clone of an inner repeat was not legalized.)
  llvm::SmallVector<step::RepeatOp> repeats;
  root->walk([&](step::RepeatOp op) {
    if (op->getParentOfType<mlir::func::FuncOp>()) repeats.push_back(op);
  });
  mlir::PatternRewriter rw(root->getContext());
  RepeatLowering lowering(root->getContext());
  for (step::RepeatOp op : repeats) {
    rw.setInsertionPoint(op);
    (void)lowering.matchAndRewrite(op, rw);  // a repeat it declines stays, an illegal op
  }
}

}  // namespace stepc::lowering
