//===- RoutingPatterns.cpp - top_k, routing and gather_rows → linalg / scf ------===//
//
// - gather_rows: the embedding's row gather (gatherRows, LoweringUtils.h) with a zero row for
//   −1 and the group's division, so that elementwise fusion folds it into what consumes the
//   rows (the cast to the GEMM's type, the gate scale): the permute is never a pass of its own.
// - top_k: a parallel linalg.generic over [rows, k], each element sorting its row's best k by
//   insertion in registers (TopKLowering).
// - route_tokens: on the CPU a scalar loop over the choices (below); for a GPU
//   (parallel-routing) a count of each expert's earlier choices (a cumsum) and parallel
//   generics around it, since a scan of another form runs in one GPU thread.
// - route_tokens (CPU), route_experts: scalar loops on tensors (scf.for carrying the results,
//   tensor.extract / tensor.insert), marked `step.scan` so that each is outlined as one
//   kernel. They touch T · k or T · E · 33 scalars, against the experts' T · k · D · H
//   multiply-adds, and their steps depend on each other (an expert's load, the tokens
//   already taken). route_experts has no parallel form yet: on a GPU it runs in one thread.
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

// One linalg.generic over [rows, k], all parallel: element (r, j) keeps row r's k best entries
// sorted by insertion, in registers (scf.for over the row carrying 2k scalars), and yields
// slot j. A new entry bubbles down the k slots, displacing the first it beats (an empty slot,
// a smaller value, or a number when it is NaN; equal values do not displace, so the lower
// index stays first). Rows are independent, so the kernel spreads over threads and GPU
// blocks like any elementwise one (as a scan it ran on one thread: on a GPU, T·N·k dependent
// steps of thread 0). The price is doing each row's insertion k times, rows·N·k² compare
// steps, against the experts' T·k·D·H multiply-adds that follow.
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
          Value zero = b.create<ar::ConstantIndexOp>(l, 0), one = b.create<ar::ConstantIndexOp>(l, 1);
          auto row = b.create<mlir::scf::ForOp>(
              l, zero, b.create<ar::ConstantIndexOp>(l, n), one, init,
              [&](mlir::OpBuilder &b2, mlir::Location l2, Value i, ValueRange slots) {
                Scalars t{b2, l2};
                Value value = t.get(x, {r, i}), index = t.toI32(i);
                llvm::SmallVector<Value> next(2 * k);
                for (int64_t slot = 0; slot < k; ++slot) {
                  Value held = slots[slot], heldIndex = slots[k + slot];
                  Value empty = t.cmp(ar::CmpIPredicate::slt, heldIndex, t.i32(0));
                  Value greater = b2.create<ar::CmpFOp>(l2, ar::CmpFPredicate::OGT, value, held);
                  Value nan = b2.create<ar::CmpFOp>(l2, ar::CmpFPredicate::UNO, value, value);
                  Value heldNumber = b2.create<ar::CmpFOp>(l2, ar::CmpFPredicate::ORD, held, held);
                  // Tied (equal, or both NaN): the lower index first. Only an entry moving
                  // down can be tied with a later one; the first lowering (a scan) let a tie
                  // stop it there, so [0.5, 0.5, 4] kept indices 2, 1 for k = 2.
                  Value heldNaN = b2.create<ar::CmpFOp>(l2, ar::CmpFPredicate::UNO, held, held);
                  Value tied = t.either(
                      b2.create<ar::CmpFOp>(l2, ar::CmpFPredicate::OEQ, value, held),
                      t.both(nan, heldNaN));
                  Value earlier = t.cmp(ar::CmpIPredicate::slt, index, heldIndex);
                  Value beats = t.either(empty, t.either(greater, t.both(nan, heldNumber)));
                  beats = t.either(beats, t.both(tied, earlier));
                  next[slot] = t.select(beats, value, held);
                  next[k + slot] = t.select(beats, index, heldIndex);
                  // The displaced entry moves on down.
                  value = t.select(beats, held, value);
                  index = t.select(beats, heldIndex, index);
                }
                b2.create<mlir::scf::YieldOp>(l2, next);
              });
          Value value = row.getResult(0), index = row.getResult(k);
          for (int64_t slot = 1; slot < k; ++slot) {
            Value here = b.create<ar::CmpIOp>(l, ar::CmpIPredicate::eq, j,
                                              b.create<ar::ConstantIndexOp>(l, slot));
            value = s.select(here, row.getResult(slot), value);
            index = s.select(here, row.getResult(k + slot), index);
          }
          b.create<mlir::linalg::YieldOp>(l, ValueRange{value, index});
        });
    llvm::SmallVector<int64_t> shape(inputType.getShape());
    shape.back() = k;
    rw.replaceOp(op, {reshapeTo(rw, loc, generic.getResult(0),
                                mlir::RankedTensorType::get(shape, element)),
                      reshapeTo(rw, loc, generic.getResult(1),
                                mlir::RankedTensorType::get(shape, rw.getI32Type()))});
    return mlir::success();
  }
};

// The GPU's form (lower-to-linalg's parallel-routing). The priority order is choice rank j
// outer, tokens inner: choice (t, j) is number q = j·T + t,
// and it takes slot c of its expert e when c, the number of earlier choices of e, is below the
// capacity. All of it in parallel, with no loop from one choice to the next:
//   1. mine[e, q] = (choice q names e), i32, written [E, k, T] from experts [T, k];
//   2. seen = cumsum of mine along q (a scan kernel; a GPU block scan);
//   3. slots[t, j] = e·C + seen[e, q] − 1 if e is an expert and that is below C, else −1;
//   4. choices[e, c] = the first q with seen[e, q] ≥ c + 1 (a binary search of the row, which
//      never decreases), as the flat choice t·k + j; −1 past the expert's last choice.
// The same numbers as running through the choices in order with one load counter per expert
// (the interpreter's definition, RouteTokensScanLowering), which is a chain of T·k dependent
// steps: on a GPU, thread 0 (KernelsToGpu.cpp), about 0.3 ms at T = 4096, k = 2.
struct RouteTokensParallelLowering : mlir::OpRewritePattern<step::RouteTokensOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::RouteTokensOp op,
                                      mlir::PatternRewriter &rw) const override {
    mlir::Location loc = op.getLoc();
    auto choicesType = typeOf(op.getChoices()), slotsType = typeOf(op.getSlots());
    int64_t experts = choicesType.getDimSize(0), capacity = choicesType.getDimSize(1);
    int64_t tokens = slotsType.getDimSize(0), k = slotsType.getDimSize(1);
    int64_t count = tokens * k;
    mlir::Type i32 = rw.getI32Type();
    mlir::MLIRContext *ctx = rw.getContext();
    auto parallel = [](int64_t n) {
      return llvm::SmallVector<mlir::utils::IteratorType>(n, mlir::utils::IteratorType::parallel);
    };
    auto d = [&](unsigned i) { return rw.getAffineDimExpr(i); };
    // 1. mine [E, k, T] (e, j, t): experts[t, j] == e.
    auto mineType = mlir::RankedTensorType::get({experts, k, tokens}, i32);
    Value mine = rw.create<mlir::linalg::GenericOp>(
                       loc, mlir::TypeRange{mineType}, ValueRange{op.getExperts()},
                       ValueRange{emptyTensor(rw, loc, mineType)},
                       llvm::SmallVector<mlir::AffineMap>{
                           mlir::AffineMap::get(3, 0, {d(2), d(1)}, ctx),
                           rw.getMultiDimIdentityMap(3)},
                       parallel(3),
                       [&](mlir::OpBuilder &b, mlir::Location l, ValueRange args) {
                         Scalars s{b, l};
                         Value e = s.toI32(b.create<mlir::linalg::IndexOp>(l, 0));
                         Value hit = s.widen(s.cmp(ar::CmpIPredicate::eq, args[0], e));
                         b.create<mlir::linalg::YieldOp>(l, hit);
                       })
                      .getResult(0);
    // 2. seen [E, k·T].
    auto seenType = mlir::RankedTensorType::get({experts, count}, i32);
    Value seen = rw.create<step::CumsumOp>(loc, seenType, reshapeTo(rw, loc, mine, seenType),
                                           rw.getI64IntegerAttr(1), mlir::UnitAttr());
    // 3. slots [T, k].
    Value slots = rw.create<mlir::linalg::GenericOp>(
                        loc, mlir::TypeRange{slotsType}, ValueRange{op.getExperts()},
                        ValueRange{emptyTensor(rw, loc, slotsType)},
                        llvm::SmallVector<mlir::AffineMap>(2, rw.getMultiDimIdentityMap(2)),
                        parallel(2),
                        [&](mlir::OpBuilder &b, mlir::Location l, ValueRange args) {
                          Scalars s{b, l};
                          Value e = args[0];
                          Value valid = s.both(s.cmp(ar::CmpIPredicate::sge, e, s.i32(0)),
                                               s.cmp(ar::CmpIPredicate::slt, e, s.i32(experts)));
                          Value ec = clampedIndex(b, l, e, experts);
                          Value t = b.create<mlir::linalg::IndexOp>(l, 0);
                          Value j = b.create<mlir::linalg::IndexOp>(l, 1);
                          Value q = b.create<ar::AddIOp>(
                              l, b.create<ar::MulIOp>(l, j, b.create<ar::ConstantIndexOp>(l, tokens)),
                              t);
                          Value c = b.create<ar::SubIOp>(l, s.get(seen, {ec, q}), s.i32(1));
                          Value take = s.both(valid, s.cmp(ar::CmpIPredicate::slt, c, s.i32(capacity)));
                          Value slot = s.add(s.mul(s.toI32(ec), s.i32(capacity)), c);
                          b.create<mlir::linalg::YieldOp>(l, s.select(take, slot, s.i32(-1)));
                        })
                       .getResult(0);
    // 4. choices [E, C]: the search keeps [lo, hi) around the answer, a position in [0, k·T].
    int64_t steps = 0;
    while ((int64_t{1} << steps) < count + 1) ++steps;
    Value choices = rw.create<mlir::linalg::GenericOp>(
        loc, mlir::TypeRange{choicesType}, ValueRange{}, ValueRange{emptyTensor(rw, loc, choicesType)},
        llvm::SmallVector<mlir::AffineMap>{rw.getMultiDimIdentityMap(2)}, parallel(2),
        [&](mlir::OpBuilder &b, mlir::Location l, ValueRange) {
          Scalars s{b, l};
          Value e = b.create<mlir::linalg::IndexOp>(l, 0);
          Value wanted = s.add(s.toI32(b.create<mlir::linalg::IndexOp>(l, 1)), s.i32(1));
          auto index = [&](mlir::OpBuilder &bb, int64_t v) -> Value {
            return bb.create<ar::ConstantIndexOp>(l, v);
          };
          auto search = b.create<mlir::scf::ForOp>(
              l, index(b, 0), index(b, steps), index(b, 1), ValueRange{index(b, 0), index(b, count)},
              [&](mlir::OpBuilder &b2, mlir::Location l2, Value, ValueRange range) {
                Scalars h{b2, l2};
                Value lo = range[0], hi = range[1];
                Value mid = b2.create<ar::DivUIOp>(l2, b2.create<ar::AddIOp>(l2, lo, hi), index(b2, 2));
                Value probe = b2.create<ar::MinSIOp>(l2, mid, index(b2, count - 1));
                Value atLeast = h.cmp(ar::CmpIPredicate::sge, h.get(seen, {e, probe}), wanted);
                Value open = h.cmp(ar::CmpIPredicate::ult, lo, hi);
                Value nextHi = h.select(h.both(open, atLeast), mid, hi);
                Value nextLo = h.select(h.both(open, b2.create<ar::XOrIOp>(
                                                         l2, atLeast,
                                                         b2.create<ar::ConstantIntOp>(l2, 1, 1))),
                                        b2.create<ar::AddIOp>(l2, mid, index(b2, 1)), lo);
                b2.create<mlir::scf::YieldOp>(l2, ValueRange{nextLo, nextHi});
              });
          Value q = search.getResult(0);
          Value found = s.cmp(ar::CmpIPredicate::ult, q, index(b, count));
          Value j = s.toI32(b.create<ar::DivUIOp>(l, q, index(b, tokens)));
          Value t = s.toI32(b.create<ar::RemUIOp>(l, q, index(b, tokens)));
          Value choice = s.add(s.mul(t, s.i32(k)), j);
          b.create<mlir::linalg::YieldOp>(l, s.select(found, choice, s.i32(-1)));
        }).getResult(0);
    rw.replaceOp(op, {choices, slots});
    return mlir::success();
  }
};

// The CPU's form: the choices in priority order (rank j outer, tokens inner), one load
// counter per expert, a chain of T·k dependent steps in one scan kernel (12 µs for T = 4096,
// k = 2 on one core, against 0.3 ms for the parallel form's count and searches).
struct RouteTokensScanLowering : mlir::OpRewritePattern<step::RouteTokensOp> {
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

void populateRoutingPatterns(mlir::RewritePatternSet &patterns, bool parallelRouting) {
  patterns.add<GatherRowsLowering, TopKLowering, RouteExpertsLowering>(patterns.getContext());
  if (parallelRouting)
    patterns.add<RouteTokensParallelLowering>(patterns.getContext());
  else
    patterns.add<RouteTokensScanLowering>(patterns.getContext());
}

}  // namespace stepc::lowering
