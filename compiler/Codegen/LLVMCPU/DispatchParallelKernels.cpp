//===- DispatchParallelKernels.cpp - --step-dispatch-parallel-kernels -----===//
//
// Hands the calls of range kernels (`step.parallel_tasks`, --step-parallelize-kernels) to the
// runtime's thread pool. On the LLVM dialect, for each such kernel `@k(args..., lo, hi)`:
//   - a task `@k_task(ptr argv, i64 lo, i64 hi)` loads the arguments from argv and calls @k;
//   - each call `@k(args..., lo, hi)` becomes: store args into an argument array (one alloca
//     per call site, in the caller's entry block so loops do not grow the stack), then
//     `stepc_parallel_for(@k_task, argv, lo, hi)` (runtime/hal/cpu/ThreadPool.h), which splits
//     [lo, hi) over the threads and returns when all parts are done.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/LLVMCPU/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_DISPATCHPARALLELKERNELS
#include "compiler/Codegen/LLVMCPU/Passes.h.inc"

namespace {

struct DispatchParallelKernelsPass
    : impl::DispatchParallelKernelsBase<DispatchParallelKernelsPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::MLIRContext *ctx = &getContext();
    auto ptr = mlir::LLVM::LLVMPointerType::get(ctx);
    auto i64 = mlir::IntegerType::get(ctx, 64);
    auto voidType = mlir::LLVM::LLVMVoidType::get(ctx);
    mlir::OpBuilder b(ctx);
    llvm::DenseMap<mlir::StringAttr, mlir::LLVM::LLVMFuncOp> taskOf;
    for (auto fn : llvm::to_vector(module.getOps<mlir::LLVM::LLVMFuncOp>())) {
      if (!fn->hasAttr("step.parallel_tasks") || fn.isExternal()) continue;
      auto params = fn.getFunctionType().getParams();
      if (params.size() < 2 || params.back() != i64 || params[params.size() - 2] != i64) {
        fn.emitError("a range kernel must end with (i64 lo, i64 hi)");
        return signalPassFailure();
      }
      std::string name = (fn.getSymName() + "_task").str();
      if (module.lookupSymbol(name)) continue;
      b.setInsertionPointAfter(fn);
      auto task = b.create<mlir::LLVM::LLVMFuncOp>(
          fn.getLoc(), name, mlir::LLVM::LLVMFunctionType::get(voidType, {ptr, i64, i64}),
          mlir::LLVM::Linkage::Internal);
      mlir::Block *entry = task.addEntryBlock(b);
      b.setInsertionPointToStart(entry);
      llvm::SmallVector<mlir::Value> args;
      for (size_t i = 0; i + 2 < params.size(); ++i) {
        mlir::Value slot = b.create<mlir::LLVM::GEPOp>(
            fn.getLoc(), ptr, ptr, entry->getArgument(0),
            llvm::ArrayRef<mlir::LLVM::GEPArg>{static_cast<int32_t>(i)});
        args.push_back(b.create<mlir::LLVM::LoadOp>(fn.getLoc(), params[i], slot));
      }
      args.push_back(entry->getArgument(1));
      args.push_back(entry->getArgument(2));
      b.create<mlir::LLVM::CallOp>(fn.getLoc(), fn, args);
      b.create<mlir::LLVM::ReturnOp>(fn.getLoc(), mlir::ValueRange{});
      taskOf[fn.getSymNameAttr()] = task;
    }
    if (taskOf.empty()) return;

    auto dispatch = module.lookupSymbol<mlir::LLVM::LLVMFuncOp>("stepc_parallel_for");
    if (!dispatch) {
      b.setInsertionPointToStart(module.getBody());
      dispatch = b.create<mlir::LLVM::LLVMFuncOp>(
          module.getLoc(), "stepc_parallel_for",
          mlir::LLVM::LLVMFunctionType::get(voidType, {ptr, ptr, i64, i64}));
    }
    llvm::SmallVector<mlir::LLVM::CallOp> calls;
    module.walk([&](mlir::LLVM::CallOp call) {
      auto callee = call.getCalleeAttr();
      if (callee && taskOf.count(callee.getAttr()) &&
          call->getParentOfType<mlir::LLVM::LLVMFuncOp>().getSymName() !=
              (callee.getValue() + "_task").str())
        calls.push_back(call);
    });
    for (mlir::LLVM::CallOp call : calls) {
      mlir::LLVM::LLVMFuncOp task = taskOf.lookup(call.getCalleeAttr().getAttr());
      mlir::Location loc = call.getLoc();
      auto operands = llvm::to_vector(call.getArgOperands());
      size_t n = operands.size() - 2;
      auto caller = call->getParentOfType<mlir::LLVM::LLVMFuncOp>();
      b.setInsertionPointToStart(&caller.getBody().front());
      mlir::Value count = b.create<mlir::LLVM::ConstantOp>(loc, i64, b.getI64IntegerAttr(
                                                                         std::max<size_t>(n, 1)));
      mlir::Value argv = b.create<mlir::LLVM::AllocaOp>(loc, ptr, ptr, count, 8);
      b.setInsertionPoint(call);
      for (size_t i = 0; i < n; ++i) {
        mlir::Value slot = b.create<mlir::LLVM::GEPOp>(
            loc, ptr, ptr, argv, llvm::ArrayRef<mlir::LLVM::GEPArg>{static_cast<int32_t>(i)});
        b.create<mlir::LLVM::StoreOp>(loc, operands[i], slot);
      }
      mlir::Value fnPtr = b.create<mlir::LLVM::AddressOfOp>(loc, task);
      b.create<mlir::LLVM::CallOp>(
          loc, dispatch, mlir::ValueRange{fnPtr, argv, operands[n], operands[n + 1]});
      call.erase();
    }
  }
};

}  // namespace

}  // namespace stepc::codegen
