//===- BlockRoute.cpp - the MoE routings as GPU block kernels -------------===//
//
// See BlockRoute.h. The shuffles and barriers are at the kernel's top level or in the experts'
// loop that every thread runs alike, reached by every thread (threads past the tokens or
// choices take part with counts of 0), as full-warp shuffles and block barriers require.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/LLVMGPU/BlockRoute.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace stepc::codegen {

namespace {

namespace ar = mlir::arith;
constexpr int64_t kWarp = 32, kThreads = 1024;

std::optional<int64_t> tripCount(mlir::scf::ForOp loop) {
  auto lb = mlir::getConstantIntValue(loop.getLowerBound());
  auto ub = mlir::getConstantIntValue(loop.getUpperBound());
  auto step = mlir::getConstantIntValue(loop.getStep());
  if (!lb || !ub || !step || *lb != 0 || *step != 1) return std::nullopt;
  return *ub;
}

// Constants at `loc`, built by whichever builder is at hand (the kernel's, a loop body's).
struct Constants {
  mlir::Location loc;
  mlir::Value index(mlir::OpBuilder &b, int64_t v) const {
    return b.create<ar::ConstantIndexOp>(loc, v);
  }
  mlir::Value i32(mlir::OpBuilder &b, int64_t v) const {
    return b.create<ar::ConstantIntOp>(loc, v, 32);
  }
};

// A memref the block's code may use in place of the loop's: defined before the loop.
bool outside(mlir::Value v, mlir::scf::ForOp loop) {
  mlir::Operation *def = v.getDefiningOp();
  return def ? !loop->isAncestor(def) : !loop->isAncestor(v.getParentBlock()->getParentOp());
}

// Block-wide exclusive prefix sums of each thread's i32 `values`, in thread order, and their
// totals, in every thread: warp scans by `gpu.shuffle up`, the warps' totals through a
// [values, 32] workgroup buffer of `fn` (one barrier), then every warp scans the 32 totals
// alike and takes its warp's prefix and the block's total with `gpu.shuffle idx`. Called at
// the kernel's top level (or in a loop every thread runs alike), by every thread.
struct BlockSums {
  llvm::SmallVector<mlir::Value> before, total;
};
BlockSums blockScan(mlir::OpBuilder &b, mlir::Location loc, mlir::gpu::GPUFuncOp fn,
                    mlir::Value tid, llvm::ArrayRef<mlir::Value> values) {
  mlir::Type i32 = b.getI32Type();
  auto c = [&](int64_t v) -> mlir::Value { return b.create<ar::ConstantIndexOp>(loc, v); };
  auto ci = [&](int64_t v) -> mlir::Value { return b.create<ar::ConstantIntOp>(loc, v, 32); };
  auto warpScan = [&](mlir::Value value) {
    for (int offset = 1; offset < kWarp; offset <<= 1) {
      auto up = b.create<mlir::gpu::ShuffleOp>(loc, value, offset, kWarp, mlir::gpu::ShuffleMode::UP);
      mlir::Value sum = b.create<ar::AddIOp>(loc, up.getShuffleResult(), value);
      value = b.create<ar::SelectOp>(loc, up.getValid(), sum, value);
    }
    return value;
  };
  int64_t n = static_cast<int64_t>(values.size());
  auto space = mlir::gpu::AddressSpaceAttr::get(b.getContext(), mlir::gpu::AddressSpace::Workgroup);
  mlir::Value totals = fn.addWorkgroupAttribution(
      mlir::MemRefType::get({n, kWarp}, i32, mlir::AffineMap(), space), loc);
  mlir::Value lane = b.create<ar::RemUIOp>(loc, tid, c(kWarp));
  mlir::Value warp = b.create<ar::DivUIOp>(loc, tid, c(kWarp));
  llvm::SmallVector<mlir::Value> inclusive;
  for (mlir::Value v : values) inclusive.push_back(warpScan(v));
  mlir::Value lastLane = b.create<ar::CmpIOp>(loc, ar::CmpIPredicate::eq, lane, c(kWarp - 1));
  b.create<mlir::scf::IfOp>(loc, lastLane, [&](mlir::OpBuilder &ib, mlir::Location) {
    for (int64_t i = 0; i < n; ++i)
      ib.create<mlir::memref::StoreOp>(loc, inclusive[i], totals,
                                       mlir::ValueRange{ib.create<ar::ConstantIndexOp>(loc, i), warp});
    ib.create<mlir::scf::YieldOp>(loc);
  });
  b.create<mlir::gpu::BarrierOp>(loc);
  mlir::Value width = ci(kWarp);
  mlir::Value previous = b.create<ar::IndexCastOp>(
      loc, i32, b.create<ar::SubIOp>(loc, b.create<ar::MaxUIOp>(loc, warp, c(1)), c(1)));
  mlir::Value firstWarp = b.create<ar::CmpIOp>(loc, ar::CmpIPredicate::eq, warp, c(0));
  BlockSums sums;
  for (int64_t i = 0; i < n; ++i) {
    mlir::Value warps =
        warpScan(b.create<mlir::memref::LoadOp>(loc, totals, mlir::ValueRange{c(i), lane}));
    auto before = b.create<mlir::gpu::ShuffleOp>(loc, warps, previous, width, mlir::gpu::ShuffleMode::IDX);
    mlir::Value warpPrefix = b.create<ar::SelectOp>(loc, firstWarp, ci(0), before.getShuffleResult());
    sums.total.push_back(b.create<mlir::gpu::ShuffleOp>(loc, warps, ci(kWarp - 1), width,
                                                        mlir::gpu::ShuffleMode::IDX)
                             .getShuffleResult());
    sums.before.push_back(
        b.create<ar::AddIOp>(loc, warpPrefix, b.create<ar::SubIOp>(loc, inclusive[i], values[i])));
  }
  return sums;
}

}  // namespace

mlir::FailureOr<std::optional<BlockScanLaunch>> mapBlockRoute(mlir::gpu::GPUFuncOp fn) {
  mlir::scf::ForOp outer;
  for (mlir::Operation &op : fn.getBody().front())
    if (auto f = llvm::dyn_cast<mlir::scf::ForOp>(op); f && f->hasAttr("step.block_route")) outer = f;
  if (!outer) return std::optional<BlockScanLaunch>();
  auto fail = [&](const char *what) -> mlir::FailureOr<std::optional<BlockScanLaunch>> {
    outer.emitError() << "step.block_route: " << what
                      << " (ParallelRoutingPatterns.cpp's token choice loop expected)";
    return mlir::failure();
  };
  // The walk over the choices: the first loop in the experts' loop; its first load reads the
  // experts named, its stores write the slot, then the choice.
  mlir::scf::ForOp walk;
  for (mlir::Operation &op : outer.getBody()->without_terminator())
    if ((walk = llvm::dyn_cast<mlir::scf::ForOp>(op))) break;
  if (!walk) return fail("no loop over the choices");
  llvm::SmallVector<mlir::memref::LoadOp> loads;
  llvm::SmallVector<mlir::memref::StoreOp> stores;
  for (mlir::Operation &op : walk.getBody()->without_terminator()) {
    if (auto load = llvm::dyn_cast<mlir::memref::LoadOp>(op)) loads.push_back(load);
    if (auto store = llvm::dyn_cast<mlir::memref::StoreOp>(op)) stores.push_back(store);
  }
  if (loads.empty() || stores.size() != 2) return fail("not one read of the experts and two writes");
  mlir::Value named = loads.front().getMemRef(), slots = stores[0].getMemRef(),
              choices = stores[1].getMemRef();
  auto namedType = llvm::cast<mlir::MemRefType>(named.getType());
  auto slotsType = llvm::cast<mlir::MemRefType>(slots.getType());
  auto choicesType = llvm::cast<mlir::MemRefType>(choices.getType());
  std::optional<int64_t> experts = tripCount(outer), count = tripCount(walk);
  if (slotsType.getRank() != 2 || choicesType.getRank() != 2 ||
      namedType.getShape() != slotsType.getShape() || !slotsType.getElementType().isInteger(32) ||
      !choicesType.getElementType().isInteger(32) || !namedType.getElementType().isInteger(32) ||
      !experts || !count || *experts != choicesType.getDimSize(0) ||
      *count != slotsType.getDimSize(0) * slotsType.getDimSize(1))
    return fail("its buffers are not experts [T, k], slots [T, k] and choices [E, C] of i32");
  if (!outside(named, outer) || !outside(slots, outer) || !outside(choices, outer))
    return fail("a buffer is defined inside the loop");
  const int64_t tokens = slotsType.getDimSize(0), k = slotsType.getDimSize(1);
  const int64_t capacity = choicesType.getDimSize(1), n = tokens * k;
  const int64_t segment = (n + kThreads - 1) / kThreads;

  mlir::Location loc = outer.getLoc();
  mlir::OpBuilder b(outer);
  mlir::Type i32 = b.getI32Type();
  Constants cst{loc};
  auto toI32 = [&](mlir::OpBuilder &bb, mlir::Value v) -> mlir::Value {
    return bb.create<ar::IndexCastOp>(loc, i32, v);
  };
  mlir::Value tid = b.create<mlir::gpu::ThreadIdOp>(loc, mlir::gpu::Dimension::x);
  mlir::Value e = b.create<mlir::gpu::BlockIdOp>(loc, mlir::gpu::Dimension::x);
  mlir::Value expert = toI32(b, e);
  mlir::Value first = b.create<ar::MinUIOp>(
      loc, b.create<ar::MulIOp>(loc, tid, cst.index(b, segment)), cst.index(b, n));
  mlir::Value end = b.create<ar::MinUIOp>(loc, b.create<ar::AddIOp>(loc, first, cst.index(b, segment)), cst.index(b, n));
  // Choice q is (t, j) = (q mod T, q div T): the priority order, ranks outer.
  auto choiceAt = [&](mlir::OpBuilder &bb, mlir::Value q) {
    return llvm::SmallVector<mlir::Value>{bb.create<ar::RemUIOp>(loc, q, cst.index(bb, tokens)),
                                          bb.create<ar::DivUIOp>(loc, q, cst.index(bb, tokens))};
  };
  auto isHit = [&](mlir::OpBuilder &bb, mlir::Value name) -> mlir::Value {
    return bb.create<ar::CmpIOp>(loc, ar::CmpIPredicate::eq, name, expert);
  };
  auto widen = [&](mlir::OpBuilder &bb, mlir::Value flag) -> mlir::Value {
    return bb.create<ar::ExtUIOp>(loc, i32, flag);
  };

  // 1. This thread's choices of e.
  auto counted = b.create<mlir::scf::ForOp>(
      loc, first, end, cst.index(b, 1), mlir::ValueRange{cst.i32(b, 0)},
      [&](mlir::OpBuilder &lb, mlir::Location, mlir::Value q, mlir::ValueRange acc) {
        mlir::Value name = lb.create<mlir::memref::LoadOp>(loc, named, choiceAt(lb, q));
        lb.create<mlir::scf::YieldOp>(
            loc, mlir::ValueRange{lb.create<ar::AddIOp>(loc, acc[0], widen(lb, isHit(lb, name)))});
      });
  mlir::Value mine = counted.getResult(0);

  // 2. The block's prefix of the counts, and its total.
  BlockSums sums = blockScan(b, loc, fn, tid, {mine});
  mlir::Value prefix = sums.before[0], total = sums.total[0];

  // 3. The segment again: slots and choices of its hits, from the prefix.
  mlir::Value expertZero = b.create<ar::CmpIOp>(loc, ar::CmpIPredicate::eq, expert, cst.i32(b, 0));
  b.create<mlir::scf::ForOp>(
      loc, first, end, cst.index(b, 1), mlir::ValueRange{prefix},
      [&](mlir::OpBuilder &lb, mlir::Location, mlir::Value q, mlir::ValueRange acc) {
        auto at = choiceAt(lb, q);
        mlir::Value name = lb.create<mlir::memref::LoadOp>(loc, named, at);
        mlir::Value hit = isHit(lb, name);
        mlir::Value rank = acc[0];
        // Unsigned compares and clamps: a count is never negative, and a broken scan (the
        // lit test's control without the barrier) then writes wrong numbers, never outside.
        mlir::Value fits = lb.create<ar::CmpIOp>(loc, ar::CmpIPredicate::ult, rank, cst.i32(lb, capacity));
        mlir::Value take = lb.create<ar::AndIOp>(loc, hit, fits);
        mlir::Value slot = lb.create<ar::SelectOp>(
            loc, take,
            lb.create<ar::AddIOp>(loc, lb.create<ar::MulIOp>(loc, expert, cst.i32(lb, capacity)), rank),
            cst.i32(lb, -1));
        mlir::Value none = lb.create<ar::OrIOp>(
            loc, lb.create<ar::CmpIOp>(loc, ar::CmpIPredicate::slt, name, cst.i32(lb, 0)),
            lb.create<ar::CmpIOp>(loc, ar::CmpIPredicate::sge, name, cst.i32(lb, *experts)));
        mlir::Value writeSlot = lb.create<ar::OrIOp>(loc, hit, lb.create<ar::AndIOp>(loc, none, expertZero));
        lb.create<mlir::scf::IfOp>(loc, writeSlot, [&](mlir::OpBuilder &ib, mlir::Location) {
          ib.create<mlir::memref::StoreOp>(loc, slot, slots, at);
          ib.create<mlir::scf::YieldOp>(loc);
        });
        lb.create<mlir::scf::IfOp>(loc, take, [&](mlir::OpBuilder &ib, mlir::Location) {
          mlir::Value choice = ib.create<ar::AddIOp>(
              loc, ib.create<ar::MulIOp>(loc, toI32(ib, at[0]), cst.i32(ib, k)), toI32(ib, at[1]));
          mlir::Value column = ib.create<ar::IndexCastOp>(loc, ib.getIndexType(), rank);
          ib.create<mlir::memref::StoreOp>(loc, choice, choices, mlir::ValueRange{e, column});
          ib.create<mlir::scf::YieldOp>(loc);
        });
        lb.create<mlir::scf::YieldOp>(
            loc, mlir::ValueRange{lb.create<ar::AddIOp>(loc, rank, widen(lb, hit))});
      });

  // 4. Row e of the choices past the expert's count: −1.
  mlir::Value filled = b.create<ar::IndexCastOp>(
      loc, b.getIndexType(), b.create<ar::MinUIOp>(loc, total, cst.i32(b, capacity)));
  mlir::Value from = b.create<ar::AddIOp>(loc, filled, tid);
  b.create<mlir::scf::ForOp>(loc, from, cst.index(b, capacity), cst.index(b, kThreads), mlir::ValueRange{},
                             [&](mlir::OpBuilder &lb, mlir::Location, mlir::Value p, mlir::ValueRange) {
                               lb.create<mlir::memref::StoreOp>(loc, cst.i32(lb, -1), choices,
                                                                mlir::ValueRange{e, p});
                               lb.create<mlir::scf::YieldOp>(loc);
                             });
  outer.erase();
  return std::optional<BlockScanLaunch>(BlockScanLaunch{*experts, kThreads});
}

mlir::FailureOr<std::optional<BlockScanLaunch>> mapBlockRouteExperts(mlir::gpu::GPUFuncOp fn) {
  mlir::scf::ForOp outer;
  for (mlir::Operation &op : fn.getBody().front())
    if (auto f = llvm::dyn_cast<mlir::scf::ForOp>(op); f && f->hasAttr("step.block_route_experts"))
      outer = f;
  if (!outer) return std::optional<BlockScanLaunch>();
  auto fail = [&](const char *what) -> mlir::FailureOr<std::optional<BlockScanLaunch>> {
    outer.emitError() << "step.block_route_experts: " << what
                      << " (RoutingPatterns.cpp's expert choice loop nest, block form, expected)";
    return mlir::failure();
  };
  // The take: the loop of the experts' loop that writes four buffers (the choice, the slot,
  // the expert, the token's count, in that order) and reads the scores.
  mlir::Value scores, choices, slots, chosen, taken;
  for (auto loop : outer.getBody()->getOps<mlir::scf::ForOp>()) {
    llvm::SmallVector<mlir::Value> stored;
    mlir::Value read;
    for (mlir::Operation &op : loop.getBody()->without_terminator()) {
      if (auto store = llvm::dyn_cast<mlir::memref::StoreOp>(op)) stored.push_back(store.getMemRef());
      if (auto load = llvm::dyn_cast<mlir::memref::LoadOp>(op);
          load && load.getMemRefType().getElementType().isF32())
        read = load.getMemRef();
    }
    if (stored.size() == 4 && read) {
      choices = stored[0], slots = stored[1], chosen = stored[2], taken = stored[3], scores = read;
      break;
    }
  }
  if (!taken) return fail("no take over the tokens");
  auto type = [](mlir::Value v) { return llvm::cast<mlir::MemRefType>(v.getType()); };
  std::optional<int64_t> experts = tripCount(outer);
  if (type(taken).getRank() != 1 || type(choices).getRank() != 2 || type(slots).getRank() != 2 ||
      type(scores).getRank() != 2 || type(slots) != type(chosen) || !experts ||
      type(choices).getDimSize(0) != *experts || type(scores).getDimSize(1) != *experts ||
      type(scores).getDimSize(0) != type(taken).getDimSize(0) ||
      type(slots).getDimSize(0) != type(taken).getDimSize(0))
    return fail("its buffers are not scores [T, E], counts [T], choices [E, C], slots and experts [T, k]");
  for (mlir::Value v : {scores, choices, slots, chosen, taken})
    if (!outside(v, outer)) return fail("a buffer is defined inside the loop");
  const int64_t tokens = type(taken).getDimSize(0), k = type(slots).getDimSize(1);
  const int64_t capacity = type(choices).getDimSize(1);
  const int64_t segment = (tokens + kThreads - 1) / kThreads;

  mlir::Location loc = outer.getLoc();
  mlir::OpBuilder b(outer);
  mlir::Type i32 = b.getI32Type();
  Constants cst{loc};
  auto cmp = [&](mlir::OpBuilder &bb, ar::CmpIPredicate p, mlir::Value x, mlir::Value y) -> mlir::Value {
    return bb.create<ar::CmpIOp>(loc, p, x, y);
  };
  auto store = [&](mlir::OpBuilder &bb, mlir::Value v, mlir::Value to, mlir::ValueRange at) {
    bb.create<mlir::memref::StoreOp>(loc, v, to, at);
  };
  auto when = [&](mlir::OpBuilder &bb, mlir::Value condition,
                  llvm::function_ref<void(mlir::OpBuilder &)> then) {
    bb.create<mlir::scf::IfOp>(loc, condition, [&](mlir::OpBuilder &ib, mlir::Location) {
      then(ib);
      ib.create<mlir::scf::YieldOp>(loc);
    });
  };
  auto widen = [&](mlir::OpBuilder &bb, mlir::Value flag) -> mlir::Value {
    return bb.create<ar::ExtUIOp>(loc, i32, flag);
  };
  mlir::Value tid = b.create<mlir::gpu::ThreadIdOp>(loc, mlir::gpu::Dimension::x);
  mlir::Value first = b.create<ar::MinUIOp>(loc, b.create<ar::MulIOp>(loc, tid, cst.index(b, segment)),
                                            cst.index(b, tokens));
  mlir::Value end =
      b.create<ar::MinUIOp>(loc, b.create<ar::AddIOp>(loc, first, cst.index(b, segment)), cst.index(b, tokens));
  // Each thread owns the tokens of its segment: their counts, slots and experts are read and
  // written by it alone, so the experts in turn need no barrier for them.
  b.create<mlir::scf::ForOp>(
      loc, first, end, cst.index(b, 1), mlir::ValueRange{},
      [&](mlir::OpBuilder &lb, mlir::Location, mlir::Value t, mlir::ValueRange) {
        store(lb, cst.i32(lb, 0), taken, {t});
        for (int64_t j = 0; j < k; ++j) {
          store(lb, cst.i32(lb, -1), slots, {t, cst.index(lb, j)});
          store(lb, cst.i32(lb, -1), chosen, {t, cst.index(lb, j)});
        }
        lb.create<mlir::scf::YieldOp>(loc);
      });
  auto space = mlir::gpu::AddressSpaceAttr::get(b.getContext(), mlir::gpu::AddressSpace::Workgroup);
  mlir::Value histogram =
      fn.addWorkgroupAttribution(mlir::MemRefType::get({256}, i32, mlir::AffineMap(), space), loc);
  mlir::Value chosenBin =
      fn.addWorkgroupAttribution(mlir::MemRefType::get({2}, i32, mlir::AffineMap(), space), loc);

  b.create<mlir::scf::ForOp>(
      loc, cst.index(b, 0), cst.index(b, *experts), cst.index(b, 1), mlir::ValueRange{},
      [&](mlir::OpBuilder &eb, mlir::Location, mlir::Value e, mlir::ValueRange) {
        mlir::Value expert = eb.create<ar::IndexCastOp>(loc, i32, e);
        // Token t's key (RoutingScalars.h's: the bits, the negative ones' magnitude flipped,
        // signed order) and its unsigned form (the sign bit flipped), whether it may still
        // take an expert, and its count.
        struct Token {
          mlir::Value key, bits, eligible, count;
        };
        auto token = [&](mlir::OpBuilder &bb, mlir::Value t) {
          mlir::Value score = bb.create<mlir::memref::LoadOp>(loc, scores, mlir::ValueRange{t, e});
          mlir::Value raw = bb.create<ar::BitcastOp>(loc, i32, score);
          mlir::Value flipped = bb.create<ar::XOrIOp>(loc, raw, cst.i32(bb, 0x7fffffff));
          Token tk;
          tk.key = bb.create<ar::SelectOp>(loc, cmp(bb, ar::CmpIPredicate::slt, raw, cst.i32(bb, 0)),
                                           flipped, raw);
          tk.bits = bb.create<ar::XOrIOp>(loc, tk.key, cst.i32(bb, INT32_MIN));
          tk.count = bb.create<mlir::memref::LoadOp>(loc, taken, mlir::ValueRange{t});
          tk.eligible = cmp(bb, ar::CmpIPredicate::slt, tk.count, cst.i32(bb, k));
          return tk;
        };
        // 1. The C-th largest eligible key, a byte a round from the top: each round counts
        //    the eligible keys that share the bytes found so far by their next byte, and
        //    takes the bin where the count from the top reaches what is still needed.
        mlir::Value prefix = cst.i32(eb, 0), need = cst.i32(eb, capacity), above = cst.i32(eb, 0);
        mlir::Value found = eb.create<ar::ConstantIntOp>(loc, 1, 1);
        for (int round = 0; round < 4; ++round) {
          int64_t shift = 24 - 8 * round;
          eb.create<mlir::gpu::BarrierOp>(loc);  // the last round's readers are done
          when(eb, cmp(eb, ar::CmpIPredicate::ult, tid, cst.index(eb, 256)), [&](mlir::OpBuilder &ib) {
            store(ib, cst.i32(ib, 0), histogram, {tid});
          });
          when(eb, cmp(eb, ar::CmpIPredicate::eq, tid, cst.index(eb, 0)), [&](mlir::OpBuilder &ib) {
            store(ib, cst.i32(ib, -1), chosenBin, {cst.index(ib, 0)});
          });
          eb.create<mlir::gpu::BarrierOp>(loc);
          mlir::Value known = prefix;
          eb.create<mlir::scf::ForOp>(
              loc, first, end, cst.index(eb, 1), mlir::ValueRange{},
              [&](mlir::OpBuilder &lb, mlir::Location, mlir::Value t, mlir::ValueRange) {
                Token tk = token(lb, t);
                mlir::Value counts = tk.eligible;
                if (round > 0) {
                  mlir::Value high = lb.create<ar::ShRUIOp>(loc, tk.bits, cst.i32(lb, shift + 8));
                  counts = lb.create<ar::AndIOp>(loc, counts, cmp(lb, ar::CmpIPredicate::eq, high, known));
                }
                when(lb, counts, [&](mlir::OpBuilder &ib) {
                  mlir::Value bin = ib.create<ar::AndIOp>(
                      loc, ib.create<ar::ShRUIOp>(loc, tk.bits, cst.i32(ib, shift)), cst.i32(ib, 255));
                  ib.create<mlir::memref::AtomicRMWOp>(
                      loc, ar::AtomicRMWKind::addi, cst.i32(ib, 1), histogram,
                      mlir::ValueRange{ib.create<ar::IndexCastOp>(loc, ib.getIndexType(), bin)});
                });
                lb.create<mlir::scf::YieldOp>(loc);
              });
          eb.create<mlir::gpu::BarrierOp>(loc);
          // Thread i < 256 holds bin 255 - i: the prefix sums over the threads are the counts
          // from the top.
          mlir::Value mine = cmp(eb, ar::CmpIPredicate::ult, tid, cst.index(eb, 256));
          mlir::Value binIndex = eb.create<ar::SelectOp>(
              loc, mine, eb.create<ar::SubIOp>(loc, cst.index(eb, 255), eb.create<ar::MinUIOp>(loc, tid, cst.index(eb, 255))),
              cst.index(eb, 0));
          mlir::Value held = eb.create<ar::SelectOp>(
              loc, mine, eb.create<mlir::memref::LoadOp>(loc, histogram, mlir::ValueRange{binIndex}),
              cst.i32(eb, 0));
          BlockSums sums = blockScan(eb, loc, fn, tid, {held});
          mlir::Value higher = sums.before[0];
          mlir::Value atOrHigher = eb.create<ar::AddIOp>(loc, higher, held);
          mlir::Value here = eb.create<ar::AndIOp>(
              loc, mine,
              eb.create<ar::AndIOp>(loc, cmp(eb, ar::CmpIPredicate::slt, higher, need),
                                    cmp(eb, ar::CmpIPredicate::sle, need, atOrHigher)));
          when(eb, here, [&](mlir::OpBuilder &ib) {
            store(ib, ib.create<ar::IndexCastOp>(loc, i32, binIndex), chosenBin, {cst.index(ib, 0)});
            store(ib, higher, chosenBin, {cst.index(ib, 1)});
          });
          eb.create<mlir::gpu::BarrierOp>(loc);
          mlir::Value bin = eb.create<mlir::memref::LoadOp>(loc, chosenBin, mlir::ValueRange{cst.index(eb, 0)});
          mlir::Value skipped = eb.create<mlir::memref::LoadOp>(loc, chosenBin, mlir::ValueRange{cst.index(eb, 1)});
          mlir::Value ok = cmp(eb, ar::CmpIPredicate::sge, bin, cst.i32(eb, 0));
          found = eb.create<ar::AndIOp>(loc, found, ok);
          prefix = eb.create<ar::SelectOp>(
              loc, ok, eb.create<ar::OrIOp>(loc, eb.create<ar::ShLIOp>(loc, prefix, cst.i32(eb, 8)), bin),
              prefix);
          need = eb.create<ar::SelectOp>(loc, ok, eb.create<ar::SubIOp>(loc, need, skipped), need);
          above = eb.create<ar::SelectOp>(loc, ok, eb.create<ar::AddIOp>(loc, above, skipped), above);
        }
        // 2. θ = that key: every eligible token above it is taken, and the first `need` at it
        //    in token order. With fewer than C eligible tokens (no bin found), all of them.
        mlir::Value theta = eb.create<ar::XOrIOp>(loc, prefix, cst.i32(eb, INT32_MIN));
        auto classify = [&](mlir::OpBuilder &bb, const Token &tk) {
          mlir::Value over = bb.create<ar::SelectOp>(
              loc, found, cmp(bb, ar::CmpIPredicate::sgt, tk.key, theta),
              bb.create<ar::ConstantIntOp>(loc, 1, 1));
          mlir::Value tie = bb.create<ar::AndIOp>(loc, found, cmp(bb, ar::CmpIPredicate::eq, tk.key, theta));
          return std::pair<mlir::Value, mlir::Value>{
              bb.create<ar::AndIOp>(loc, tk.eligible, over), bb.create<ar::AndIOp>(loc, tk.eligible, tie)};
        };
        auto counted = eb.create<mlir::scf::ForOp>(
            loc, first, end, cst.index(eb, 1), mlir::ValueRange{cst.i32(eb, 0), cst.i32(eb, 0)},
            [&](mlir::OpBuilder &lb, mlir::Location, mlir::Value t, mlir::ValueRange acc) {
              auto [over, tie] = classify(lb, token(lb, t));
              lb.create<mlir::scf::YieldOp>(
                  loc, mlir::ValueRange{lb.create<ar::AddIOp>(loc, acc[0], widen(lb, over)),
                                        lb.create<ar::AddIOp>(loc, acc[1], widen(lb, tie))});
            });
        BlockSums sums = blockScan(eb, loc, fn, tid, {counted.getResult(0), counted.getResult(1)});
        mlir::Value start = eb.create<ar::AddIOp>(loc, sums.before[0],
                                                  eb.create<ar::MinSIOp>(loc, sums.before[1], need));
        mlir::Value total = eb.create<ar::AddIOp>(loc, sums.total[0],
                                                  eb.create<ar::MinSIOp>(loc, sums.total[1], need));
        // 3. The segment's takes: slot e·C + position, the expert, the choice t·k + j at the
        //    token's next rank j, and its count.
        eb.create<mlir::scf::ForOp>(
            loc, first, end, cst.index(eb, 1), mlir::ValueRange{start, sums.before[1]},
            [&](mlir::OpBuilder &lb, mlir::Location, mlir::Value t, mlir::ValueRange acc) {
              Token tk = token(lb, t);
              auto [over, tie] = classify(lb, tk);
              mlir::Value position = acc[0], ties = acc[1];
              mlir::Value take = lb.create<ar::OrIOp>(
                  loc, over, lb.create<ar::AndIOp>(loc, tie, cmp(lb, ar::CmpIPredicate::slt, ties, need)));
              // Unsigned: a broken count (the lit test's control) writes wrong numbers, never
              // outside the buffers.
              take = lb.create<ar::AndIOp>(loc, take,
                                           cmp(lb, ar::CmpIPredicate::ult, position, cst.i32(lb, capacity)));
              when(lb, take, [&](mlir::OpBuilder &ib) {
                mlir::Value j = ib.create<ar::IndexCastOp>(loc, ib.getIndexType(), tk.count);
                mlir::Value slot = ib.create<ar::AddIOp>(
                    loc, ib.create<ar::MulIOp>(loc, expert, cst.i32(ib, capacity)), position);
                store(ib, slot, slots, {t, j});
                store(ib, expert, chosen, {t, j});
                mlir::Value choice = ib.create<ar::AddIOp>(
                    loc, ib.create<ar::MulIOp>(loc, ib.create<ar::IndexCastOp>(loc, i32, t), cst.i32(ib, k)),
                    tk.count);
                store(ib, choice, choices,
                      {e, ib.create<ar::IndexCastOp>(loc, ib.getIndexType(), position)});
                store(ib, ib.create<ar::AddIOp>(loc, tk.count, cst.i32(ib, 1)), taken, {t});
              });
              lb.create<mlir::scf::YieldOp>(
                  loc, mlir::ValueRange{lb.create<ar::AddIOp>(loc, position, widen(lb, take)),
                                        lb.create<ar::AddIOp>(loc, ties, widen(lb, tie))});
            });
        // 4. The expert's row past its takes: −1.
        mlir::Value filled = eb.create<ar::IndexCastOp>(
            loc, eb.getIndexType(), eb.create<ar::MinUIOp>(loc, total, cst.i32(eb, capacity)));
        eb.create<mlir::scf::ForOp>(
            loc, eb.create<ar::AddIOp>(loc, filled, tid), cst.index(eb, capacity), cst.index(eb, kThreads),
            mlir::ValueRange{}, [&](mlir::OpBuilder &lb, mlir::Location, mlir::Value p, mlir::ValueRange) {
              store(lb, cst.i32(lb, -1), choices, {e, p});
              lb.create<mlir::scf::YieldOp>(loc);
            });
        eb.create<mlir::scf::YieldOp>(loc);
      });
  outer.erase();
  return std::optional<BlockScanLaunch>(BlockScanLaunch{1, kThreads});
}

}  // namespace stepc::codegen
