//===- EmulateLockstep.cpp - a GPU block's threads in lock-step on the CPU ===//
//
// See EmulateLockstep.h.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Emulation/EmulateLockstep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/MapVector.h"

namespace stepc::codegen {

namespace ar = mlir::arith;

namespace {

bool synchronises(mlir::Operation *op) {
  bool found = false;
  op->walk([&](mlir::Operation *inner) {
    found |= llvm::isa<mlir::gpu::BarrierOp, mlir::gpu::ShuffleOp>(inner);
  });
  return found;
}

bool isConstant(mlir::Operation &op) {
  return op.hasTrait<mlir::OpTrait::ConstantLike>() && op.getNumOperands() == 0;
}

// The ids and sizes are recomputed where used (each phase's loop gives its thread id), not
// kept per thread.
bool isId(mlir::Operation *op) {
  return llvm::isa_and_nonnull<mlir::gpu::ThreadIdOp, mlir::gpu::BlockIdOp, mlir::gpu::BlockDimOp,
                               mlir::gpu::GridDimOp>(op);
}

// The lock-step body of one kernel. Ops are either per-thread (run inside a phase's loop over
// the threads) or structural: an scf.for or scf.if without results that holds a barrier,
// whose bounds or condition are the same for every thread (stepc's row loops are), run once,
// with phases inside. A phase is a maximal run of per-thread ops of one block between
// barriers and structural ops.
class Lockstep {
 public:
  Lockstep(mlir::OpBuilder &top, mlir::IRMapping &uniform, mlir::Value threads, mlir::Location loc)
      : top_(top), uniform_(uniform), threads_(threads), loc_(loc) {}

  // Numbers the phases, hoists constants to the top, and gives a per-thread slot to each value
  // used outside its phase.
  mlir::LogicalResult prepare(mlir::Block &block) {
    if (failed(number(block))) return mlir::failure();
    for (mlir::Operation *op : order_) {
      if (isId(op)) continue;
      int phase = phaseOf_.lookup(op);
      for (mlir::Value result : op->getResults())
        if (llvm::any_of(result.getUsers(), [&](mlir::Operation *user) {
              mlir::Operation *at = op->getBlock()->findAncestorOpInBlock(*user);
              auto it = phaseOf_.find(at);
              return it == phaseOf_.end() || it->second != phase;
            }))
          slots_[result] = top_.create<mlir::memref::AllocaOp>(
              loc_, mlir::MemRefType::get({mlir::ShapedType::kDynamic}, result.getType()),
              mlir::ValueRange{threads_});
    }
    return mlir::success();
  }

  mlir::LogicalResult emit(mlir::OpBuilder &b, mlir::Block &block) {
    llvm::SmallVector<mlir::Operation *> phase;
    for (mlir::Operation &op : block) {
      if (op.hasTrait<mlir::OpTrait::IsTerminator>() || isConstant(op)) continue;
      if (phaseOf_.count(&op)) {
        phase.push_back(&op);
        continue;
      }
      emitPhase(b, phase);
      phase.clear();
      if (llvm::isa<mlir::gpu::BarrierOp>(op)) continue;
      if (failed(emitStructural(b, op))) return mlir::failure();
    }
    emitPhase(b, phase);
    return mlir::success();
  }

 private:
  mlir::LogicalResult number(mlir::Block &block) {
    int phase = next_++;
    for (mlir::Operation &op : block) {
      if (op.hasTrait<mlir::OpTrait::IsTerminator>()) continue;
      if (llvm::isa<mlir::gpu::BarrierOp>(op)) {
        phase = next_++;
        continue;
      }
      if (isConstant(op)) {
        top_.clone(op, uniform_);
        continue;
      }
      if (synchronises(&op)) {
        if (!llvm::isa<mlir::scf::ForOp, mlir::scf::IfOp>(op) || op.getNumResults() != 0)
          return op.emitError("--step-emulate-gpu runs barriers and shuffles at a kernel's top "
                              "level or in scf.for / scf.if without results, only");
        for (mlir::Region &region : op.getRegions())
          for (mlir::Block &inner : region)
            if (failed(number(inner))) return mlir::failure();
        phase = next_++;
        continue;
      }
      phaseOf_[&op] = phase;
      order_.push_back(&op);
    }
    return mlir::success();
  }

  // A bound or condition of a structural op: thread 0's, after a check that every thread has
  // the same (a barrier or a shuffle that some threads skip is not what the GPU runs: the
  // emulated program stops with a message instead).
  mlir::Value uniformValue(mlir::OpBuilder &b, mlir::Value v) {
    if (mlir::Value mapped = uniform_.lookupOrNull(v)) return mapped;
    if (isId(v.getDefiningOp()) && !llvm::isa<mlir::gpu::ThreadIdOp>(v.getDefiningOp()))
      return b.clone(*v.getDefiningOp())->getResult(0);
    auto it = slots_.find(v);
    if (it == slots_.end() || !v.getType().isIntOrIndex()) return {};
    mlir::Value zero = b.create<mlir::arith::ConstantIndexOp>(loc_, 0);
    mlir::Value one = b.create<mlir::arith::ConstantIndexOp>(loc_, 1);
    mlir::Value first = b.create<mlir::memref::LoadOp>(loc_, it->second, zero);
    auto check = b.create<mlir::scf::ForOp>(loc_, one, threads_, one);
    mlir::OpBuilder cb = mlir::OpBuilder::atBlockTerminator(check.getBody());
    mlir::Value other = cb.create<mlir::memref::LoadOp>(loc_, it->second, check.getInductionVar());
    mlir::Value same = cb.create<mlir::arith::CmpIOp>(loc_, mlir::arith::CmpIPredicate::eq, other,
                                                      first);
    auto differ = cb.create<mlir::scf::IfOp>(
        loc_, cb.create<mlir::arith::XOrIOp>(
                  loc_, same, cb.create<mlir::arith::ConstantIntOp>(loc_, 1, 1)),
        /*withElseRegion=*/false);
    mlir::OpBuilder fb = mlir::OpBuilder::atBlockTerminator(differ.thenBlock());
    fb.create<mlir::func::CallOp>(loc_, divergedFunction(), mlir::ValueRange{});
    return first;
  }

  // A function that writes the message to stderr and aborts (write(2) is unbuffered, so the
  // line is there even when stdout is a pipe), made once per module.
  mlir::func::FuncOp divergedFunction() {
    auto module = top_.getInsertionBlock()->getParentOp()->getParentOfType<mlir::ModuleOp>();
    llvm::StringRef name = "stepc_emulate_gpu_diverged";
    if (auto fn = module.lookupSymbol<mlir::func::FuncOp>(name)) return fn;
    mlir::MLIRContext *ctx = module.getContext();
    mlir::OpBuilder b = mlir::OpBuilder::atBlockEnd(module.getBody());
    auto ptr = mlir::LLVM::LLVMPointerType::get(ctx);
    auto i32 = b.getI32Type(), i64 = b.getI64Type();
    std::string text = "--step-emulate-gpu: the threads of a block disagree on the bound or "
                       "condition of a loop or branch around a barrier or shuffle\n";
    auto textType = mlir::LLVM::LLVMArrayType::get(b.getI8Type(), text.size());
    auto global = b.create<mlir::LLVM::GlobalOp>(loc_, textType, /*isConstant=*/true,
                                                 mlir::LLVM::Linkage::Internal,
                                                 (name + "_text").str(), b.getStringAttr(text));
    auto write = module.lookupSymbol<mlir::LLVM::LLVMFuncOp>("write");
    if (!write)
      write = b.create<mlir::LLVM::LLVMFuncOp>(
          loc_, "write", mlir::LLVM::LLVMFunctionType::get(i64, {i32, ptr, i64}));
    auto abort = module.lookupSymbol<mlir::LLVM::LLVMFuncOp>("abort");
    if (!abort)
      abort = b.create<mlir::LLVM::LLVMFuncOp>(
          loc_, "abort", mlir::LLVM::LLVMFunctionType::get(mlir::LLVM::LLVMVoidType::get(ctx), {}));
    auto fn = b.create<mlir::func::FuncOp>(loc_, name, b.getFunctionType({}, {}));
    fn.setPrivate();
    mlir::OpBuilder body = mlir::OpBuilder::atBlockEnd(fn.addEntryBlock());
    mlir::Value address = body.create<mlir::LLVM::AddressOfOp>(loc_, global);
    mlir::Value fd = body.create<mlir::arith::ConstantIntOp>(loc_, 2, 32);
    mlir::Value length = body.create<mlir::arith::ConstantIntOp>(loc_, text.size(), 64);
    body.create<mlir::LLVM::CallOp>(loc_, write, mlir::ValueRange{fd, address, length});
    body.create<mlir::LLVM::CallOp>(loc_, abort, mlir::ValueRange{});
    body.create<mlir::func::ReturnOp>(loc_);
    return fn;
  }

  mlir::LogicalResult emitStructural(mlir::OpBuilder &b, mlir::Operation &op) {
    if (auto loop = llvm::dyn_cast<mlir::scf::ForOp>(op)) {
      mlir::Value lb = uniformValue(b, loop.getLowerBound()),
                  ub = uniformValue(b, loop.getUpperBound()), step = uniformValue(b, loop.getStep());
      if (!lb || !ub || !step || loop.getNumRegionIterArgs() != 0)
        return op.emitError("--step-emulate-gpu: a loop around a barrier needs known bounds and "
                            "no loop-carried values");
      auto copy = b.create<mlir::scf::ForOp>(loc_, lb, ub, step);
      uniform_.map(loop.getInductionVar(), copy.getInductionVar());
      mlir::OpBuilder inner = mlir::OpBuilder::atBlockTerminator(copy.getBody());
      return emit(inner, *loop.getBody());
    }
    auto branch = llvm::cast<mlir::scf::IfOp>(op);
    mlir::Value condition = uniformValue(b, branch.getCondition());
    if (!condition)
      return op.emitError("--step-emulate-gpu: an scf.if around a barrier needs a known condition");
    bool otherwise = !branch.getElseRegion().empty();
    auto copy = b.create<mlir::scf::IfOp>(loc_, condition, otherwise);
    mlir::OpBuilder thenBuilder = mlir::OpBuilder::atBlockTerminator(copy.thenBlock());
    if (failed(emit(thenBuilder, *branch.thenBlock()))) return mlir::failure();
    if (!otherwise) return mlir::success();
    mlir::OpBuilder elseBuilder = mlir::OpBuilder::atBlockTerminator(copy.elseBlock());
    return emit(elseBuilder, *branch.elseBlock());
  }

  // The phase's ops in a loop over the threads: values from other phases come from their
  // slots, and the phase's own values that others use go to theirs.
  void emitPhase(mlir::OpBuilder &b, llvm::ArrayRef<mlir::Operation *> ops) {
    if (ops.empty()) return;
    mlir::Value zero = b.create<mlir::arith::ConstantIndexOp>(loc_, 0);
    mlir::Value one = b.create<mlir::arith::ConstantIndexOp>(loc_, 1);
    auto loop = b.create<mlir::scf::ForOp>(loc_, zero, threads_, one);
    loop->setAttr(kEmulatedThreadsAttr, b.getUnitAttr());
    mlir::OpBuilder lb = mlir::OpBuilder::atBlockTerminator(loop.getBody());
    mlir::Value thread = loop.getInductionVar();
    mlir::IRMapping local = uniform_;
    llvm::SmallPtrSet<mlir::Operation *, 16> here(ops.begin(), ops.end());
    for (mlir::Operation *op : ops)
      op->walk([&](mlir::Operation *inner) {
        for (mlir::Value operand : inner->getOperands()) {
          mlir::Operation *def = operand.getDefiningOp();
          if (isId(def) && !here.contains(def) && !local.contains(operand)) {
            local.map(operand, lb.clone(*def)->getResult(0));
            continue;
          }
          auto it = slots_.find(operand);
          if (it == slots_.end() || here.contains(operand.getDefiningOp()) ||
              local.contains(operand))
            continue;
          local.map(operand, lb.create<mlir::memref::LoadOp>(loc_, it->second, thread).getResult());
        }
      });
    for (mlir::Operation *op : ops) {
      lb.clone(*op, local);
      for (mlir::Value result : op->getResults())
        if (auto it = slots_.find(result); it != slots_.end())
          lb.create<mlir::memref::StoreOp>(loc_, local.lookup(result), it->second, thread);
    }
  }

  mlir::OpBuilder &top_;
  mlir::IRMapping &uniform_;
  mlir::Value threads_;
  mlir::Location loc_;
  llvm::DenseMap<mlir::Operation *, int> phaseOf_;
  llvm::SmallVector<mlir::Operation *> order_;  // the per-thread ops, in program order
  llvm::MapVector<mlir::Value, mlir::Value> slots_;
  int next_ = 0;
};

}  // namespace

bool needsLockstep(mlir::gpu::GPUFuncOp fn) { return synchronises(fn); }

mlir::LogicalResult expandShuffles(mlir::gpu::GPUFuncOp fn) {
  llvm::SmallVector<mlir::gpu::ShuffleOp> shuffles;
  bool bad = false;
  fn.walk([&](mlir::gpu::ShuffleOp op) {
    llvm::APInt width;
    if (!mlir::matchPattern(op.getWidth(), mlir::m_ConstantInt(&width)) || width != 32) {
      op.emitError("--step-emulate-gpu runs shuffles of whole warps (width 32) only");
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
  if (fn.walk([](mlir::gpu::AllReduceOp) { return mlir::WalkResult::interrupt(); }).wasInterrupted())
    return fn.emitError("--step-emulate-gpu runs a kernel with barriers in lock-step, and then "
                        "its block reductions must be lowered (--step-lower-gpu-reductions)");
  for (mlir::BlockArgument buffer : fn.getWorkgroupAttributions()) {
    auto type = llvm::cast<mlir::MemRefType>(buffer.getType());
    if (!type.hasStaticShape()) return fn.emitError("a workgroup buffer of dynamic shape");
    map.map(buffer, b.create<mlir::memref::AllocaOp>(
                        loc, mlir::MemRefType::get(type.getShape(), type.getElementType())));
  }
  Lockstep lockstep(b, map, threads, loc);
  if (failed(lockstep.prepare(fn.getBody().front()))) return mlir::failure();
  return lockstep.emit(b, fn.getBody().front());
}

}  // namespace stepc::codegen
