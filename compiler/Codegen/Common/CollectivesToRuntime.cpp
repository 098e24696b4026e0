//===- CollectivesToRuntime.cpp - --step-collectives-to-runtime -----------===//
//
// The data-parallel reduction in the host plan. step.all_reduce reaches `buffers` as a
// linalg.copy marked `step.collective = "all_reduce_sum"` (StepToLinalg's
// CollectivePatterns.cpp); after bufferization each becomes one call
//
//   stepc_all_reduce_sum_f32(input, output, id)     (runtime/hal/cpu/Collectives.h)
//
// through MLIR's C interface for unranked memrefs, so a command of any rank and layout is
// one call. `id` numbers the reductions in program order; every rank issues the same calls
// in the same order (one program), and the runtime checks the ids agree, so ranks that fell
// out of step fail with both ids instead of summing unrelated buffers. The count and the bytes
// go into the description (allReduces, allReduceBytes): `info` prints them and an executable
// without them refuses to run on more than one rank. Runs before kernel outlining, so the
// calls stay in the host plan, where the `plan` view shows them and the profile times them.
//
// The reduction is in place where it can be: when the input (the rank's block sum) is a
// buffer of its own that nothing reads after the call, and the output is a fresh buffer that
// nothing touches before it, the output's uses take the input instead and the call passes one
// buffer twice. Bufferization gave the collective a result buffer beside its operand; the
// gradients' size in the plan is that second buffer, which this removes.
//
// --shard-optimizer's gather reaches here as a copy marked "all_gather" of a whole buffer
// whose rows of this rank hold its block into the whole result buffer; it becomes
//
//   stepc_all_gather_f32(placed, whole, id)
//
// which copies this rank's rows of `placed` into `whole` and the other ranks' blocks into
// theirs.
// It shares the ids' sequence with the all-reduces (one order of collectives per step).
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "runtime/formats/ProgramDescription.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_COLLECTIVESTORUNTIME
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

constexpr llvm::StringLiteral kCollective = "step.collective";  // set by the lowering
constexpr llvm::StringLiteral kAllReduce = "stepc_all_reduce_sum_f32";
constexpr llvm::StringLiteral kAllGather = "stepc_all_gather_f32";

// True if `op`, or the op of `block` that holds it, comes before `point` (in `block`).
bool before(mlir::Operation *op, mlir::Operation *point) {
  mlir::Operation *here = point->getBlock()->findAncestorOpInBlock(*op);
  return here && here->isBeforeInBlock(point);
}

// Makes the collective `copy` read and write its input's buffer (see the header), if safe.
void reduceInPlace(mlir::linalg::CopyOp copy) {
  mlir::Value in = copy.getInputs()[0], out = copy.getOutputs()[0];
  auto inAlloc = in.getDefiningOp<mlir::memref::AllocOp>();
  auto outAlloc = out.getDefiningOp<mlir::memref::AllocOp>();
  if (!inAlloc || !outAlloc || in.getType() != out.getType()) return;
  mlir::memref::DeallocOp inDealloc;
  for (mlir::Operation *user : in.getUsers()) {
    if (user == copy) continue;
    if (auto dealloc = llvm::dyn_cast<mlir::memref::DeallocOp>(user)) {
      if (inDealloc || dealloc->getBlock() != copy->getBlock() || dealloc->isBeforeInBlock(copy))
        return;
      inDealloc = dealloc;
      continue;
    }
    // Every other use is before the call and makes no alias that could be read after it.
    if (!before(user, copy) || llvm::isa<mlir::ViewLikeOpInterface>(user)) return;
    for (mlir::Value r : user->getResults())
      if (llvm::isa<mlir::BaseMemRefType>(r.getType())) return;
  }
  for (mlir::Operation *user : out.getUsers())
    if (user != copy && before(user, copy)) return;  // written or read before the reduction
  if (inDealloc) inDealloc.erase();  // the output's dealloc now frees the one buffer
  out.replaceAllUsesWith(in);
  outAlloc.erase();
}

struct CollectivesToRuntimePass : impl::CollectivesToRuntimeBase<CollectivesToRuntimePass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::MLIRContext *ctx = &getContext();
    llvm::SmallVector<mlir::linalg::CopyOp> copies;
    module.walk([&](mlir::linalg::CopyOp copy) {
      if (copy->hasAttr(kCollective)) copies.push_back(copy);
    });
    if (copies.empty()) return;
    mlir::OpBuilder b(ctx);
    auto unranked = mlir::UnrankedMemRefType::get(b.getF32Type(), 0);
    auto declare = [&](llvm::StringRef name) {
      auto callee = module.lookupSymbol<mlir::func::FuncOp>(name);
      if (!callee) {
        mlir::OpBuilder top = mlir::OpBuilder::atBlockEnd(module.getBody());
        callee = top.create<mlir::func::FuncOp>(
            module.getLoc(), name, top.getFunctionType({unranked, unranked, top.getI64Type()}, {}));
        callee.setPrivate();
        callee->setAttr("llvm.emit_c_interface", b.getUnitAttr());
      }
      return callee;
    };
    int64_t bytes = 0, id = 0, gathers = 0, gatherBytes = 0;
    for (mlir::linalg::CopyOp copy : copies) {
      auto attr = copy->getAttrOfType<mlir::StringAttr>(kCollective);
      bool gather = attr.getValue() == "all_gather";
      if (attr.getValue() != "all_reduce_sum" && !gather) {
        copy.emitError() << "unknown collective '" << attr.getValue() << "'";
        return signalPassFailure();
      }
      if (!copy.hasPureBufferSemantics()) {
        copy.emitError() << "a collective must be bufferized before --step-collectives-to-runtime";
        return signalPassFailure();
      }
      if (!gather) reduceInPlace(copy);
      mlir::Value in = copy.getInputs()[0], out = copy.getOutputs()[0];
      auto type = llvm::cast<mlir::MemRefType>(in.getType());
      if (!type.getElementType().isF32() || !type.hasStaticShape()) {
        copy.emitError() << "the " << (gather ? "all-gather" : "all-reduce")
                         << " expects a static f32 buffer, found " << type;
        return signalPassFailure();
      }
      mlir::Location loc = copy.getLoc();
      b.setInsertionPoint(copy);
      mlir::Value inView = b.create<mlir::memref::CastOp>(loc, unranked, in);
      mlir::Value outView = b.create<mlir::memref::CastOp>(loc, unranked, out);
      mlir::Value index = b.create<mlir::arith::ConstantIntOp>(loc, id++, 64);
      b.create<mlir::func::CallOp>(loc, declare(gather ? kAllGather : kAllReduce),
                                   mlir::ValueRange{inView, outView, index});
      copy.erase();
      (gather ? gatherBytes : bytes) += type.getNumElements() * 4;
      gathers += gather;
    }
    auto text = module->getAttrOfType<mlir::StringAttr>("step.program");
    if (!text) return;  // a bare module (a lit test of this pass alone)
    rt::ProgramDescription d;
    if (rt::Status s = rt::parseProgramDescription(text.str(), d); !s.ok()) {
      module.emitError("bad `step.program` description: ") << s.message();
      return signalPassFailure();
    }
    d.info.allReduces = id - gathers;
    d.info.allReduceBytes = bytes;
    d.info.allGathers = gathers;
    d.info.allGatherBytes = gatherBytes;
    module->setAttr("step.program", mlir::StringAttr::get(ctx, rt::writeProgramDescription(d)));
  }
};

}  // namespace

}  // namespace stepc::codegen
