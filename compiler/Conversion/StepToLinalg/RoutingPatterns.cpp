//===- RoutingPatterns.cpp - top_k, routing and gather_rows → linalg / scf ------===//
//
// - gather_rows: the embedding's row gather (gatherRows, LoweringUtils.h) with a zero row for
//   −1 and the group's division, so that elementwise fusion folds it into what consumes the
//   rows (the cast to the GEMM's type, the gate scale): the permute is never a pass of its own.
// - top_k, route_tokens, route_experts: scalar loops on tensors (scf.for carrying the results,
//   tensor.extract / tensor.insert), marked `step.scan` so that each is outlined as one kernel.
//   They touch T · k or T · E · 33 scalars, against the experts' T · k · D · H multiply-adds,
//   and their steps depend on each other (an expert's load, the tokens already taken).
//   Every choice is made with selects, not branches, so a kernel is one straight loop nest.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/StepToLinalg/LoweringUtils.h"
#include "compiler/Conversion/StepToLinalg/Patterns.h"
#include "dialects/step/IR/StepDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace stepc::lowering {
namespace {

using mlir::Value;
using mlir::ValueRange;
namespace ar = mlir::arith;

// A small builder for the loops' scalar code.
struct Scalars {
  mlir::OpBuilder &b;
  mlir::Location l;
  Value i32(int64_t v) { return b.create<ar::ConstantIntOp>(l, v, 32); }
  Value i64(int64_t v) { return b.create<ar::ConstantIntOp>(l, v, 64); }
  Value toI32(Value indexValue) {
    return b.create<ar::IndexCastOp>(l, b.getI32Type(), indexValue);
  }
  Value toIndex(Value v) { return b.create<ar::IndexCastOp>(l, b.getIndexType(), v); }
  Value cmp(ar::CmpIPredicate p, Value x, Value y) { return b.create<ar::CmpIOp>(l, p, x, y); }
  Value select(Value c, Value x, Value y) { return b.create<ar::SelectOp>(l, c, x, y); }
  Value both(Value x, Value y) { return b.create<ar::AndIOp>(l, x, y); }
  Value either(Value x, Value y) { return b.create<ar::OrIOp>(l, x, y); }
  Value add(Value x, Value y) { return b.create<ar::AddIOp>(l, x, y); }
  Value mul(Value x, Value y) { return b.create<ar::MulIOp>(l, x, y); }
  Value minI(Value x, Value y) { return b.create<ar::MinSIOp>(l, x, y); }
  Value widen(Value flag) { return b.create<ar::ExtUIOp>(l, b.getI32Type(), flag); }
  Value get(Value t, ValueRange at) { return b.create<mlir::tensor::ExtractOp>(l, t, at); }
  Value put(Value v, Value t, ValueRange at) {
    return b.create<mlir::tensor::InsertOp>(l, v, t, at);
  }
  // t[at] = cond ? v : t[at].
  Value putIf(Value cond, Value v, Value t, ValueRange at) {
    return put(select(cond, v, get(t, at)), t, at);
  }
};

using Body = llvm::function_ref<llvm::SmallVector<Value>(mlir::OpBuilder &, mlir::Location,
                                                         Value, ValueRange)>;

// scf.for iv in [0, n) carrying `init`, marked `step.scan`. Every loop of a nest is marked:
// canonicalization inlines a loop of one iteration (k = 1, one expert), and the next loop in
// must still be outlined as the kernel (left in the host function, it would run on the host,
// on a GPU's device pointers). Outlining takes the outermost marked loop.
mlir::scf::ForOp loop(mlir::OpBuilder &b, mlir::Location l, int64_t n, ValueRange init, Body body) {
  Value zero = b.create<ar::ConstantIndexOp>(l, 0), one = b.create<ar::ConstantIndexOp>(l, 1);
  Value upper = b.create<ar::ConstantIndexOp>(l, n);
  auto result = b.create<mlir::scf::ForOp>(
      l, zero, upper, one, init,
      [&](mlir::OpBuilder &bb, mlir::Location ll, Value iv, ValueRange carried) {
        bb.create<mlir::scf::YieldOp>(ll, body(bb, ll, iv, carried));
      });
  result->setAttr("step.scan", b.getUnitAttr());
  return result;
}

mlir::RankedTensorType typeOf(Value v) { return llvm::cast<mlir::RankedTensorType>(v.getType()); }

struct GatherRowsLowering : mlir::OpRewritePattern<step::GatherRowsOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::GatherRowsOp op,
                                      mlir::PatternRewriter &rw) const override {
    rw.replaceOp(op, gatherRows(rw, op.getLoc(), op.getSource(), op.getIds(),
                                typeOf(op.getResult()), op.getGroup(), /*zeroForNegative=*/true));
    return mlir::success();
  }
};

// Rows of the last axis, each kept sorted by insertion: a new entry bubbles down the k slots,
// displacing the first it beats (an empty slot, a smaller value, or a number when it is NaN;
// equal values do not displace, so the lower index stays first).
struct TopKLowering : mlir::OpRewritePattern<step::TopKOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::TopKOp op, mlir::PatternRewriter &rw) const override {
    mlir::Location loc = op.getLoc();
    auto inputType = typeOf(op.getInput());
    int64_t n = inputType.getShape().back(), k = op.getK();
    int64_t rows = inputType.getNumElements() / n;
    mlir::Type element = inputType.getElementType();
    auto valuesType = mlir::RankedTensorType::get({rows, k}, element);
    auto indicesType = mlir::RankedTensorType::get({rows, k}, rw.getI32Type());
    Value x = reshapeTo(rw, loc, op.getInput(), mlir::RankedTensorType::get({rows, n}, element));
    Value values = filledTensor(rw, loc, valuesType, 0.0);
    Value indices = filledTensor(rw, loc, indicesType, -1.0);
    auto outer = loop(rw, loc, rows, {values, indices}, [&](mlir::OpBuilder &b, mlir::Location l,
                                                             Value r, ValueRange rowState) {
      auto scan = loop(b, l, n, rowState, [&](mlir::OpBuilder &b2, mlir::Location l2, Value i,
                                              ValueRange state) {
        Scalars s{b2, l2};
        llvm::SmallVector<Value> init = {s.get(x, {r, i}), s.toI32(i), state[0], state[1]};
        auto insert = loop(b2, l2, k, init, [&](mlir::OpBuilder &b3, mlir::Location l3, Value j,
                                                 ValueRange c) {
          Scalars t{b3, l3};
          Value held = t.get(c[2], {r, j}), heldIndex = t.get(c[3], {r, j});
          Value empty = t.cmp(ar::CmpIPredicate::slt, heldIndex, t.i32(0));
          Value greater = b3.create<ar::CmpFOp>(l3, ar::CmpFPredicate::OGT, c[0], held);
          Value nan = b3.create<ar::CmpFOp>(l3, ar::CmpFPredicate::UNO, c[0], c[0]);
          Value heldNumber = b3.create<ar::CmpFOp>(l3, ar::CmpFPredicate::ORD, held, held);
          Value beats = t.either(empty, t.either(greater, t.both(nan, heldNumber)));
          Value nextValues = t.put(t.select(beats, c[0], held), c[2], {r, j});
          Value nextIndices = t.put(t.select(beats, c[1], heldIndex), c[3], {r, j});
          return llvm::SmallVector<Value>{t.select(beats, held, c[0]),
                                          t.select(beats, heldIndex, c[1]), nextValues,
                                          nextIndices};
        });
        return llvm::SmallVector<Value>{insert.getResult(2), insert.getResult(3)};
      });
      return llvm::SmallVector<Value>(scan.getResults());
    });
    llvm::SmallVector<int64_t> shape(inputType.getShape());
    shape.back() = k;
    rw.replaceOp(op, {reshapeTo(rw, loc, outer.getResult(0),
                                mlir::RankedTensorType::get(shape, element)),
                      reshapeTo(rw, loc, outer.getResult(1),
                                mlir::RankedTensorType::get(shape, rw.getI32Type()))});
    return mlir::success();
  }
};

// The priority pass: choice rank j outer, tokens inner, one load counter per expert.
struct RouteTokensLowering : mlir::OpRewritePattern<step::RouteTokensOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::RouteTokensOp op,
                                      mlir::PatternRewriter &rw) const override {
    mlir::Location loc = op.getLoc();
    auto choicesType = typeOf(op.getChoices()), slotsType = typeOf(op.getSlots());
    int64_t experts = choicesType.getDimSize(0), capacity = choicesType.getDimSize(1);
    int64_t tokens = slotsType.getDimSize(0), k = slotsType.getDimSize(1);
    Value load = filledTensor(rw, loc, mlir::RankedTensorType::get({experts}, rw.getI32Type()), 0.0);
    Value choices = filledTensor(rw, loc, choicesType, -1.0);
    Value slots = filledTensor(rw, loc, slotsType, -1.0);
    Value chosen = op.getExperts();
    auto outer = loop(rw, loc, k, {load, choices, slots}, [&](mlir::OpBuilder &b,
                                                             mlir::Location l, Value j,
                                                             ValueRange rankState) {
      auto inner = loop(b, l, tokens, rankState, [&](mlir::OpBuilder &b2, mlir::Location l2,
                                                     Value t, ValueRange st) {
        Scalars s{b2, l2};
        Value e = s.get(chosen, {t, j});
        Value valid = s.both(s.cmp(ar::CmpIPredicate::sge, e, s.i32(0)),
                             s.cmp(ar::CmpIPredicate::slt, e, s.i32(experts)));
        Value ec = clampedIndex(b2, l2, e, experts);
        Value c = s.get(st[0], {ec});
        Value take = s.both(valid, s.cmp(ar::CmpIPredicate::slt, c, s.i32(capacity)));
        Value cc = s.toIndex(s.minI(c, s.i32(capacity - 1)));
        Value choice = s.add(s.mul(s.toI32(t), s.i32(k)), s.toI32(j));
        Value slot = s.add(s.mul(s.toI32(ec), s.i32(capacity)), c);
        Value nextLoad = s.put(s.add(c, s.widen(take)), st[0], {ec});
        Value nextChoices = s.putIf(take, choice, st[1], {ec, cc});
        Value nextSlots = s.put(s.select(take, slot, s.i32(-1)), st[2], {t, j});
        return llvm::SmallVector<Value>{nextLoad, nextChoices, nextSlots};
      });
      return llvm::SmallVector<Value>(inner.getResults());
    });
    rw.replaceOp(op, {outer.getResult(1), outer.getResult(2)});
    return mlir::success();
  }
};

// Each expert in turn: the C-th largest key among the eligible tokens by 32 halvings of the
// i32 key range (a count per halving), then one pass taking every eligible token above it and,
// in token order, as many equal to it as the capacity leaves.
struct RouteExpertsLowering : mlir::OpRewritePattern<step::RouteExpertsOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::RouteExpertsOp op,
                                      mlir::PatternRewriter &rw) const override {
    mlir::Location loc = op.getLoc();
    auto choicesType = typeOf(op.getChoices()), slotsType = typeOf(op.getSlots());
    int64_t experts = choicesType.getDimSize(0), capacity = choicesType.getDimSize(1);
    int64_t tokens = slotsType.getDimSize(0), k = slotsType.getDimSize(1);
    Value scores = op.getScores();
    Value taken =
        filledTensor(rw, loc, mlir::RankedTensorType::get({tokens}, rw.getI32Type()), 0.0);
    Value choices = filledTensor(rw, loc, choicesType, -1.0);
    Value slots = filledTensor(rw, loc, slotsType, -1.0);
    Value chosen = filledTensor(rw, loc, slotsType, -1.0);
    auto outer = loop(rw, loc, experts, {taken, choices, slots, chosen}, [&](mlir::OpBuilder &b,
                                                                            mlir::Location l,
                                                                            Value e,
                                                                            ValueRange st) {
      // The score's order-preserving key: a float's bits, the negative ones' magnitude bits
      // flipped, compare as signed integers in the floats' order.
      auto keyOf = [&](Scalars &s, Value t) {
        Value bits = s.b.create<ar::BitcastOp>(s.l, s.b.getI32Type(), s.get(scores, {t, e}));
        Value flipped = s.b.create<ar::XOrIOp>(s.l, bits, s.i32(0x7fffffff));
        Value key = s.select(s.cmp(ar::CmpIPredicate::slt, bits, s.i32(0)), flipped, bits);
        return s.b.create<ar::ExtSIOp>(s.l, s.b.getI64Type(), key).getResult();
      };
      // Reads the carried counts (never an older version of them: that would make
      // bufferization copy the tensor).
      auto eligibleAt = [&](Scalars &s, Value counts, Value t, Value &count) {
        count = s.get(counts, {t});
        return s.cmp(ar::CmpIPredicate::slt, count, s.i32(k));
      };
      Scalars s{b, l};
      llvm::SmallVector<Value> range = {s.i64(INT32_MIN), s.i64(int64_t{INT32_MAX} + 1), s.i32(0)};
      auto halve = loop(b, l, 32, range, [&](mlir::OpBuilder &b2, mlir::Location l2, Value,
                                             ValueRange lh) {
        Scalars h{b2, l2};
        Value mid = h.add(lh[0], b2.create<ar::ShRSIOp>(
                                     l2, b2.create<ar::SubIOp>(l2, lh[1], lh[0]), h.i64(1)));
        auto count = loop(b2, l2, tokens, {h.i32(0)}, [&](mlir::OpBuilder &b3, mlir::Location l3,
                                                          Value t, ValueRange n) {
          Scalars c{b3, l3};
          Value held;
          Value at = c.both(eligibleAt(c, st[0], t, held),
                            c.cmp(ar::CmpIPredicate::sge, keyOf(c, t), mid));
          return llvm::SmallVector<Value>{c.add(n[0], c.widen(at))};
        });
        Value enough = h.cmp(ar::CmpIPredicate::sge, count.getResult(0), h.i32(capacity));
        return llvm::SmallVector<Value>{h.select(enough, mid, lh[0]), h.select(enough, lh[1], mid),
                                        h.select(enough, lh[2], count.getResult(0))};
      });
      Value threshold = halve.getResult(0);
      Value ties = b.create<ar::SubIOp>(l, s.i32(capacity), halve.getResult(2));
      llvm::SmallVector<Value> init = {s.i32(0), ties, st[0], st[1], st[2], st[3]};
      auto take = loop(b, l, tokens, init, [&](mlir::OpBuilder &b2, mlir::Location l2, Value t,
                                               ValueRange c) {
        Scalars h{b2, l2};
        Value held;
        Value eligible = eligibleAt(h, c[2], t, held);
        Value key = keyOf(h, t);
        Value above = h.cmp(ar::CmpIPredicate::sgt, key, threshold);
        Value tie = h.both(h.cmp(ar::CmpIPredicate::eq, key, threshold),
                           h.cmp(ar::CmpIPredicate::sgt, c[1], h.i32(0)));
        Value takes = h.both(eligible, h.either(above, tie));
        Value notAbove = b2.create<ar::XOrIOp>(l2, above, b2.create<ar::ConstantIntOp>(l2, 1, 1));
        Value tieTaken = h.both(takes, notAbove);
        Value slotIndex = h.toIndex(h.minI(c[0], h.i32(capacity - 1)));
        Value choiceIndex = h.toIndex(h.minI(held, h.i32(k - 1)));
        Value choice = h.add(h.mul(h.toI32(t), h.i32(k)), held);
        Value slot = h.add(h.mul(h.toI32(e), h.i32(capacity)), c[0]);
        Value nextChoices = h.putIf(takes, choice, c[3], {e, slotIndex});
        Value nextSlots = h.putIf(takes, slot, c[4], {t, choiceIndex});
        Value nextChosen = h.putIf(takes, h.toI32(e), c[5], {t, choiceIndex});
        // Written last: the eligibility above read the count before this token's update.
        Value nextTaken = h.put(h.add(held, h.widen(takes)), c[2], {t});
        return llvm::SmallVector<Value>{h.add(c[0], h.widen(takes)),
                                        b2.create<ar::SubIOp>(l2, c[1], h.widen(tieTaken)),
                                        nextTaken, nextChoices, nextSlots, nextChosen};
      });
      return llvm::SmallVector<Value>{take.getResult(2), take.getResult(3), take.getResult(4),
                                      take.getResult(5)};
    });
    rw.replaceOp(op, {outer.getResult(1), outer.getResult(2), outer.getResult(3)});
    return mlir::success();
  }
};

}  // namespace

void populateRoutingPatterns(mlir::RewritePatternSet &patterns) {
  patterns.add<GatherRowsLowering, TopKLowering, RouteTokensLowering, RouteExpertsLowering>(
      patterns.getContext());
}

}  // namespace stepc::lowering
