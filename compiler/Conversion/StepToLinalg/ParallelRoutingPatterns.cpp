//===- ParallelRoutingPatterns.cpp - route_tokens, route_experts for a GPU -===//
//
// A GPU target's routing (lower-to-linalg's parallel-routing). The CPU's lowerings
// (RoutingPatterns.cpp) are loops over the choices or tokens, each step depending on the one
// before: fastest on a CPU core (12 us for token choice at T = 4096, k = 2), but KernelsToGpu
// runs such a loop in one GPU thread, where expert choice over T = 4096 tokens and E = 8
// experts is 1.1 M dependent steps (~40 ms a layer). Here token choice is one kernel mapped to
// a block per expert (BlockRoute.h), and expert choice's steps are parallel kernels: counts are
// cumsums (GPU block scans), searches are a binary search per output element or a 256-way
// count per round. The numbers are the CPU lowering's (and the interpreter's) exactly:
// integers throughout, ties to the lower token.
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

llvm::SmallVector<mlir::utils::IteratorType> parallel(int64_t n) {
  return llvm::SmallVector<mlir::utils::IteratorType>(n, mlir::utils::IteratorType::parallel);
}

// A linalg.generic with `inputs` (their maps first), `outputs` (identity), building its body.
Value generic(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
              ValueRange inputs, llvm::ArrayRef<mlir::AffineMap> inputMaps, Value init,
              llvm::ArrayRef<mlir::utils::IteratorType> iterators,
              llvm::function_ref<void(mlir::OpBuilder &, mlir::Location, ValueRange)> body) {
  llvm::SmallVector<mlir::AffineMap> maps(inputMaps);
  llvm::SmallVector<mlir::AffineExpr> outDims;
  for (size_t i = 0; i < iterators.size(); ++i)
    if (iterators[i] == mlir::utils::IteratorType::parallel) outDims.push_back(b.getAffineDimExpr(i));
  maps.push_back(mlir::AffineMap::get(iterators.size(), 0, outDims, b.getContext()));
  return b.create<mlir::linalg::GenericOp>(loc, mlir::TypeRange{type}, inputs, ValueRange{init},
                                           maps, iterators, body)
      .getResult(0);
}

// The first position p in [0, n) whose value(p) >= wanted (value never decreasing in p), or n:
// a fixed number of halvings of [lo, hi), so the loop is straight-line per element.
Value lowerBound(mlir::OpBuilder &b, mlir::Location l, int64_t n, Value wanted,
                 llvm::function_ref<Value(Scalars &, Value)> value) {
  Scalars s{b, l};
  int64_t steps = 0;
  while ((int64_t{1} << steps) < n + 1) ++steps;
  auto search = b.create<mlir::scf::ForOp>(
      l, s.index(0), s.index(steps), s.index(1), ValueRange{s.index(0), s.index(n)},
      [&](mlir::OpBuilder &b2, mlir::Location l2, Value, ValueRange range) {
        Scalars h{b2, l2};
        Value lo = range[0], hi = range[1];
        Value mid = b2.create<ar::DivUIOp>(l2, b2.create<ar::AddIOp>(l2, lo, hi), h.index(2));
        Value probe = b2.create<ar::MinSIOp>(l2, mid, h.index(n - 1));
        Value atLeast = h.cmp(ar::CmpIPredicate::sge, value(h, probe), wanted);
        Value open = h.cmp(ar::CmpIPredicate::ult, lo, hi);
        Value below = b2.create<ar::XOrIOp>(l2, atLeast, b2.create<ar::ConstantIntOp>(l2, 1, 1));
        Value nextHi = h.select(h.both(open, atLeast), mid, hi);
        Value nextLo = h.select(h.both(open, below), b2.create<ar::AddIOp>(l2, mid, h.index(1)), lo);
        b2.create<mlir::scf::YieldOp>(l2, ValueRange{nextLo, nextHi});
      });
  return search.getResult(0);
}

// Token choice. The priority order is choice rank j outer, tokens inner: choice (t, j) is
// number q = j·T + t, and it takes slot c of its expert e when c, the number of earlier
// choices of e, is below the capacity. For a GPU this is one loop nest, one kernel, whose
// outer loop over the experts is marked `step.block_route`: KernelsToGpu gives each expert a
// block that counts its choices with a block scan and writes its slots and choices
// (BlockRoute.h). As written here, and as it would run unmapped, expert e walks every q:
//   slots[t, j] = e·C + c if choice q names e and c < C, −1 if it names e and the expert is
//                 full (expert 0 also writes −1 for a choice naming no expert);
//   choices[e, c] = the flat choice t·k + j for c below the expert's count and C, then −1.
// Every element of both results is written by exactly one expert, so they start empty: no
// fill kernels. The same numbers as running through the choices in order with one load
// counter per expert (the interpreter's definition, and the CPU's lowering).
struct RouteTokensParallelLowering : mlir::OpRewritePattern<step::RouteTokensOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::RouteTokensOp op,
                                      mlir::PatternRewriter &rw) const override {
    mlir::Location loc = op.getLoc();
    auto choicesType = typeOf(op.getChoices()), slotsType = typeOf(op.getSlots());
    RoutingShape shape = RoutingShape::of(op.getChoices(), op.getSlots());
    int64_t experts = shape.experts, capacity = shape.capacity, tokens = shape.tokens, k = shape.k;
    Value chosen = op.getExperts();
    auto outer = scanLoop(
        rw, loc, experts,
        {emptyTensor(rw, loc, choicesType), emptyTensor(rw, loc, slotsType)},
        [&](mlir::OpBuilder &b, mlir::Location l, Value e, ValueRange st) {
          Scalars s{b, l};
          Value expert = s.toI32(e);
          Value first = s.cmp(ar::CmpIPredicate::eq, expert, s.i32(0));
          auto walk = scanLoop(
              b, l, tokens * k, {s.i32(0), st[0], st[1]},
              [&](mlir::OpBuilder &b2, mlir::Location l2, Value q, ValueRange c) {
                Scalars h{b2, l2};
                Value t = b2.create<ar::RemUIOp>(l2, q, h.index(tokens));
                Value j = b2.create<ar::DivUIOp>(l2, q, h.index(tokens));
                Value named = h.get(chosen, {t, j});
                Value hit = h.cmp(ar::CmpIPredicate::eq, named, expert);
                Value none = h.either(h.cmp(ar::CmpIPredicate::slt, named, h.i32(0)),
                                      h.cmp(ar::CmpIPredicate::sge, named, h.i32(experts)));
                Value count = c[0];
                Value fits = h.cmp(ar::CmpIPredicate::slt, count, h.i32(capacity));
                Value slot = h.select(
                    h.both(hit, fits), h.add(h.mul(expert, h.i32(capacity)), count), h.i32(-1));
                Value slots = h.putIf(h.either(hit, h.both(none, first)), slot, c[2], {t, j});
                Value at = h.toIndex(h.minI(count, h.i32(capacity - 1)));
                Value choice = h.add(h.mul(h.toI32(t), h.i32(k)), h.toI32(j));
                Value choices = h.putIf(h.both(hit, fits), choice, c[1], {e, at});
                return llvm::SmallVector<Value>{h.add(count, h.widen(hit)), choices, slots};
              });
          Value count = walk.getResult(0);
          auto tail = scanLoop(
              b, l, capacity, {walk.getResult(1)},
              [&](mlir::OpBuilder &b2, mlir::Location l2, Value p, ValueRange c) {
                Scalars h{b2, l2};
                Value past = h.cmp(ar::CmpIPredicate::sge, h.toI32(p), count);
                return llvm::SmallVector<Value>{h.putIf(past, h.i32(-1), c[0], {e, p})};
              });
          return llvm::SmallVector<Value>{tail.getResult(0), walk.getResult(2)};
        });
    outer->setAttr("step.block_route", rw.getUnitAttr());
    rw.replaceOp(op, {outer.getResult(0), outer.getResult(1)});
    return mlir::success();
  }
};

// Expert choice: experts in turn (an scf.for on the host, carrying the four results), each:
//   1. mkey[t] = the score's integer key (i64) for a token given fewer than k experts, else
//      below every key;
//   2. the C-th largest mkey, θ, by a 256-way search: 4 rounds, each counting the tokens at or
//      above 256 candidates (one row reduction each, a GPU block per candidate) and keeping
//      the highest candidate with at least C (a binary search of the counts). `cnt`, the
//      tokens above θ, comes along. The same θ and cnt as the CPU's 32 bisections: both are
//      the largest key with at least C tokens at or above it, INT32_MIN when there is none;
//   3. the tokens above θ and at θ, counted in token order (one cumsum of both): a token is
//      taken when above θ, or at θ among the first C − cnt there; its slot is the number of
//      tokens taken up to it, minus one;
//   4. slots, experts and the tokens' counts updated in place, and the expert's row of choices
//      by a binary search of the taken-so-far count (never decreasing over t).
struct RouteExpertsParallelLowering : mlir::OpRewritePattern<step::RouteExpertsOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::RouteExpertsOp op,
                                      mlir::PatternRewriter &rw) const override {
    mlir::Location loc = op.getLoc();
    auto choicesType = typeOf(op.getChoices()), slotsType = typeOf(op.getSlots());
    RoutingShape shape = RoutingShape::of(op.getChoices(), op.getSlots());
    int64_t experts = shape.experts, capacity = shape.capacity, tokens = shape.tokens, k = shape.k;
    mlir::MLIRContext *ctx = rw.getContext();
    mlir::Type i32 = rw.getI32Type(), i64 = rw.getI64Type();
    auto d = [&](unsigned i) { return rw.getAffineDimExpr(i); };
    auto map = [&](unsigned dims, llvm::ArrayRef<mlir::AffineExpr> exprs) {
      return mlir::AffineMap::get(dims, 0, exprs, ctx);
    };
    auto row = [&](int64_t n, mlir::Type t) { return mlir::RankedTensorType::get({n}, t); };
    // Every score's key, [E, T]: row e is expert e's, contiguous.
    auto keysType = mlir::RankedTensorType::get({experts, tokens}, i64);
    Value keys = generic(rw, loc, keysType, {op.getScores()}, {map(2, {d(1), d(0)})},
                         emptyTensor(rw, loc, keysType), parallel(2),
                         [&](mlir::OpBuilder &b, mlir::Location l, ValueRange args) {
                           Scalars s{b, l};
                           b.create<mlir::linalg::YieldOp>(l, s.key(args[0]));
                         });
    // The experts' numbers, for the slots' e·C (read from a one-element slice at e).
    Value ids = generic(rw, loc, row(experts, i32), {}, {}, emptyTensor(rw, loc, row(experts, i32)),
                        parallel(1), [&](mlir::OpBuilder &b, mlir::Location l, ValueRange) {
                          Scalars s{b, l};
                          b.create<mlir::linalg::YieldOp>(
                              l, s.toI32(b.create<mlir::linalg::IndexOp>(l, 0)));
                        });
    Value taken = filledTensor(rw, loc, row(tokens, i32), 0.0);
    Value choices = filledTensor(rw, loc, choicesType, -1.0);
    Value slots = filledTensor(rw, loc, slotsType, -1.0);
    Value chosen = filledTensor(rw, loc, slotsType, -1.0);
    Scalars top{rw, loc};
    auto loop = rw.create<mlir::scf::ForOp>(
        loc, top.index(0), top.index(experts), top.index(1),
        ValueRange{taken, choices, slots, chosen},
        [&](mlir::OpBuilder &b, mlir::Location l, Value e, ValueRange st) {
          Value taken = st[0], choices = st[1], slots = st[2], chosen = st[3];
          // Row e of a [rows, n] tensor as [n], and back.
          llvm::SmallVector<mlir::OpFoldResult> rowAt{e, b.getIndexAttr(0)};
          auto size = [&](int64_t n) {
            return llvm::SmallVector<mlir::OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(n)};
          };
          llvm::SmallVector<mlir::OpFoldResult> unit(2, b.getIndexAttr(1));
          auto rowOf = [&](Value v, int64_t n, mlir::Type t) -> Value {
            return b.create<mlir::tensor::ExtractSliceOp>(l, row(n, t), v, rowAt, size(n), unit);
          };
          Value keyRow = rowOf(keys, tokens, i64);
          Value id = b.create<mlir::tensor::ExtractSliceOp>(
              l, row(1, i32), ids, llvm::SmallVector<mlir::OpFoldResult>{e},
              llvm::SmallVector<mlir::OpFoldResult>{b.getIndexAttr(1)},
              llvm::SmallVector<mlir::OpFoldResult>{b.getIndexAttr(1)});
          // 1. Eligible tokens' keys; the others below every candidate.
          constexpr int64_t kNone = -(int64_t{1} << 40);
          Value mkey = generic(b, l, row(tokens, i64), {keyRow, taken},
                               {b.getMultiDimIdentityMap(1), b.getMultiDimIdentityMap(1)},
                               emptyTensor(b, l, row(tokens, i64)), parallel(1),
                               [&](mlir::OpBuilder &bb, mlir::Location ll, ValueRange args) {
                                 Scalars h{bb, ll};
                                 Value eligible = h.cmp(ar::CmpIPredicate::slt, args[1], h.i32(k));
                                 bb.create<mlir::linalg::YieldOp>(
                                     ll, h.select(eligible, args[0], h.i64(kNone)));
                               });
          // 2. state = (lo, cnt): lo's count is at least C (or lo is INT32_MIN), cnt the count
          //    at or above lo + span.
          Value state = b.create<ar::ConstantOp>(
              l, mlir::DenseElementsAttr::get(row(2, i64),
                                              llvm::ArrayRef<int64_t>{INT32_MIN, 0}));
          auto reduction = llvm::SmallVector<mlir::utils::IteratorType>{
              mlir::utils::IteratorType::parallel, mlir::utils::IteratorType::reduction};
          for (int round = 0; round < 4; ++round) {
            int64_t step = int64_t{1} << (24 - 8 * round);  // candidates lo + j·step, j < 256
            Value at = state;
            Value counts = generic(
                b, l, row(256, i32), {mkey}, {map(2, {d(1)})}, filledTensor(b, l, row(256, i32), 0.0),
                reduction, [&](mlir::OpBuilder &bb, mlir::Location ll, ValueRange args) {
                  Scalars h{bb, ll};
                  Value j = bb.create<ar::IndexCastOp>(ll, i64, bb.create<mlir::linalg::IndexOp>(ll, 0));
                  Value candidate = h.add(h.get(at, {h.index(0)}), h.mul(j, h.i64(step)));
                  Value hit = h.widen(h.cmp(ar::CmpIPredicate::sge, args[0], candidate));
                  bb.create<mlir::linalg::YieldOp>(ll, h.add(args[1], hit));
                });
            state = generic(b, l, row(2, i64), {}, {}, emptyTensor(b, l, row(2, i64)), parallel(1),
                            [&](mlir::OpBuilder &bb, mlir::Location ll, ValueRange) {
                              Scalars h{bb, ll};
                              // Counts never increase with j: the candidates with at least C
                              // are a prefix, found by a binary search of the 256 counts.
                              Value good = h.toI32(lowerBound(
                                  bb, ll, 256, h.i32(1 - capacity), [&](Scalars &g, Value j) {
                                    return g.sub(g.i32(0), g.get(counts, {j}));
                                  }));
                              Value best = h.maxI(h.sub(good, h.i32(1)), h.i32(0));
                              Value lo = h.add(h.get(at, {h.index(0)}),
                                               h.mul(bb.create<ar::ExtSIOp>(ll, i64, best),
                                                     h.i64(step)));
                              Value last = h.cmp(ar::CmpIPredicate::eq, best, h.i32(255));
                              Value next = h.toIndex(h.minI(h.add(best, h.i32(1)), h.i32(255)));
                              Value cnt = h.select(
                                  last, h.get(at, {h.index(1)}),
                                  bb.create<ar::ExtSIOp>(ll, i64, h.get(counts, {next})));
                              Value first = h.cmp(ar::CmpIPredicate::eq,
                                                  bb.create<mlir::linalg::IndexOp>(ll, 0), h.index(0));
                              bb.create<mlir::linalg::YieldOp>(ll, h.select(first, lo, cnt));
                            });
          }
          // 3. Above θ and at θ, counted up to each token (inclusive), [2, T].
          Value threshold = state;
          auto flagsType = mlir::RankedTensorType::get({2, tokens}, i32);
          Value flags = generic(b, l, flagsType, {mkey}, {map(2, {d(1)})},
                                emptyTensor(b, l, flagsType), parallel(2),
                                [&](mlir::OpBuilder &bb, mlir::Location ll, ValueRange args) {
                                  Scalars h{bb, ll};
                                  Value theta = h.get(threshold, {h.index(0)});
                                  Value above = h.cmp(ar::CmpIPredicate::sgt, args[0], theta);
                                  Value tie = h.cmp(ar::CmpIPredicate::eq, args[0], theta);
                                  Value first = h.cmp(ar::CmpIPredicate::eq,
                                                      bb.create<mlir::linalg::IndexOp>(ll, 0),
                                                      h.index(0));
                                  bb.create<mlir::linalg::YieldOp>(
                                      ll, h.widen(h.select(first, above, tie)));
                                });
          Value upTo = b.create<step::CumsumOp>(l, flagsType, flags, b.getI64IntegerAttr(1),
                                                mlir::UnitAttr());
          // Taken up to token t, and whether t itself is: the ties taken are the first C − cnt.
          // The ties to take: C − cnt.
          auto tiesOf = [&](Scalars &h) -> Value {
            return h.b.create<ar::TruncIOp>(
                h.l, i32, h.sub(h.i64(capacity), h.get(threshold, {h.index(1)})));
          };
          auto takenUpTo = [&](Scalars &h, Value t) {
            Value ties = tiesOf(h);
            return h.add(h.get(upTo, {h.index(0), t}), h.minI(h.get(upTo, {h.index(1), t}), ties));
          };
          auto takes = [&](Scalars &h, Value t) {
            Value ties = tiesOf(h);
            Value above = h.cmp(ar::CmpIPredicate::ne, h.get(flags, {h.index(0), t}), h.i32(0));
            Value tie = h.cmp(ar::CmpIPredicate::ne, h.get(flags, {h.index(1), t}), h.i32(0));
            Value inTies = h.cmp(ar::CmpIPredicate::sle, h.get(upTo, {h.index(1), t}), ties);
            return h.either(above, h.both(tie, inTies));
          };
          // 4. This expert's row of choices (reading the counts before this expert).
          Value choiceRow = rowOf(choices, capacity, i32);
          Value newRow = generic(
              b, l, row(capacity, i32), {}, {}, choiceRow, parallel(1),
              [&](mlir::OpBuilder &bb, mlir::Location ll, ValueRange) {
                Scalars h{bb, ll};
                Value wanted = h.add(h.toI32(bb.create<mlir::linalg::IndexOp>(ll, 0)), h.i32(1));
                Value t = lowerBound(bb, ll, tokens, wanted,
                                     [&](Scalars &g, Value p) { return takenUpTo(g, p); });
                Value found = h.cmp(ar::CmpIPredicate::ult, t, h.index(tokens));
                Value at = bb.create<ar::MinSIOp>(ll, t, h.index(tokens - 1));
                Value choice = h.add(h.mul(h.toI32(at), h.i32(k)), h.get(taken, {at}));
                bb.create<mlir::linalg::YieldOp>(ll, h.select(found, choice, h.i32(-1)));
              });
          Value nextChoices = b.create<mlir::tensor::InsertSliceOp>(l, newRow, choices, rowAt,
                                                                    size(capacity), unit);
          // Slots and experts of the taken tokens, at their next choice (in place).
          auto updated = b.create<mlir::linalg::GenericOp>(
              l, mlir::TypeRange{slotsType, slotsType}, ValueRange{taken}, ValueRange{slots, chosen},
              llvm::SmallVector<mlir::AffineMap>{map(2, {d(0)}), b.getMultiDimIdentityMap(2),
                                                 b.getMultiDimIdentityMap(2)},
              parallel(2), [&](mlir::OpBuilder &bb, mlir::Location ll, ValueRange args) {
                Scalars h{bb, ll};
                Value t = bb.create<mlir::linalg::IndexOp>(ll, 0);
                Value j = h.toI32(bb.create<mlir::linalg::IndexOp>(ll, 1));
                Value hit = h.both(takes(h, t),
                                   h.cmp(ar::CmpIPredicate::eq, j, h.minI(args[0], h.i32(k - 1))));
                Value expert = h.get(id, {h.index(0)});
                Value slot = h.add(h.mul(expert, h.i32(capacity)), h.sub(takenUpTo(h, t), h.i32(1)));
                bb.create<mlir::linalg::YieldOp>(
                    ll, ValueRange{h.select(hit, slot, args[1]), h.select(hit, expert, args[2])});
              });
          Value nextSlots = updated.getResult(0), nextChosen = updated.getResult(1);
          Value nextTaken = generic(b, l, row(tokens, i32), {}, {}, taken, parallel(1),
                                    [&](mlir::OpBuilder &bb, mlir::Location ll, ValueRange args) {
                                      Scalars h{bb, ll};
                                      Value t = bb.create<mlir::linalg::IndexOp>(ll, 0);
                                      bb.create<mlir::linalg::YieldOp>(
                                          ll, h.add(args[0], h.widen(takes(h, t))));
                                    });
          b.create<mlir::scf::YieldOp>(l, ValueRange{nextTaken, nextChoices, nextSlots, nextChosen});
        });
    rw.replaceOp(op, {loop.getResult(1), loop.getResult(2), loop.getResult(3)});
    return mlir::success();
  }
};

}  // namespace

void populateParallelRoutingPatterns(mlir::RewritePatternSet &patterns) {
  patterns.add<RouteTokensParallelLowering, RouteExpertsParallelLowering>(patterns.getContext());
}

}  // namespace stepc::lowering
