//===- RoutingPatterns.cpp - top_k, routing and gather_rows → linalg / scf ------===//
//
// - gather_rows: the embedding's row gather (gatherRows, LoweringUtils.h) with a zero row for
//   −1 and the group's division, so that elementwise fusion folds it into what consumes the
//   rows (the cast to the GEMM's type, the gate scale): the permute is never a pass of its own.
// - top_k: on the CPU a reduction over the entries into k slots per row, the rows innermost so
//   that they vectorize (TopKRowsInnerLowering); on a GPU a parallel linalg.generic over
//   [rows, k], each element sorting its row's best k by insertion in registers (TopKLowering).
// - route_tokens, route_experts (the CPU's forms): scalar loops on tensors (scf.for carrying
//   the results, tensor.extract / tensor.insert), marked `step.scan` so that each is outlined
//   as one kernel. They touch T · k or T · E · 33 scalars, against the experts' T · k · D · H
//   multiply-adds, and their steps depend on each other (an expert's load, the tokens already
//   taken). KernelsToGpu runs a loop like these in one thread, so a GPU target lowers
//   route_tokens with ParallelRoutingPatterns.cpp, and route_experts to the block form below,
//   which it runs as one block (BlockRoute.h).
//   Every choice is made with selects, not branches, so a kernel is one straight loop nest;
//   the one branch is each CPU routing's start, filling its counts and results at its first
//   step.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/StepToLinalg/LoweringUtils.h"
#include "compiler/Conversion/StepToLinalg/Patterns.h"
#include "compiler/Conversion/StepToLinalg/RoutingScalars.h"
#include "dialects/step/IR/StepDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace stepc::lowering {
namespace {

using mlir::Value;
using mlir::ValueRange;
namespace ar = mlir::arith;

struct GatherRowsLowering : mlir::OpRewritePattern<step::GatherRowsOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::GatherRowsOp op,
                                      mlir::PatternRewriter &rw) const override {
    rw.replaceOp(op, gatherRows(rw, op.getLoc(), op.getSource(), op.getIds(),
                                typeOf(op.getResult()), op.getGroup(), /*zeroForNegative=*/true));
    return mlir::success();
  }
};

// What both top_k lowerings read off the op: its input viewed as [rows, n], k of n per row.
struct TopKShape {
  mlir::Location loc;
  mlir::RankedTensorType inputType;
  int64_t n, k, rows;
  mlir::Type element;
  static TopKShape of(step::TopKOp op) {
    auto type = typeOf(op.getInput());
    int64_t n = type.getShape().back();
    return {op.getLoc(), type, n, op.getK(), type.getNumElements() / n, type.getElementType()};
  }
  // Replaces `op` by the [rows, k] values and indices, reshaped to the input's shape with k
  // last.
  void replace(mlir::PatternRewriter &rw, step::TopKOp op, Value values, Value indices) const {
    llvm::SmallVector<int64_t> shape(inputType.getShape());
    shape.back() = k;
    rw.replaceOp(op, {reshapeTo(rw, loc, values, mlir::RankedTensorType::get(shape, element)),
                      reshapeTo(rw, loc, indices,
                                mlir::RankedTensorType::get(shape, rw.getI32Type()))});
  }
};

// Row r's k best so far, slots 0..k-1's values then their indices (-1: empty), after entry
// (value, index): the entry bubbles down the slots, displacing the first it beats (an empty
// slot, a smaller value, or a number when it is NaN; equal values do not displace, so the lower
// index stays first) and the displaced entry moves on down.
llvm::SmallVector<Value> insertEntry(mlir::OpBuilder &b, mlir::Location l, Value value,
                                     Value index, ValueRange slots, int64_t k) {
  Scalars t{b, l};
  llvm::SmallVector<Value> next(2 * k);
  for (int64_t slot = 0; slot < k; ++slot) {
    Value held = slots[slot], heldIndex = slots[k + slot];
    Value empty = t.cmp(ar::CmpIPredicate::slt, heldIndex, t.i32(0));
    Value greater = b.create<ar::CmpFOp>(l, ar::CmpFPredicate::OGT, value, held);
    Value nan = b.create<ar::CmpFOp>(l, ar::CmpFPredicate::UNO, value, value);
    Value heldNumber = b.create<ar::CmpFOp>(l, ar::CmpFPredicate::ORD, held, held);
    // Tied (equal, or both NaN): the lower index first. Only an entry moving down can be tied
    // with a later one; the first lowering (a scan) let a tie stop it there, so [0.5, 0.5, 4]
    // kept indices 2, 1 for k = 2.
    Value heldNaN = b.create<ar::CmpFOp>(l, ar::CmpFPredicate::UNO, held, held);
    Value tied = t.either(b.create<ar::CmpFOp>(l, ar::CmpFPredicate::OEQ, value, held),
                          t.both(nan, heldNaN));
    Value earlier = t.cmp(ar::CmpIPredicate::slt, index, heldIndex);
    Value beats = t.either(empty, t.either(greater, t.both(nan, heldNumber)));
    beats = t.either(beats, t.both(tied, earlier));
    next[slot] = t.select(beats, value, held);
    next[k + slot] = t.select(beats, index, heldIndex);
    value = t.select(beats, held, value);
    index = t.select(beats, heldIndex, index);
  }
  return next;
}

// Slot j of `slots` (k values, or k indices) at j: a chain of selects.
Value pickSlot(mlir::OpBuilder &b, mlir::Location l, Value j, ValueRange slots) {
  Scalars s{b, l};
  Value picked = slots[0];
  for (int64_t slot = 1; slot < static_cast<int64_t>(slots.size()); ++slot) {
    Value here = b.create<ar::CmpIOp>(l, ar::CmpIPredicate::eq, j,
                                      b.create<ar::ConstantIndexOp>(l, slot));
    picked = s.select(here, slots[slot], picked);
  }
  return picked;
}

// A CPU routing loop's start, at its first step (`first`): the counts (`tensors[0]`) filled
// with 0, the rest with −1 (none), in a branch inside the loop, so that the loop stays one
// kernel with no fill kernels before it. Returns the tensors from then on.
llvm::SmallVector<Value> startAt(mlir::OpBuilder &b, mlir::Location l, Value first,
                                 ValueRange tensors) {
  Scalars s{b, l};
  Value none = s.i32(0), empty = s.i32(-1);
  auto start = b.create<mlir::scf::IfOp>(
      l, first,
      [&](mlir::OpBuilder &b2, mlir::Location l2) {
        llvm::SmallVector<Value> filled;
        for (auto [i, v] : llvm::enumerate(tensors))
          filled.push_back(
              b2.create<mlir::linalg::FillOp>(l2, i == 0 ? none : empty, v).getResult(0));
        b2.create<mlir::scf::YieldOp>(l2, filled);
      },
      [&](mlir::OpBuilder &b2, mlir::Location l2) { b2.create<mlir::scf::YieldOp>(l2, tensors); });
  return llvm::SmallVector<Value>(start.getResults());
}

// A GPU's form (parallelRouting): one linalg.generic over [rows, k], all parallel: element
// (r, j) keeps row r's k best entries sorted by insertion (insertEntry), in registers (scf.for
// over the row carrying 2k scalars), and yields slot j. Rows are independent, so the kernel
// spreads over GPU blocks like any elementwise one (as a scan it ran on one thread: T·N·k
// dependent steps of thread 0). The price is doing each row's insertion k times, rows·N·k² compare
// steps, against the experts' T·k·D·H multiply-adds that follow.
struct TopKLowering : mlir::OpRewritePattern<step::TopKOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::TopKOp op, mlir::PatternRewriter &rw) const override {
    TopKShape topK = TopKShape::of(op);
    auto [loc, inputType, n, k, rows, element] = topK;
    auto valuesType = mlir::RankedTensorType::get({rows, k}, element);
    auto indicesType = mlir::RankedTensorType::get({rows, k}, rw.getI32Type());
    Value x = reshapeTo(rw, loc, op.getInput(), mlir::RankedTensorType::get({rows, n}, element));
    llvm::SmallVector<mlir::AffineMap> maps(2, rw.getMultiDimIdentityMap(2));
    llvm::SmallVector<mlir::utils::IteratorType> iterators(2, mlir::utils::IteratorType::parallel);
    auto generic = rw.create<mlir::linalg::GenericOp>(
        loc, mlir::TypeRange{valuesType, indicesType}, mlir::ValueRange{},
        mlir::ValueRange{emptyTensor(rw, loc, valuesType), emptyTensor(rw, loc, indicesType)},
        maps, iterators, [&](mlir::OpBuilder &b, mlir::Location l, ValueRange) {
          Scalars s{b, l};
          Value r = b.create<mlir::linalg::IndexOp>(l, 0);
          Value j = b.create<mlir::linalg::IndexOp>(l, 1);
          // Slots 0..k-1's values, then their indices (-1: empty).
          llvm::SmallVector<Value> init(k, scalarConstant(b, l, element, 0.0));
          init.append(k, s.i32(-1));
          auto row = b.create<mlir::scf::ForOp>(
              l, s.index(0), s.index(n), s.index(1), init,
              [&](mlir::OpBuilder &b2, mlir::Location l2, Value i, ValueRange slots) {
                Scalars t{b2, l2};
                llvm::SmallVector<Value> next =
                    insertEntry(b2, l2, t.get(x, {r, i}), t.toI32(i), slots, k);
                b2.create<mlir::scf::YieldOp>(l2, next);
              });
          Value value = pickSlot(b, l, j, row.getResults().take_front(k));
          Value index = pickSlot(b, l, j, row.getResults().drop_front(k));
          b.create<mlir::linalg::YieldOp>(l, ValueRange{value, index});
        });
    topK.replace(rw, op, generic.getResult(0), generic.getResult(1));
    return mlir::success();
  }
};

// The CPU's form: the same insertion as TopKLowering, each row's once, with the rows innermost
// so that the loop over them vectorizes. One linalg.generic reduces over the entries i into 2k
// slot tensors of [rows] (the entries in order, as the insertion needs), the rows in parallel
// blocks outside the entries and a dependence-free loop inside them; two elementwise
// generics over [rows, k] pick slot j's value and index (no kernels once fused). TopKLowering's
// form ran each row's chain of dependent selects k times, the row loop outermost: an E = 64,
// k = 2 router's [4096, 64] took 3.1 ms a step there (15% of the MoE layer's step), this one
// 0.23 ms (0.87 as one block on one thread).
struct TopKRowsInnerLowering : mlir::OpRewritePattern<step::TopKOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::TopKOp op, mlir::PatternRewriter &rw) const override {
    TopKShape topK = TopKShape::of(op);
    auto [loc, inputType, n, k, rows, element] = topK;
    mlir::Type i32 = rw.getI32Type();
    // Rows in blocks of up to 256 (a divisor of rows), the blocks outermost and parallel, so
    // that the kernel spreads over the threads; the loop within a block vectorizes.
    int64_t block = std::min<int64_t>(rows, 256);
    while (rows % block) --block;
    if (block < 16) block = rows;  // no divisor worth a vector: one block
    int64_t blocks = rows / block;
    Value x = reshapeTo(rw, loc, op.getInput(),
                        mlir::RankedTensorType::get({blocks, block, n}, element));
    auto slotValues = mlir::RankedTensorType::get({blocks, block}, element);
    auto slotIndices = mlir::RankedTensorType::get({blocks, block}, i32);
    // The slots start empty (index −1) at the first entry, in the reduction's body: no fill
    // kernel per slot before it.
    llvm::SmallVector<Value> inits;
    llvm::SmallVector<mlir::Type> slotTypes;
    for (int64_t slot = 0; slot < 2 * k; ++slot) {
      auto type = slot < k ? slotValues : slotIndices;
      inits.push_back(emptyTensor(rw, loc, type));
      slotTypes.push_back(type);
    }
    mlir::MLIRContext *ctx = rw.getContext();
    mlir::AffineExpr b = rw.getAffineDimExpr(0), i = rw.getAffineDimExpr(1),
                     r = rw.getAffineDimExpr(2);
    llvm::SmallVector<mlir::AffineMap> maps{mlir::AffineMap::get(3, 0, {b, r, i}, ctx)};
    maps.append(2 * k, mlir::AffineMap::get(3, 0, {b, r}, ctx));
    auto reduce = rw.create<mlir::linalg::GenericOp>(
        loc, slotTypes, ValueRange{x}, inits, maps,
        llvm::SmallVector<mlir::utils::IteratorType>{mlir::utils::IteratorType::parallel,
                                                     mlir::utils::IteratorType::reduction,
                                                     mlir::utils::IteratorType::parallel},
        [&](mlir::OpBuilder &bb, mlir::Location l, ValueRange args) {
          Scalars s{bb, l};
          Value entry = bb.create<mlir::linalg::IndexOp>(l, 1);
          Value index = s.toI32(entry);
          Value first = bb.create<ar::CmpIOp>(l, ar::CmpIPredicate::eq, entry,
                                              bb.create<ar::ConstantIndexOp>(l, 0));
          llvm::SmallVector<Value> held;
          for (int64_t slot = 0; slot < 2 * k; ++slot) {
            Value empty = slot < k ? scalarConstant(bb, l, element, 0.0) : s.i32(-1);
            held.push_back(s.select(first, empty, args[1 + slot]));
          }
          bb.create<mlir::linalg::YieldOp>(l, insertEntry(bb, l, args[0], index, held, k));
        });
    llvm::SmallVector<Value> slots;
    for (int64_t slot = 0; slot < 2 * k; ++slot)
      slots.push_back(reshapeTo(
          rw, loc, reduce.getResult(slot),
          mlir::RankedTensorType::get({rows}, slot < k ? element : mlir::Type(i32))));
    // Two picks, the values' and the indices', each one result of a few selects: so that
    // --step-fuse-elementwise clones each into its consumers (the gates' sum and division),
    // --step-fuse-into-gathers computes it at each read of route_tokens' loop, and neither is a
    // kernel of its own (one pick with two results was: the CPU's routing was then 3 kernels).
    mlir::AffineExpr row = rw.getAffineDimExpr(0);
    auto pickOf = [&](ValueRange of, mlir::Type type) {
      auto resultType = mlir::RankedTensorType::get({rows, k}, type);
      llvm::SmallVector<mlir::AffineMap> pickMaps(k, mlir::AffineMap::get(2, 0, {row}, ctx));
      pickMaps.push_back(rw.getMultiDimIdentityMap(2));
      return rw
          .create<mlir::linalg::GenericOp>(
              loc, mlir::TypeRange{resultType}, of, ValueRange{emptyTensor(rw, loc, resultType)},
              pickMaps,
              llvm::SmallVector<mlir::utils::IteratorType>(2, mlir::utils::IteratorType::parallel),
              [&](mlir::OpBuilder &b, mlir::Location l, ValueRange args) {
                Value j = b.create<mlir::linalg::IndexOp>(l, 1);
                b.create<mlir::linalg::YieldOp>(l, pickSlot(b, l, j, args.take_front(k)));
              })
          .getResult(0);
    };
    Value values = pickOf(ValueRange(slots).take_front(k), element);
    Value indices = pickOf(ValueRange(slots).drop_front(k), i32);
    topK.replace(rw, op, values, indices);
    return mlir::success();
  }
};

// The choices in priority order (rank j outer, tokens inner), one load counter per expert: a
// chain of T·k dependent steps in one scan kernel, 12 µs for T = 4096, k = 2 on one core
// (the parallel form's count and searches took 0.3 ms there).
struct RouteTokensScanLowering : mlir::OpRewritePattern<step::RouteTokensOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::RouteTokensOp op,
                                      mlir::PatternRewriter &rw) const override {
    mlir::Location loc = op.getLoc();
    auto choicesType = typeOf(op.getChoices()), slotsType = typeOf(op.getSlots());
    RoutingShape shape = RoutingShape::of(op.getChoices(), op.getSlots());
    int64_t experts = shape.experts, capacity = shape.capacity, tokens = shape.tokens, k = shape.k;
    auto loadType = mlir::RankedTensorType::get({experts}, rw.getI32Type());
    // The loads (0) and the choices (−1: empty) are filled at the first step, inside the loop,
    // so that the routing is one kernel, not a fill kernel for each before it; the slots are
    // not filled at all, the loop writes every one.
    Value load = emptyTensor(rw, loc, loadType);
    Value choices = emptyTensor(rw, loc, choicesType);
    Value slots = emptyTensor(rw, loc, slotsType);
    Value chosen = op.getExperts();
    auto outer = scanLoop(rw, loc, k, {load, choices, slots}, [&](mlir::OpBuilder &b,
                                                             mlir::Location l, Value j,
                                                             ValueRange rankState) {
      auto inner = scanLoop(b, l, tokens, rankState, [&](mlir::OpBuilder &b2, mlir::Location l2,
                                                     Value t, ValueRange given) {
        Scalars s{b2, l2};
        // In the token loop, not the rank loop: with k = 1 canonicalization inlines the rank
        // loop, and the fills would be kernels of their own again.
        Value zero = s.index(0);
        Value first = s.both(s.cmp(ar::CmpIPredicate::eq, t, zero),
                             s.cmp(ar::CmpIPredicate::eq, j, zero));
        llvm::SmallVector<Value> st = startAt(b2, l2, first, given.take_front(2));
        st.push_back(given[2]);
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
// in token order, as many equal to it as the capacity leaves. The first expert's step starts
// the results (filled in a branch: one kernel, no fill kernels before it).
//
// A GPU target's form (`blockForm`, parallel-routing) is the same nest written for one kernel
// of one block (BlockRoute.h, which replaces the nest by a radix select and block scans over
// the experts in turn): the results start empty instead of filled, the first expert's pass
// over the tokens sets their counts to 0 and their slots and experts to −1, and each expert's
// row of choices past its count is set to −1 after its take; the outer loop is marked
// `step.block_route_experts`. Run as written it gives the same numbers as the CPU's form.
struct RouteExpertsScanLowering : mlir::OpRewritePattern<step::RouteExpertsOp> {
  RouteExpertsScanLowering(mlir::MLIRContext *context, bool blockForm)
      : OpRewritePattern(context), blockForm(blockForm) {}
  bool blockForm;
  mlir::LogicalResult matchAndRewrite(step::RouteExpertsOp op,
                                      mlir::PatternRewriter &rw) const override {
    mlir::Location loc = op.getLoc();
    auto choicesType = typeOf(op.getChoices()), slotsType = typeOf(op.getSlots());
    RoutingShape shape = RoutingShape::of(op.getChoices(), op.getSlots());
    int64_t experts = shape.experts, capacity = shape.capacity, tokens = shape.tokens, k = shape.k;
    Value scores = op.getScores();
    // The results start empty: each form sets them in its first step (no fill kernels).
    Value taken = emptyTensor(rw, loc, mlir::RankedTensorType::get({tokens}, rw.getI32Type()));
    Value choices = emptyTensor(rw, loc, choicesType);
    Value slots = emptyTensor(rw, loc, slotsType);
    Value chosen = emptyTensor(rw, loc, slotsType);
    auto outer = scanLoop(rw, loc, experts, {taken, choices, slots, chosen}, [&](mlir::OpBuilder &b,
                                                                            mlir::Location l,
                                                                            Value e,
                                                                            ValueRange given) {
      llvm::SmallVector<Value> st(given);
      if (!blockForm) {
        // The CPU's: the first expert's step fills the counts (0) and the rest (−1: none).
        Scalars h{b, l};
        Value first = h.cmp(ar::CmpIPredicate::eq, e, h.index(0));
        st = startAt(b, l, first, given);
      } else {
        // The first expert starts the tokens: no count, no slot, no expert.
        auto init = scanLoop(b, l, tokens, st, [&](mlir::OpBuilder &b2, mlir::Location l2,
                                                  Value t, ValueRange c) {
          Scalars h{b2, l2};
          Value first = b2.create<ar::CmpIOp>(l2, ar::CmpIPredicate::eq, e,
                                              b2.create<ar::ConstantIndexOp>(l2, 0));
          Value nextTaken = h.putIf(first, h.i32(0), c[0], {t});
          Value nextSlots = c[2], nextChosen = c[3];
          for (int64_t j = 0; j < k; ++j) {
            nextSlots = h.putIf(first, h.i32(-1), nextSlots, {t, h.index(j)});
            nextChosen = h.putIf(first, h.i32(-1), nextChosen, {t, h.index(j)});
          }
          return llvm::SmallVector<Value>{nextTaken, c[1], nextSlots, nextChosen};
        });
        st = llvm::SmallVector<Value>(init.getResults());
      }
      // The score's order-preserving key: a float's bits, the negative ones' magnitude bits
      // flipped, compare as signed integers in the floats' order.
      auto keyOf = [&](Scalars &s, Value t) { return s.key(s.get(scores, {t, e})); };
      // Reads the carried counts (never an older version of them: that would make
      // bufferization copy the tensor).
      auto eligibleAt = [&](Scalars &s, Value counts, Value t, Value &count) {
        count = s.get(counts, {t});
        return s.cmp(ar::CmpIPredicate::slt, count, s.i32(k));
      };
      Scalars s{b, l};
      llvm::SmallVector<Value> range = {s.i64(INT32_MIN), s.i64(int64_t{INT32_MAX} + 1), s.i32(0)};
      auto halve = scanLoop(b, l, 32, range, [&](mlir::OpBuilder &b2, mlir::Location l2, Value,
                                             ValueRange lh) {
        Scalars h{b2, l2};
        Value mid = h.add(lh[0], b2.create<ar::ShRSIOp>(
                                     l2, b2.create<ar::SubIOp>(l2, lh[1], lh[0]), h.i64(1)));
        auto count = scanLoop(b2, l2, tokens, {h.i32(0)}, [&](mlir::OpBuilder &b3, mlir::Location l3,
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
      auto take = scanLoop(b, l, tokens, init, [&](mlir::OpBuilder &b2, mlir::Location l2, Value t,
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
      Value row = take.getResult(3);
      if (blockForm) {
        // The expert's row past the tokens it took.
        Value count = take.getResult(0);
        row = scanLoop(b, l, capacity, {row}, [&](mlir::OpBuilder &b2, mlir::Location l2,
                                                   Value p, ValueRange c) {
                Scalars h{b2, l2};
                Value past = h.cmp(ar::CmpIPredicate::sge, h.toI32(p), count);
                return llvm::SmallVector<Value>{h.putIf(past, h.i32(-1), c[0], {e, p})};
              }).getResult(0);
      }
      return llvm::SmallVector<Value>{take.getResult(2), row, take.getResult(4),
                                      take.getResult(5)};
    });
    if (blockForm) outer->setAttr("step.block_route_experts", rw.getUnitAttr());
    rw.replaceOp(op, {outer.getResult(1), outer.getResult(2), outer.getResult(3)});
    return mlir::success();
  }
};

}  // namespace

void populateRoutingPatterns(mlir::RewritePatternSet &patterns, bool parallelRouting) {
  patterns.add<GatherRowsLowering>(patterns.getContext());
  if (parallelRouting) {
    patterns.add<TopKLowering>(patterns.getContext());
    populateParallelRoutingPatterns(patterns);
  } else {
    patterns.add<TopKRowsInnerLowering, RouteTokensScanLowering>(patterns.getContext());
  }
  patterns.add<RouteExpertsScanLowering>(patterns.getContext(), /*blockForm=*/parallelRouting);
}

}  // namespace stepc::lowering
