//===- ParallelRoutingPatterns.cpp - route_tokens for a GPU ----------------===//
//
// A GPU target's token choice (lower-to-linalg's parallel-routing). The CPU's lowering
// (RoutingPatterns.cpp) is a loop over the choices, each step depending on the one before:
// fastest on a CPU core (12 us at T = 4096, k = 2), but KernelsToGpu runs such a loop in one
// GPU thread. Here it is one kernel mapped to a block per expert (BlockRoute.h). (Expert
// choice's GPU form is RoutingPatterns.cpp's loop nest, marked for one block.) The numbers are
// the CPU lowering's (and the interpreter's) exactly: integers throughout.
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

}  // namespace

void populateParallelRoutingPatterns(mlir::RewritePatternSet &patterns) {
  patterns.add<RouteTokensParallelLowering>(patterns.getContext());
}

}  // namespace stepc::lowering
