//===- BlockScan.cpp - a cumsum's scan shared by a GPU block's warps ------===//
//
// See BlockScan.h. The shuffles and barriers are at the kernel's top level, reached by every
// thread (inactive columns and empty segments take part with neutral values), as the
// full-warp shuffles and the block barriers require.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/LLVMGPU/BlockScan.h"

#include "compiler/Codegen/LLVMGPU/BlockReduction.h"
#include "compiler/Codegen/Common/Delinearize.h"
#include "compiler/Codegen/Common/ScanLoop.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace stepc::codegen {

namespace {

namespace ar = mlir::arith;
constexpr int64_t kWarp = 32;

// a + b in the scan's element type: f32, or i32 (an MoE routing's counts, exact in any order).
mlir::Value add(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lhs, mlir::Value rhs) {
  if (llvm::isa<mlir::FloatType>(lhs.getType())) return b.create<ar::AddFOp>(loc, lhs, rhs);
  return b.create<ar::AddIOp>(loc, lhs, rhs);
}

}  // namespace

std::optional<BlockScanLaunch> mapBlockScan(mlir::gpu::GPUFuncOp fn) {
  mlir::scf::ForOp loop;
  for (mlir::Operation &op : fn.getBody().front())
    if (auto f = llvm::dyn_cast<mlir::scf::ForOp>(op); f && f->hasAttr("step.scan")) loop = f;
  if (!loop) return std::nullopt;
  auto scan = matchScanLoop(loop);
  if (!scan) return std::nullopt;

  mlir::Location loc = loop.getLoc();
  mlir::OpBuilder b(loop);
  mlir::Type element = scan->element;
  auto c = [&](int64_t v) -> mlir::Value { return b.create<ar::ConstantIndexOp>(loc, v); };
  int64_t columns = 1;
  for (int64_t d : scan->shape) columns *= d;
  int64_t segment = (scan->length + kWarp - 1) / kWarp;
  auto space = mlir::gpu::AddressSpaceAttr::get(b.getContext(), mlir::gpu::AddressSpace::Workgroup);
  // [segment][column], a row padded to 33 so that phase 2 (a warp reading a column) does not
  // hit one bank 32 times.
  mlir::Value totals = fn.addWorkgroupAttribution(
      mlir::MemRefType::get({kWarp, kWarp + 1}, element, mlir::AffineMap(), space), loc);
  mlir::Value neutral =
      llvm::isa<mlir::FloatType>(element)
          ? reductionIdentity(b, loc, mlir::gpu::AllReduceOperation::ADD, element)
          : b.create<ar::ConstantOp>(loc, b.getIntegerAttr(element, 0)).getResult();
  mlir::Value tid = b.create<mlir::gpu::ThreadIdOp>(loc, mlir::gpu::Dimension::x);
  mlir::Value bid = b.create<mlir::gpu::BlockIdOp>(loc, mlir::gpu::Dimension::x);
  mlir::Value lane = b.create<ar::RemUIOp>(loc, tid, c(kWarp));
  mlir::Value warp = b.create<ar::DivUIOp>(loc, tid, c(kWarp));
  mlir::Value tile = b.create<ar::MulIOp>(loc, bid, c(kWarp));
  mlir::Value first = b.create<ar::MulIOp>(loc, warp, c(segment));
  mlir::Value end = b.create<ar::MinUIOp>(loc, b.create<ar::AddIOp>(loc, first, c(segment)),
                                          c(scan->length));
  mlir::Value column = b.create<ar::AddIOp>(loc, tile, lane);
  mlir::Value active = b.create<ar::CmpIOp>(loc, ar::CmpIPredicate::ult, column, c(columns));

  llvm::SmallVector<int64_t> zeros(scan->shape.size(), 0), ones(scan->shape.size(), 1);
  // The column's indices into the state, and into x / y at scan step `s`.
  auto columnIndices = [&](mlir::OpBuilder &bb, mlir::Value col) {
    return delinearize(bb, loc, col, scan->shape, zeros, ones);
  };
  auto at = [&](mlir::OpBuilder &bb, llvm::SmallVector<mlir::Value> indices, mlir::Value s) {
    if (scan->reverse)
      s = bb.create<ar::SubIOp>(loc, bb.create<ar::ConstantIndexOp>(loc, scan->length - 1), s);
    indices[scan->axis] = s;
    return indices;
  };

  // 1. The segment's total.
  auto partial = b.create<mlir::scf::IfOp>(
      loc, active,
      [&](mlir::OpBuilder &bb, mlir::Location l) {
        auto indices = columnIndices(bb, column);
        auto sum = bb.create<mlir::scf::ForOp>(
            l, first, end, bb.create<ar::ConstantIndexOp>(l, 1), mlir::ValueRange{neutral},
            [&](mlir::OpBuilder &lb, mlir::Location ll, mlir::Value s, mlir::ValueRange acc) {
              mlir::Value x = lb.create<mlir::memref::LoadOp>(ll, scan->x, at(lb, indices, s));
              lb.create<mlir::scf::YieldOp>(ll, add(lb, ll, acc[0], x));
            });
        bb.create<mlir::scf::YieldOp>(l, sum.getResults());
      },
      [&](mlir::OpBuilder &bb, mlir::Location l) { bb.create<mlir::scf::YieldOp>(l, neutral); });
  b.create<mlir::memref::StoreOp>(loc, partial.getResult(0), totals, mlir::ValueRange{warp, lane});
  b.create<mlir::gpu::BarrierOp>(loc);

  // 2. Warp w scans column w's segment totals (lane l holds segment l's), lane 0 starting
  //    from the column's running sum.
  mlir::Value warpColumn = b.create<ar::AddIOp>(loc, tile, warp);
  mlir::Value leads = b.create<ar::AndIOp>(
      loc, b.create<ar::CmpIOp>(loc, ar::CmpIPredicate::ult, warpColumn, c(columns)),
      b.create<ar::CmpIOp>(loc, ar::CmpIPredicate::eq, lane, c(0)));
  auto init = b.create<mlir::scf::IfOp>(
      loc, leads,
      [&](mlir::OpBuilder &bb, mlir::Location l) {
        mlir::Value v = bb.create<mlir::memref::LoadOp>(l, scan->state, columnIndices(bb, warpColumn));
        bb.create<mlir::scf::YieldOp>(l, v);
      },
      [&](mlir::OpBuilder &bb, mlir::Location l) { bb.create<mlir::scf::YieldOp>(l, neutral); });
  mlir::Value own = b.create<mlir::memref::LoadOp>(loc, totals, mlir::ValueRange{lane, warp});
  mlir::Value value = add(b, loc, init.getResult(0), own);
  for (int offset = 1; offset < kWarp; offset <<= 1) {
    auto up = b.create<mlir::gpu::ShuffleOp>(loc, value, offset, kWarp, mlir::gpu::ShuffleMode::UP);
    mlir::Value sum = add(b, loc, up.getShuffleResult(), value);
    value = b.create<ar::SelectOp>(loc, up.getValid(), sum, value);
  }
  auto before = b.create<mlir::gpu::ShuffleOp>(loc, value, 1, kWarp, mlir::gpu::ShuffleMode::UP);
  mlir::Value prefix =
      b.create<ar::SelectOp>(loc, before.getValid(), before.getShuffleResult(), init.getResult(0));
  b.create<mlir::memref::StoreOp>(loc, prefix, totals, mlir::ValueRange{lane, warp});
  b.create<mlir::gpu::BarrierOp>(loc);

  // 3. The segment again, from its prefix; the last segment's thread keeps the total.
  b.create<mlir::scf::IfOp>(loc, active, [&](mlir::OpBuilder &bb, mlir::Location l) {
    auto indices = columnIndices(bb, column);
    mlir::Value start = bb.create<mlir::memref::LoadOp>(l, totals, mlir::ValueRange{warp, lane});
    auto run = bb.create<mlir::scf::ForOp>(
        l, first, end, bb.create<ar::ConstantIndexOp>(l, 1), mlir::ValueRange{start},
        [&](mlir::OpBuilder &lb, mlir::Location ll, mlir::Value s, mlir::ValueRange acc) {
          auto where = at(lb, indices, s);
          mlir::Value x = lb.create<mlir::memref::LoadOp>(ll, scan->x, where);
          mlir::Value next = add(lb, ll, acc[0], x);
          lb.create<mlir::memref::StoreOp>(ll, next, scan->y, where);
          lb.create<mlir::scf::YieldOp>(ll, next);
        });
    mlir::Value length = bb.create<ar::ConstantIndexOp>(l, scan->length);
    mlir::Value last = bb.create<ar::AndIOp>(
        l, bb.create<ar::CmpIOp>(l, ar::CmpIPredicate::ult, first, length),
        bb.create<ar::CmpIOp>(l, ar::CmpIPredicate::eq, end, length));
    bb.create<mlir::scf::IfOp>(l, last, [&](mlir::OpBuilder &ib, mlir::Location il) {
      ib.create<mlir::memref::StoreOp>(il, run.getResult(0), scan->state, indices);
      ib.create<mlir::scf::YieldOp>(il);
    });
    bb.create<mlir::scf::YieldOp>(l);
  });
  loop.erase();
  return BlockScanLaunch{(columns + kWarp - 1) / kWarp, kWarp * kWarp};
}

}  // namespace stepc::codegen
