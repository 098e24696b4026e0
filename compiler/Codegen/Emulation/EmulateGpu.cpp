//===- EmulateGpu.cpp - --step-emulate-gpu --------------------------------===//
//
// Runs the CUDA mapping (--step-kernels-to-gpu) on the CPU, to check its numbers without a GPU:
// each gpu.func becomes a function of (its arguments, block id, thread id, block size, grid
// size), and each gpu.launch_func becomes loops over the grid's blocks and each block's threads
// calling it, one thread after another. This is exact for stepc's elementwise kernels, whose
// threads never communicate (each element written by one thread): any order of the threads
// gives the same result, so a wrong tile or element index, a thread that skips or repeats
// elements, or a bad guard shows up as a wrong number. A block reduction's threads do
// communicate (gpu.all_reduce); here each thread folds its own partial into the output
// instead, which checks which elements each thread takes (up to the order of the sum), not the
// shuffles of --step-lower-gpu-reductions.
//
// A kernel with barriers or shuffles (the block scan, BlockScan.h; block reductions after
// --step-lower-gpu-reductions) runs in lock-step instead, once per block: its body is cut at
// the barriers into phases, and each phase is a loop over the block's threads
// (EmulateLockstep.h). A shuffle is a store of each thread's value to a
// block buffer, a barrier, a load of the source lane's (its own when the source is out of
// range, as PTX's shfl does), and a barrier. Values a later phase uses are kept per thread.
// The workgroup buffers are the block's. So this checks the threads' exchanges as well.
// `stepc compile --target=cuda-emulated` builds such an executable; compiled_vs_interpreter.test
// compares it with the interpreter.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/LLVMGPU/BlockReduction.h"
#include "compiler/Codegen/Emulation/EmulateLockstep.h"
#include "compiler/Codegen/Emulation/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_EMULATEGPU
#include "compiler/Codegen/Emulation/Passes.h.inc"

namespace {

// The thread an op runs for: a lock-step phase's loop variable, else the function's argument.
mlir::Value threadOf(mlir::Operation *op, mlir::Value argument) {
  for (mlir::Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (p->hasAttr(kEmulatedThreadsAttr)) return llvm::cast<mlir::scf::ForOp>(p).getInductionVar();
  return argument;
}

struct EmulateGpuPass : impl::EmulateGpuBase<EmulateGpuPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::MLIRContext *ctx = &getContext();
    mlir::OpBuilder b(ctx);
    auto index = b.getIndexType();
    llvm::DenseMap<mlir::Operation *, mlir::func::FuncOp> emulated;
    llvm::DenseSet<mlir::Operation *> lockstep;  // emulated functions that run a whole block
    for (auto gpuModule : llvm::to_vector(module.getOps<mlir::gpu::GPUModuleOp>())) {
      // Device globals (a split row's partials) become host globals of the same name.
      for (auto global : llvm::to_vector(gpuModule.getOps<mlir::memref::GlobalOp>())) {
        if (module.lookupSymbol(global.getSymName())) {
          global.emitError("--step-emulate-gpu: the host module has a symbol of this name");
          return signalPassFailure();
        }
        global->moveBefore(gpuModule);
      }
      for (auto fn : gpuModule.getOps<mlir::gpu::GPUFuncOp>()) {
        llvm::SmallVector<mlir::Type> types(fn.getArgumentTypes());
        types.append({index, index, index, index});  // block id, thread id, block size, grid size
        b.setInsertionPoint(gpuModule);
        auto cpu = b.create<mlir::func::FuncOp>(fn.getLoc(), (fn.getName() + "_emulated").str(),
                                                b.getFunctionType(types, {}));
        cpu.setPrivate();
        // One function per kernel, as on the CPU path (OutlineKernels.cpp says why).
        cpu->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
        cpu->setAttr("llvm.linkage",
                     mlir::LLVM::LinkageAttr::get(ctx, mlir::LLVM::Linkage::Internal));
        mlir::Block *entry = cpu.addEntryBlock();
        mlir::IRMapping map;
        for (auto [from, to] : llvm::zip(fn.getArguments(), entry->getArguments()))
          map.map(from, to);
        b.setInsertionPointToEnd(entry);
        mlir::Value block = entry->getArgument(fn.getNumArguments());
        mlir::Value thread = entry->getArgument(fn.getNumArguments() + 1);
        mlir::Value size = entry->getArgument(fn.getNumArguments() + 2);
        mlir::Value gridSize = entry->getArgument(fn.getNumArguments() + 3);
        if (fn.getBody().getBlocks().size() != 1) {
          fn.emitError("--step-emulate-gpu expects single-block kernels");
          return signalPassFailure();
        }
        if (needsLockstep(fn)) {
          if (failed(expandShuffles(fn)) || failed(emitLockstep(b, fn, map, size)))
            return signalPassFailure();
          b.create<mlir::func::ReturnOp>(fn.getLoc());
          lockstep.insert(cpu.getOperation());
        } else {
          if (!fn.getWorkgroupAttributions().empty() || !fn.getPrivateAttributions().empty()) {
            fn.emitError("--step-emulate-gpu runs kernels with buffers in lock-step only (a "
                         "barrier at the top level)");
            return signalPassFailure();
          }
          for (mlir::Operation &op : fn.getBody().front()) {
            if (llvm::isa<mlir::gpu::ReturnOp>(op)) {
              b.create<mlir::func::ReturnOp>(op.getLoc());
              continue;
            }
            b.clone(op, map);
          }
        }
        bool bad = false;
        mlir::OpBuilder top = mlir::OpBuilder::atBlockBegin(entry);
        mlir::Value always = top.create<mlir::arith::ConstantIntOp>(fn.getLoc(), 1, 1);
        cpu.walk([&](mlir::Operation *op) {
          // A block reduction (BlockReduction.h): run one thread at a time, each thread folds
          // its own partial into the output, so the all_reduce is the partial itself, the
          // barriers are moot and every thread owns the write.
          if (lockstep.contains(cpu.getOperation())) {
            // Lowered reductions (emitLockstep refused all_reduce): thread 0 owns the write.
          } else if (op->hasAttr(kBlockOwnerAttr)) {
            op->setOperand(0, always);
            return;
          }
          if (auto reduce = llvm::dyn_cast<mlir::gpu::AllReduceOp>(op)) {
            reduce.replaceAllUsesWith(reduce.getValue());
            reduce.erase();
            return;
          }
          if (llvm::isa<mlir::gpu::BarrierOp>(op)) {
            op->erase();
            return;
          }
          mlir::Value replacement;
          if (auto id = llvm::dyn_cast<mlir::gpu::BlockIdOp>(op))
            replacement = id.getDimension() == mlir::gpu::Dimension::x ? block : mlir::Value();
          else if (auto id = llvm::dyn_cast<mlir::gpu::ThreadIdOp>(op))
            replacement = id.getDimension() == mlir::gpu::Dimension::x ? threadOf(op, thread)
                                                                       : mlir::Value();
          else if (auto dim = llvm::dyn_cast<mlir::gpu::BlockDimOp>(op))
            replacement = dim.getDimension() == mlir::gpu::Dimension::x ? size : mlir::Value();
          else if (auto dim = llvm::dyn_cast<mlir::gpu::GridDimOp>(op))
            replacement = dim.getDimension() == mlir::gpu::Dimension::x ? gridSize : mlir::Value();
          else if (!llvm::isa<mlir::gpu::GPUDialect>(op->getDialect()))
            return;
          if (!replacement) {
            op->emitError("--step-emulate-gpu handles x block and thread ids, block and grid sizes only");
            bad = true;
            return;
          }
          op->getResult(0).replaceAllUsesWith(replacement);
          op->erase();
        });
        if (bad) return signalPassFailure();
        emulated[fn] = cpu;
      }
    }
    llvm::SmallVector<mlir::gpu::LaunchFuncOp> launches;
    module.walk([&](mlir::gpu::LaunchFuncOp launch) { launches.push_back(launch); });
    for (mlir::gpu::LaunchFuncOp launch : launches) {
      auto fn = module.lookupSymbol<mlir::gpu::GPUFuncOp>(launch.getKernel());
      if (!fn || !emulated.count(fn)) {
        launch.emitError("launch of an unknown kernel ") << launch.getKernel();
        return signalPassFailure();
      }
      mlir::Location loc = launch.getLoc();
      b.setInsertionPoint(launch);
      mlir::Value zero = b.create<mlir::arith::ConstantIndexOp>(loc, 0);
      mlir::Value one = b.create<mlir::arith::ConstantIndexOp>(loc, 1);
      auto blocks = b.create<mlir::scf::ForOp>(loc, zero, launch.getGridSizeX(), one);
      b.setInsertionPointToStart(blocks.getBody());
      mlir::Value thread = zero;  // a lock-step function runs the block's threads itself
      if (!lockstep.contains(emulated[fn].getOperation())) {
        auto threads = b.create<mlir::scf::ForOp>(loc, zero, launch.getBlockSizeX(), one);
        b.setInsertionPointToStart(threads.getBody());
        thread = threads.getInductionVar();
      }
      llvm::SmallVector<mlir::Value> args(launch.getKernelOperands());
      args.append({blocks.getInductionVar(), thread, launch.getBlockSizeX(),
                   launch.getGridSizeX()});
      b.create<mlir::func::CallOp>(loc, emulated[fn], args);
      launch.erase();
    }
    for (auto gpuModule : llvm::to_vector(module.getOps<mlir::gpu::GPUModuleOp>()))
      gpuModule.erase();
    module->removeAttr(mlir::gpu::GPUDialect::getContainerModuleAttrName());
  }
};

}  // namespace

}  // namespace stepc::codegen
