//===- BlockRoute.cpp - token choice's routing, a GPU block per expert ----===//
//
// See BlockRoute.h. The shuffles and the barrier are at the kernel's top level, reached by
// every thread (threads past the choices take part with a count of 0), as full-warp shuffles
// and block barriers require.
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

// A memref the block's code may use in place of the loop's: defined before the loop.
bool outside(mlir::Value v, mlir::scf::ForOp loop) {
  mlir::Operation *def = v.getDefiningOp();
  return def ? !loop->isAncestor(def) : !loop->isAncestor(v.getParentBlock()->getParentOp());
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
  auto c = [&](mlir::OpBuilder &bb, int64_t v) -> mlir::Value {
    return bb.create<ar::ConstantIndexOp>(loc, v);
  };
  auto ci = [&](mlir::OpBuilder &bb, int64_t v) -> mlir::Value {
    return bb.create<ar::ConstantIntOp>(loc, v, 32);
  };
  auto toI32 = [&](mlir::OpBuilder &bb, mlir::Value v) -> mlir::Value {
    return bb.create<ar::IndexCastOp>(loc, i32, v);
  };
  mlir::Value tid = b.create<mlir::gpu::ThreadIdOp>(loc, mlir::gpu::Dimension::x);
  mlir::Value e = b.create<mlir::gpu::BlockIdOp>(loc, mlir::gpu::Dimension::x);
  mlir::Value expert = toI32(b, e);
  mlir::Value lane = b.create<ar::RemUIOp>(loc, tid, c(b, kWarp));
  mlir::Value warp = b.create<ar::DivUIOp>(loc, tid, c(b, kWarp));
  mlir::Value first = b.create<ar::MinUIOp>(
      loc, b.create<ar::MulIOp>(loc, tid, c(b, segment)), c(b, n));
  mlir::Value end = b.create<ar::MinUIOp>(loc, b.create<ar::AddIOp>(loc, first, c(b, segment)), c(b, n));
  // Choice q is (t, j) = (q mod T, q div T): the priority order, ranks outer.
  auto choiceAt = [&](mlir::OpBuilder &bb, mlir::Value q) {
    return llvm::SmallVector<mlir::Value>{bb.create<ar::RemUIOp>(loc, q, c(bb, tokens)),
                                          bb.create<ar::DivUIOp>(loc, q, c(bb, tokens))};
  };
  auto isHit = [&](mlir::OpBuilder &bb, mlir::Value name) -> mlir::Value {
    return bb.create<ar::CmpIOp>(loc, ar::CmpIPredicate::eq, name, expert);
  };
  auto widen = [&](mlir::OpBuilder &bb, mlir::Value flag) -> mlir::Value {
    return bb.create<ar::ExtUIOp>(loc, i32, flag);
  };

  // 1. This thread's choices of e.
  auto counted = b.create<mlir::scf::ForOp>(
      loc, first, end, c(b, 1), mlir::ValueRange{ci(b, 0)},
      [&](mlir::OpBuilder &lb, mlir::Location, mlir::Value q, mlir::ValueRange acc) {
        mlir::Value name = lb.create<mlir::memref::LoadOp>(loc, named, choiceAt(lb, q));
        lb.create<mlir::scf::YieldOp>(
            loc, mlir::ValueRange{lb.create<ar::AddIOp>(loc, acc[0], widen(lb, isHit(lb, name)))});
      });
  mlir::Value mine = counted.getResult(0);

  // 2. Inclusive scans within warps: this thread's, then (every warp alike) the warps' totals.
  auto warpScan = [&](mlir::Value value) {
    for (int offset = 1; offset < kWarp; offset <<= 1) {
      auto up = b.create<mlir::gpu::ShuffleOp>(loc, value, offset, kWarp, mlir::gpu::ShuffleMode::UP);
      mlir::Value sum = b.create<ar::AddIOp>(loc, up.getShuffleResult(), value);
      value = b.create<ar::SelectOp>(loc, up.getValid(), sum, value);
    }
    return value;
  };
  mlir::Value inclusive = warpScan(mine);
  auto space = mlir::gpu::AddressSpaceAttr::get(b.getContext(), mlir::gpu::AddressSpace::Workgroup);
  mlir::Value totals =
      fn.addWorkgroupAttribution(mlir::MemRefType::get({kWarp}, i32, mlir::AffineMap(), space), loc);
  mlir::Value lastLane = b.create<ar::CmpIOp>(loc, ar::CmpIPredicate::eq, lane, c(b, kWarp - 1));
  b.create<mlir::scf::IfOp>(loc, lastLane, [&](mlir::OpBuilder &ib, mlir::Location) {
    ib.create<mlir::memref::StoreOp>(loc, inclusive, totals, mlir::ValueRange{warp});
    ib.create<mlir::scf::YieldOp>(loc);
  });
  b.create<mlir::gpu::BarrierOp>(loc);
  mlir::Value warps = warpScan(b.create<mlir::memref::LoadOp>(loc, totals, mlir::ValueRange{lane}));
  mlir::Value width = ci(b, kWarp);
  mlir::Value previous = toI32(b, b.create<ar::SubIOp>(loc, b.create<ar::MaxUIOp>(loc, warp, c(b, 1)),
                                                      c(b, 1)));
  auto before = b.create<mlir::gpu::ShuffleOp>(loc, warps, previous, width, mlir::gpu::ShuffleMode::IDX);
  mlir::Value firstWarp = b.create<ar::CmpIOp>(loc, ar::CmpIPredicate::eq, warp, c(b, 0));
  mlir::Value warpPrefix = b.create<ar::SelectOp>(loc, firstWarp, ci(b, 0), before.getShuffleResult());
  mlir::Value total = b.create<mlir::gpu::ShuffleOp>(loc, warps, ci(b, kWarp - 1), width,
                                                     mlir::gpu::ShuffleMode::IDX)
                          .getShuffleResult();
  mlir::Value prefix = b.create<ar::AddIOp>(loc, warpPrefix, b.create<ar::SubIOp>(loc, inclusive, mine));

  // 3. The segment again: slots and choices of its hits, from the prefix.
  mlir::Value expertZero = b.create<ar::CmpIOp>(loc, ar::CmpIPredicate::eq, expert, ci(b, 0));
  b.create<mlir::scf::ForOp>(
      loc, first, end, c(b, 1), mlir::ValueRange{prefix},
      [&](mlir::OpBuilder &lb, mlir::Location, mlir::Value q, mlir::ValueRange acc) {
        auto at = choiceAt(lb, q);
        mlir::Value name = lb.create<mlir::memref::LoadOp>(loc, named, at);
        mlir::Value hit = isHit(lb, name);
        mlir::Value rank = acc[0];
        // Unsigned compares and clamps: a count is never negative, and a broken scan (the
        // lit test's control without the barrier) then writes wrong numbers, never outside.
        mlir::Value fits = lb.create<ar::CmpIOp>(loc, ar::CmpIPredicate::ult, rank, ci(lb, capacity));
        mlir::Value take = lb.create<ar::AndIOp>(loc, hit, fits);
        mlir::Value slot = lb.create<ar::SelectOp>(
            loc, take,
            lb.create<ar::AddIOp>(loc, lb.create<ar::MulIOp>(loc, expert, ci(lb, capacity)), rank),
            ci(lb, -1));
        mlir::Value none = lb.create<ar::OrIOp>(
            loc, lb.create<ar::CmpIOp>(loc, ar::CmpIPredicate::slt, name, ci(lb, 0)),
            lb.create<ar::CmpIOp>(loc, ar::CmpIPredicate::sge, name, ci(lb, *experts)));
        mlir::Value writeSlot = lb.create<ar::OrIOp>(loc, hit, lb.create<ar::AndIOp>(loc, none, expertZero));
        lb.create<mlir::scf::IfOp>(loc, writeSlot, [&](mlir::OpBuilder &ib, mlir::Location) {
          ib.create<mlir::memref::StoreOp>(loc, slot, slots, at);
          ib.create<mlir::scf::YieldOp>(loc);
        });
        lb.create<mlir::scf::IfOp>(loc, take, [&](mlir::OpBuilder &ib, mlir::Location) {
          mlir::Value choice = ib.create<ar::AddIOp>(
              loc, ib.create<ar::MulIOp>(loc, toI32(ib, at[0]), ci(ib, k)), toI32(ib, at[1]));
          mlir::Value column = ib.create<ar::IndexCastOp>(loc, ib.getIndexType(), rank);
          ib.create<mlir::memref::StoreOp>(loc, choice, choices, mlir::ValueRange{e, column});
          ib.create<mlir::scf::YieldOp>(loc);
        });
        lb.create<mlir::scf::YieldOp>(
            loc, mlir::ValueRange{lb.create<ar::AddIOp>(loc, rank, widen(lb, hit))});
      });

  // 4. Row e of the choices past the expert's count: −1.
  mlir::Value filled = b.create<ar::IndexCastOp>(
      loc, b.getIndexType(), b.create<ar::MinUIOp>(loc, total, ci(b, capacity)));
  mlir::Value from = b.create<ar::AddIOp>(loc, filled, tid);
  b.create<mlir::scf::ForOp>(loc, from, c(b, capacity), c(b, kThreads), mlir::ValueRange{},
                             [&](mlir::OpBuilder &lb, mlir::Location, mlir::Value p, mlir::ValueRange) {
                               lb.create<mlir::memref::StoreOp>(loc, ci(lb, -1), choices,
                                                                mlir::ValueRange{e, p});
                               lb.create<mlir::scf::YieldOp>(loc);
                             });
  outer.erase();
  return std::optional<BlockScanLaunch>(BlockScanLaunch{*experts, kThreads});
}

}  // namespace stepc::codegen
