//===- CheckOffloadAccess.cpp - --step-check-offload-access ---------------===//
//
// The emulator's race check for planned offload (--device-memory with --target=cuda-emulated).
// On a GPU the offload plan's transfers run on a copy stream beside the kernels: a prefetch
// writes its slot until the plan waits for it, and a write-back reads its slot until a later
// wait or a flush (transfers complete in issue order). A plan that touches a slot too early
// computes on half-copied numbers only sometimes, so a wrong plan would pass most runs. The
// emulator runs the host plan in program order, so it can check it exactly: before every
// command that touches memory (a kernel launch, a runtime call such as a GEMM, a host copy),
// this pass inserts, for each memref operand,
//
//   call @stepc_offload_access_<element type>(operand as memref<*x...>, element bytes, writes,
//                                             what)
//
// The runtime reads the operand's byte range from its descriptor; `writes` says whether the
// command may write it (a kernel: any write effect in its gpu.func on a view of that argument;
// a runtime call: its known output, else assumed written); `what` is the command's name (a
// constant string).
// The runtime (runtime/hal/cpu/Offload.h, FarStore::access) compares the range with the
// transfers issued and not yet waited for, and the step fails at the first race, naming the
// command and the transfer. Modules without transfers are left alone.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/RuntimeCallWrites.h"
#include "compiler/Codegen/Emulation/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_CHECKOFFLOADACCESS
#include "compiler/Codegen/Emulation/Passes.h.inc"

namespace {

using mlir::Value;

// The value a view is of: through view-like ops to an argument or an allocation.
Value rootOf(Value v) {
  while (mlir::Operation *def = v.getDefiningOp()) {
    auto view = llvm::dyn_cast<mlir::ViewLikeOpInterface>(def);
    if (!view) break;
    v = view.getViewSource();
  }
  return v;
}

// The arguments of `fn` some op writes through (itself or a view of it). Workgroup and
// private buffers are block arguments after them; they are the block's own.
llvm::SmallVector<bool> writtenArguments(mlir::gpu::GPUFuncOp fn) {
  llvm::SmallVector<bool> written(fn.getNumArguments(), false);
  auto mark = [&](Value v) {
    if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(rootOf(v)))
      if (arg.getOwner()->getParentOp() == fn && arg.getArgNumber() < written.size())
        written[arg.getArgNumber()] = true;
  };
  fn.walk([&](mlir::Operation *op) {
    auto effects = llvm::dyn_cast<mlir::MemoryEffectOpInterface>(op);
    if (!effects) {
      // Unknown effects: every memref operand may be written.
      if (!op->hasTrait<mlir::OpTrait::HasRecursiveMemoryEffects>())
        for (Value operand : op->getOperands()) mark(operand);
      return;
    }
    llvm::SmallVector<mlir::MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (auto &effect : list) {
      if (llvm::isa<mlir::MemoryEffects::Write>(effect.getEffect()) && effect.getValue())
        mark(effect.getValue());
    }
  });
  return written;
}

struct CheckOffloadAccessPass : impl::CheckOffloadAccessBase<CheckOffloadAccessPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    bool transfers = false;
    module.walk([&](mlir::func::CallOp call) {
      if (call.getCallee().starts_with("stepc_offload_")) transfers = true;
    });
    if (!transfers) return;
    mlir::MLIRContext *ctx = &getContext();
    mlir::OpBuilder b(ctx);
    auto i64 = b.getI64Type();

    // The commands to check, with each memref operand and whether it may be written.
    struct Command {
      mlir::Operation *op;
      std::string what;
      llvm::SmallVector<std::pair<Value, bool>> operands;
    };
    std::vector<Command> commands;
    llvm::DenseMap<mlir::Operation *, llvm::SmallVector<bool>> written;
    bool bad = false;
    for (auto fn : module.getOps<mlir::func::FuncOp>()) {
      if (fn.isExternal()) continue;
      std::string in = " in @" + fn.getName().str();
      fn.walk([&](mlir::Operation *op) {
        Command c{op, "", {}};
        if (auto launch = llvm::dyn_cast<mlir::gpu::LaunchFuncOp>(op)) {
          auto kernel = module.lookupSymbol<mlir::gpu::GPUFuncOp>(launch.getKernel());
          if (!kernel) {
            launch.emitError("launch of an unknown kernel ") << launch.getKernel();
            bad = true;
            return;
          }
          auto [it, fresh] = written.try_emplace(kernel, llvm::SmallVector<bool>());
          if (fresh) it->second = writtenArguments(kernel);
          c.what = "kernel @" + kernel.getName().str() + in;
          for (auto [i, operand] : llvm::enumerate(launch.getKernelOperands()))
            c.operands.push_back({operand, it->second[i]});
        } else if (auto call = llvm::dyn_cast<mlir::func::CallOp>(op)) {
          llvm::StringRef callee = call.getCallee();
          if (callee.starts_with("stepc_offload_")) return;
          c.what = "call of @" + callee.str() + in;
          for (auto [i, operand] : llvm::enumerate(call.getOperands()))
            c.operands.push_back({operand, runtimeCallWrites(callee, i).value_or(true)});
        } else if (auto copy = llvm::dyn_cast<mlir::memref::CopyOp>(op)) {
          c.what = "host copy" + in;
          c.operands = {{copy.getSource(), false}, {copy.getTarget(), true}};
        } else {
          return;
        }
        // An unranked operand is checked through the ranked view it was cast from.
        for (auto &[operand, writes] : c.operands) {
          if (!llvm::isa<mlir::UnrankedMemRefType>(operand.getType())) continue;
          auto cast = operand.getDefiningOp<mlir::memref::CastOp>();
          if (!cast || !llvm::isa<mlir::MemRefType>(cast.getSource().getType())) {
            op->emitError("--step-check-offload-access: an unranked operand not cast from a "
                          "ranked memref; its bytes cannot be checked");
            bad = true;
            return;
          }
          operand = cast.getSource();
        }
        llvm::erase_if(c.operands, [](const std::pair<Value, bool> &o) {
          return !llvm::isa<mlir::MemRefType>(o.first.getType());
        });
        if (!c.operands.empty()) commands.push_back(std::move(c));
      });
    }
    if (bad) return signalPassFailure();

    // One constant string per command name, as a global the runtime reads (NUL-terminated).
    llvm::StringMap<mlir::memref::GlobalOp> names;
    auto nameOf = [&](const std::string &what) {
      mlir::memref::GlobalOp &global = names[what];
      if (global) return global;
      mlir::OpBuilder top = mlir::OpBuilder::atBlockBegin(module.getBody());
      llvm::SmallVector<int8_t> bytes(what.begin(), what.end());
      bytes.push_back(0);
      auto type = mlir::MemRefType::get({static_cast<int64_t>(bytes.size())}, top.getI8Type());
      auto init = mlir::DenseElementsAttr::get(
          mlir::RankedTensorType::get(type.getShape(), top.getI8Type()), llvm::ArrayRef(bytes));
      global = top.create<mlir::memref::GlobalOp>(
          module.getLoc(), "__stepc_access_" + std::to_string(names.size()),
          top.getStringAttr("private"), type, init, /*constant=*/true, /*alignment=*/nullptr);
      return global;
    };

    // One runtime function per element type, taking the operand as an unranked memref: the
    // runtime reads its aligned pointer, offset, sizes and strides from the descriptor the
    // lowering built. (Not extract_aligned_pointer_as_index: expand-strided-metadata forwards
    // it through every view-like op, memref.view's byte shift included, so an arena view
    // would come out at the arena's start.)
    llvm::StringMap<mlir::func::FuncOp> checks;
    auto checkFor = [&](mlir::Type element) -> mlir::func::FuncOp {
      std::string suffix;
      llvm::raw_string_ostream os(suffix);
      element.print(os);
      mlir::func::FuncOp &fn = checks[suffix];
      if (fn) return fn;
      mlir::OpBuilder top = mlir::OpBuilder::atBlockBegin(module.getBody());
      auto unranked = mlir::UnrankedMemRefType::get(element, 0);
      fn = top.create<mlir::func::FuncOp>(module.getLoc(), "stepc_offload_access_" + suffix,
                                          top.getFunctionType({unranked, i64, i64, i64}, {}));
      fn.setPrivate();
      fn->setAttr("llvm.emit_c_interface", top.getUnitAttr());
      return fn;
    };
    for (Command &c : commands) {
      mlir::Location loc = c.op->getLoc();
      b.setInsertionPoint(c.op);
      mlir::memref::GlobalOp global = nameOf(c.what);
      Value name = b.create<mlir::memref::GetGlobalOp>(loc, global.getType(), global.getSymName());
      Value what = b.create<mlir::arith::IndexCastOp>(
          loc, i64, b.create<mlir::memref::ExtractAlignedPointerAsIndexOp>(loc, name));
      for (auto [operand, writes] : c.operands) {
        auto type = llvm::cast<mlir::MemRefType>(operand.getType());
        mlir::Type element = type.getElementType();
        if (!element.isIntOrFloat()) {
          c.op->emitError("--step-check-offload-access: an operand of element type ")
              << element << ", which the runtime's check does not read";
          return signalPassFailure();
        }
        unsigned bytes = std::max(1u, element.getIntOrFloatBitWidth() / 8);
        Value view = b.create<mlir::memref::CastOp>(
            loc, mlir::UnrankedMemRefType::get(element, type.getMemorySpace()), operand);
        b.create<mlir::func::CallOp>(
            loc, checkFor(element),
            mlir::ValueRange{view, b.create<mlir::arith::ConstantIntOp>(loc, bytes, 64),
                             b.create<mlir::arith::ConstantIntOp>(loc, writes ? 1 : 0, 64),
                             what});
      }
    }
  }
};

}  // namespace

}  // namespace stepc::codegen
