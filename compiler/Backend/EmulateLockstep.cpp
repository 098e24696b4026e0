//===- EmulateLockstep.cpp - a GPU block's threads in lock-step on the CPU ===//
//
// See EmulateLockstep.h.
//
//===----------------------------------------------------------------------===//
#include "compiler/Backend/EmulateLockstep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/MapVector.h"

namespace stepc::backend {

namespace ar = mlir::arith;

bool needsLockstep(mlir::gpu::GPUFuncOp fn) {
  for (mlir::Operation &op : fn.getBody().front())
    if (llvm::isa<mlir::gpu::BarrierOp, mlir::gpu::ShuffleOp>(op)) return true;
  return false;
}

mlir::LogicalResult expandShuffles(mlir::gpu::GPUFuncOp fn) {
  llvm::SmallVector<mlir::gpu::ShuffleOp> shuffles;
  bool bad = false;
  fn.walk([&](mlir::gpu::ShuffleOp op) {
    llvm::APInt width;
    if (op->getParentOp() != fn || !mlir::matchPattern(op.getWidth(), mlir::m_ConstantInt(&width)) ||
        width != 32) {
      op.emitError("--step-emulate-gpu runs shuffles of whole warps (width 32) at a kernel's top "
                   "level only");
      bad = true;
    }
    shuffles.push_back(op);
  });
  if (bad) return mlir::failure();
  auto space = mlir::gpu::AddressSpaceAttr::get(fn.getContext(), mlir::gpu::AddressSpace::Workgroup);
  llvm::DenseMap<mlir::Type, mlir::Value> buffers;  // one per value type, 1024 threads at most
  for (mlir::gpu::ShuffleOp op : shuffles) {
    mlir::Location loc = op.getLoc();
    mlir::Type type = op.getValue().getType();
    mlir::Value &buffer = buffers[type];
    if (!buffer)
      buffer = fn.addWorkgroupAttribution(
          mlir::MemRefType::get({1024}, type, mlir::AffineMap(), space), loc);
    mlir::OpBuilder b(op);
    auto c = [&](int64_t v) -> mlir::Value { return b.create<ar::ConstantIndexOp>(loc, v); };
    mlir::Value tid = b.create<mlir::gpu::ThreadIdOp>(loc, mlir::gpu::Dimension::x);
    b.create<mlir::memref::StoreOp>(loc, op.getValue(), buffer, tid);
    b.create<mlir::gpu::BarrierOp>(loc);
    mlir::Value lane = b.create<ar::RemUIOp>(loc, tid, c(32));
    mlir::Value base = b.create<ar::SubIOp>(loc, tid, lane);
    mlir::Value offset = b.create<ar::IndexCastUIOp>(loc, b.getIndexType(), op.getOffset());
    mlir::Value source, valid;
    switch (op.getMode()) {
      case mlir::gpu::ShuffleMode::UP:
        valid = b.create<ar::CmpIOp>(loc, ar::CmpIPredicate::uge, lane, offset);
        source = b.create<ar::SubIOp>(loc, lane, offset);
        break;
      case mlir::gpu::ShuffleMode::DOWN: source = b.create<ar::AddIOp>(loc, lane, offset); break;
      case mlir::gpu::ShuffleMode::XOR: source = b.create<ar::XOrIOp>(loc, lane, offset); break;
      case mlir::gpu::ShuffleMode::IDX: source = offset; break;
    }
    if (!valid) valid = b.create<ar::CmpIOp>(loc, ar::CmpIPredicate::ult, source, c(32));
    // Out of range: the thread's own value, as shfl does.
    mlir::Value from =
        b.create<ar::SelectOp>(loc, valid, b.create<ar::AddIOp>(loc, base, source), tid);
    mlir::Value value = b.create<mlir::memref::LoadOp>(loc, buffer, from);
    b.create<mlir::gpu::BarrierOp>(loc);  // before a later shuffle overwrites the buffer
    op.getShuffleResult().replaceAllUsesWith(value);
    op.getValid().replaceAllUsesWith(valid);
    op.erase();
  }
  return mlir::success();
}

mlir::LogicalResult emitLockstep(mlir::OpBuilder &b, mlir::gpu::GPUFuncOp fn, mlir::IRMapping &map,
                                 mlir::Value threads) {
  mlir::Location loc = fn.getLoc();
  if (!fn.getPrivateAttributions().empty())
    return fn.emitError("--step-emulate-gpu does not run private buffers in lock-step");
  for (mlir::BlockArgument buffer : fn.getWorkgroupAttributions()) {
    auto type = llvm::cast<mlir::MemRefType>(buffer.getType());
    if (!type.hasStaticShape()) return fn.emitError("a workgroup buffer of dynamic shape");
    map.map(buffer, b.create<mlir::memref::AllocaOp>(
                        loc, mlir::MemRefType::get(type.getShape(), type.getElementType())));
  }
  // Phases between barriers; constants first, where they dominate every phase.
  mlir::Block &body = fn.getBody().front();
  llvm::DenseMap<mlir::Operation *, int> phaseOf;
  llvm::SmallVector<llvm::SmallVector<mlir::Operation *>> phases(1);
  for (mlir::Operation &op : body) {
    if (llvm::isa<mlir::gpu::ReturnOp>(op)) continue;
    if (llvm::isa<mlir::gpu::BarrierOp>(op)) {
      phases.emplace_back();
      continue;
    }
    bool nested = false;
    op.walk([&](mlir::Operation *inner) {
      nested |= inner != &op && llvm::isa<mlir::gpu::BarrierOp, mlir::gpu::ShuffleOp>(inner);
    });
    if (nested)
      return op.emitError("--step-emulate-gpu runs barriers at a kernel's top level only");
    if (op.hasTrait<mlir::OpTrait::ConstantLike>() && op.getNumOperands() == 0) {
      b.clone(op, map);
      continue;
    }
    phaseOf[&op] = static_cast<int>(phases.size()) - 1;
    phases.back().push_back(&op);
  }
  // A value a later phase uses is kept per thread.
  llvm::MapVector<mlir::Value, mlir::Value> slots;
  auto phaseOfUse = [&](mlir::Operation *user) {
    return phaseOf.lookup(body.findAncestorOpInBlock(*user));
  };
  for (auto [p, ops] : llvm::enumerate(phases))
    for (mlir::Operation *op : ops)
      for (mlir::Value result : op->getResults())
        if (llvm::any_of(result.getUsers(), [&](mlir::Operation *user) {
              return phaseOfUse(user) > static_cast<int>(p);
            }))
          slots[result] = b.create<mlir::memref::AllocaOp>(
              loc, mlir::MemRefType::get({mlir::ShapedType::kDynamic}, result.getType()),
              mlir::ValueRange{threads});
  mlir::Value zero = b.create<ar::ConstantIndexOp>(loc, 0);
  mlir::Value one = b.create<ar::ConstantIndexOp>(loc, 1);
  for (auto [p, ops] : llvm::enumerate(phases)) {
    auto loop = b.create<mlir::scf::ForOp>(loc, zero, threads, one);
    loop->setAttr(kEmulatedThreadsAttr, b.getUnitAttr());
    mlir::OpBuilder lb = mlir::OpBuilder::atBlockTerminator(loop.getBody());
    mlir::Value thread = loop.getInductionVar();
    mlir::IRMapping local = map;
    for (auto &[value, slot] : slots) {
      int defined = phaseOf.lookup(value.getDefiningOp());
      if (defined < static_cast<int>(p) &&
          llvm::any_of(value.getUsers(), [&](mlir::Operation *user) {
            return phaseOfUse(user) == static_cast<int>(p);
          }))
        local.map(value, lb.create<mlir::memref::LoadOp>(loc, slot, thread).getResult());
    }
    for (mlir::Operation *op : ops) {
      lb.clone(*op, local);
      for (mlir::Value result : op->getResults())
        if (auto it = slots.find(result); it != slots.end())
          lb.create<mlir::memref::StoreOp>(loc, local.lookup(result), it->second, thread);
    }
  }
  return mlir::success();
}

}  // namespace stepc::backend
