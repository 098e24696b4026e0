//===- LowerGpuReductions.cpp - --step-lower-gpu-reductions ---------------===//
//
// Lowers the block-wide `gpu.all_reduce` of --step-kernels-to-gpu (BlockReduction.h) to warp
// shuffles and shared memory, in structured control flow:
//   1. each warp combines its 32 values with a butterfly of `gpu.shuffle xor` (offsets 1, 2,
//      4, 8, 16), after which every lane holds the warp's total;
//   2. lane 0 of each warp stores it to a workgroup buffer of 32 floats; barrier;
//   3. every warp loads the warp totals (the neutral element past the last warp) and combines
//      them with a second butterfly, so every thread has the block's total; barrier, so the
//      next row's step 2 cannot overwrite totals a slower warp is still reading.
// Upstream's lowering (populateGpuAllReducePatterns) splits blocks with cf branches, which an
// scf.for (the row loop) cannot hold, and leaves that reuse race to its caller.
// The launches of stepc's kernels have whole warps (blockDim a multiple of 32, at most 1024),
// which the full-width shuffles need; the pass checks the launches in the module it sees.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/LLVMGPU/BlockReduction.h"
#include "compiler/Codegen/LLVMGPU/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_LOWERGPUREDUCTIONS
#include "compiler/Codegen/LLVMGPU/Passes.h.inc"

namespace {

namespace ar = mlir::arith;
constexpr int kWarp = 32;

mlir::Value warpReduce(mlir::OpBuilder &b, mlir::Location loc, mlir::gpu::AllReduceOperation kind,
                       mlir::Value value) {
  for (int offset = 1; offset < kWarp; offset <<= 1) {
    auto shuffle = b.create<mlir::gpu::ShuffleOp>(loc, value, offset, kWarp,
                                                  mlir::gpu::ShuffleMode::XOR);
    value = combine(b, loc, kind, value, shuffle.getShuffleResult());
  }
  return value;
}

struct LowerGpuReductionsPass : impl::LowerGpuReductionsBase<LowerGpuReductionsPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    // Whole warps only: a launch of a kernel with a reduction whose block size is known must
    // be a multiple of 32 (stepc's always are; a hand-written one may not be).
    llvm::DenseSet<mlir::StringAttr> reducing;
    module.walk([&](mlir::gpu::AllReduceOp op) {
      if (auto fn = op->getParentOfType<mlir::gpu::GPUFuncOp>()) reducing.insert(fn.getNameAttr());
    });
    bool bad = false;
    module.walk([&](mlir::gpu::LaunchFuncOp launch) {
      if (!reducing.count(launch.getKernelName())) return;
      llvm::APInt size;
      if (!mlir::matchPattern(launch.getBlockSizeX(), mlir::m_ConstantInt(&size)) ||
          size.getSExtValue() % kWarp != 0 || size.getSExtValue() > 1024 ||
          !mlir::matchPattern(launch.getBlockSizeY(), mlir::m_One()) ||
          !mlir::matchPattern(launch.getBlockSizeZ(), mlir::m_One())) {
        launch.emitError("a kernel with a block reduction needs a constant block of whole warps "
                         "(x a multiple of 32, at most 1024; y = z = 1)");
        bad = true;
      }
    });
    if (bad) return signalPassFailure();

    llvm::SmallVector<mlir::gpu::AllReduceOp> reductions;
    module.walk([&](mlir::gpu::AllReduceOp op) { reductions.push_back(op); });
    for (mlir::gpu::AllReduceOp op : reductions) {
      mlir::Location loc = op.getLoc();
      auto kind = op.getOp();
      if (!kind || !op.getBody().empty() || !op.getUniform() || !op.getType().isF32()) {
        op.emitError("--step-lower-gpu-reductions handles uniform f32 all_reduce with an op "
                     "kind (no region)");
        return signalPassFailure();
      }
      auto fn = op->getParentOfType<mlir::gpu::GPUFuncOp>();
      if (!fn) {
        op.emitError("--step-lower-gpu-reductions expects the all_reduce in a gpu.func");
        return signalPassFailure();
      }
      auto space = mlir::gpu::AddressSpaceAttr::get(&getContext(),
                                                    mlir::gpu::AddressSpace::Workgroup);
      mlir::Value totals = fn.addWorkgroupAttribution(
          mlir::MemRefType::get({kWarp}, op.getType(), mlir::AffineMap(), space), loc);
      mlir::OpBuilder b(op);
      mlir::Value tid = b.create<mlir::gpu::ThreadIdOp>(loc, mlir::gpu::Dimension::x);
      mlir::Value threads = b.create<mlir::gpu::BlockDimOp>(loc, mlir::gpu::Dimension::x);
      mlir::Value warpSize = b.create<ar::ConstantIndexOp>(loc, kWarp);
      mlir::Value zero = b.create<ar::ConstantIndexOp>(loc, 0);
      mlir::Value lane = b.create<ar::RemUIOp>(loc, tid, warpSize);
      mlir::Value warp = b.create<ar::DivUIOp>(loc, tid, warpSize);
      // (arith.ceildivui has no direct LLVM lowering.)
      mlir::Value warps = b.create<ar::DivUIOp>(
          loc, b.create<ar::AddIOp>(loc, threads, b.create<ar::ConstantIndexOp>(loc, kWarp - 1)),
          warpSize);

      mlir::Value warpTotal = warpReduce(b, loc, *kind, op.getValue());
      mlir::Value isLeader = b.create<ar::CmpIOp>(loc, ar::CmpIPredicate::eq, lane, zero);
      auto store = b.create<mlir::scf::IfOp>(loc, isLeader, /*withElseRegion=*/false);
      {
        mlir::OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(store.thenBlock());
        b.create<mlir::memref::StoreOp>(loc, warpTotal, totals, warp);
      }
      b.create<mlir::gpu::BarrierOp>(loc);
      mlir::Value present = b.create<ar::CmpIOp>(loc, ar::CmpIPredicate::ult, lane, warps);
      auto load = b.create<mlir::scf::IfOp>(loc, mlir::TypeRange{op.getType()}, present,
                                            /*withElseRegion=*/true);
      {
        mlir::OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(load.thenBlock());
        b.create<mlir::scf::YieldOp>(loc,
                                     b.create<mlir::memref::LoadOp>(loc, totals, lane).getResult());
        b.setInsertionPointToStart(load.elseBlock());
        b.create<mlir::scf::YieldOp>(loc, reductionIdentity(b, loc, *kind, op.getType()));
      }
      mlir::Value total = warpReduce(b, loc, *kind, load.getResult(0));
      b.create<mlir::gpu::BarrierOp>(loc);
      op.replaceAllUsesWith(total);
      op.erase();
    }
  }
};

}  // namespace

}  // namespace stepc::codegen
