//===- CudaHost.cpp - --step-cuda-host ------------------------------------===//
//
// Readies the host plan of the `gpu` stage for a CUDA executable, where every buffer the plan
// names lives in device memory:
//   - the arena (@stepc_arena, a host global on the CPU) comes from the runtime instead:
//     `stepc_cuda_arena(bytes)` returns a device allocation of that size (runtime/hal/cuda), so the
//     plan's views are views of device memory;
//   - GEMMs call the CUDA implementation of the GEMM interface (stepc_cuda_matmul_f32, ...), on
//     the step's stream, and a data-parallel step's all-reduce NCCL's
//     (stepc_cuda_all_reduce_sum_f32, runtime/hal/cuda/Nccl.h), and so do the overlapped
//     reductions' starts and waits and --shard-optimizer's reduce-scatter and all-gather;
//   - an offloading plan's transfers (--device-memory) go to the pinned host tier and its copy
//     stream (stepc_cuda_offload_fetch, ..., runtime/hal/cuda/HostTier.h);
//   - the plan's remaining copies (contiguous memref.copy) call stepc_cuda_copy(dst, src,
//     bytes), a device-to-device copy on the step's stream;
//   - the per-kernel profile calls go: host timestamps around asynchronous launches measure
//     nothing (a CUDA profile would use events).
// The CUDA module then links next to the CPU one, so its entry points get their own names
// (--step-pack-entry-points{prefix=stepc_cuda_}).
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/LLVMGPU/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_CUDAHOST
#include "compiler/Codegen/LLVMGPU/Passes.h.inc"

namespace {

struct CudaHostPass : impl::CudaHostBase<CudaHostPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::MLIRContext *ctx = &getContext();
    mlir::OpBuilder b(ctx);
    // GEMMs and the all-reduce: the CUDA implementation of the same interface.
    for (auto fn : llvm::to_vector(module.getOps<mlir::func::FuncOp>())) {
      llvm::StringRef name = fn.getSymName();
      if (name != "stepc_matmul_f32" && name != "stepc_batch_matmul_f32" &&
          name != "stepc_matmul_bf16" && name != "stepc_batch_matmul_bf16" &&
          name != "stepc_matmul_epilogue_f32" && name != "stepc_all_reduce_sum_f32" &&
          name != "stepc_all_reduce_start_f32" && name != "stepc_reduce_scatter_start_f32" &&
          name != "stepc_all_reduce_wait_f32" &&
          name != "stepc_all_gather_f32" && !name.starts_with("stepc_offload_"))
        continue;
      std::string cuda = ("stepc_cuda_" + name.drop_front(6)).str();
      if (failed(mlir::SymbolTable::replaceAllSymbolUses(fn, b.getStringAttr(cuda), module))) {
        fn.emitError("cannot rename the runtime calls");
        return signalPassFailure();
      }
      fn.setSymName(cuda);
    }
    // Profile calls go.
    llvm::SmallVector<mlir::func::CallOp> profile;
    module.walk([&](mlir::func::CallOp call) {
      if (call.getCallee().starts_with("stepc_profile_")) profile.push_back(call);
    });
    for (mlir::func::CallOp call : profile) call.erase();
    // The arena from the runtime.
    if (auto arena = module.lookupSymbol<mlir::memref::GlobalOp>("stepc_arena")) {
      auto type = llvm::cast<mlir::MemRefType>(arena.getType());
      b.setInsertionPointToStart(module.getBody());
      auto get = b.create<mlir::func::FuncOp>(
          module.getLoc(), "stepc_cuda_arena", b.getFunctionType({b.getI64Type()}, {type}));
      get.setPrivate();
      get->setAttr("llvm.emit_c_interface", b.getUnitAttr());
      llvm::SmallVector<mlir::memref::GetGlobalOp> uses;
      module.walk([&](mlir::memref::GetGlobalOp g) {
        if (g.getName() == "stepc_arena") uses.push_back(g);
      });
      for (mlir::memref::GetGlobalOp g : uses) {
        b.setInsertionPoint(g);
        mlir::Value bytes = b.create<mlir::arith::ConstantIntOp>(g.getLoc(), type.getNumElements(),
                                                                 64);
        auto call = b.create<mlir::func::CallOp>(g.getLoc(), get, mlir::ValueRange{bytes});
        g.replaceAllUsesWith(call.getResult(0));
        g.erase();
      }
      arena.erase();
    }
    // Copies between device buffers: contiguous ones (strided copies became kernels in
    // --step-strided-copies-to-linalg) as a byte copy on the step's stream.
    llvm::SmallVector<mlir::memref::CopyOp> copies;
    module.walk([&](mlir::memref::CopyOp copy) {
      if (!copy->getParentOfType<mlir::gpu::GPUModuleOp>()) copies.push_back(copy);
    });
    mlir::func::FuncOp copyFn;
    for (mlir::memref::CopyOp copy : copies) {
      auto source = llvm::cast<mlir::MemRefType>(copy.getSource().getType());
      auto target = llvm::cast<mlir::MemRefType>(copy.getTarget().getType());
      if (!mlir::memref::isStaticShapeAndContiguousRowMajor(source) ||
          !mlir::memref::isStaticShapeAndContiguousRowMajor(target)) {
        copy.emitError("the CUDA host plan copies only contiguous buffers; this copy is strided");
        return signalPassFailure();
      }
      if (!copyFn) {
        auto i64 = b.getI64Type();
        b.setInsertionPointToStart(module.getBody());
        copyFn = b.create<mlir::func::FuncOp>(module.getLoc(), "stepc_cuda_copy",
                                              b.getFunctionType({i64, i64, i64}, {}));
        copyFn.setPrivate();
      }
      b.setInsertionPoint(copy);
      mlir::Location loc = copy.getLoc();
      int64_t elementBytes = std::max<int64_t>(1, source.getElementTypeBitWidth() / 8);
      auto address = [&](mlir::Value buffer) -> mlir::Value {
        mlir::Value base =
            b.create<mlir::memref::ExtractAlignedPointerAsIndexOp>(loc, buffer);
        auto meta = b.create<mlir::memref::ExtractStridedMetadataOp>(loc, buffer);
        mlir::Value offset = b.create<mlir::arith::MulIOp>(
            loc, meta.getOffset(), b.create<mlir::arith::ConstantIndexOp>(loc, elementBytes));
        mlir::Value sum = b.create<mlir::arith::AddIOp>(loc, base, offset);
        return b.create<mlir::arith::IndexCastOp>(loc, b.getI64Type(), sum);
      };
      mlir::Value bytes = b.create<mlir::arith::ConstantIntOp>(
          loc, source.getNumElements() * elementBytes, 64);
      b.create<mlir::func::CallOp>(
          loc, copyFn,
          mlir::ValueRange{address(copy.getTarget()), address(copy.getSource()), bytes});
      copy.erase();
    }
  }
};

}  // namespace

}  // namespace stepc::codegen
