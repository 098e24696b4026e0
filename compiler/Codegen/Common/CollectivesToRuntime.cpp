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
// without them refuses to run on more than one rank. Runs right after one-shot bufferization,
// before any canonicalization: a marked copy that bufferized in place (its input and output
// one buffer, which bufferization may choose for a copy) is a self-copy the canonicalizer
// would erase, and the reduction with it. So also before kernel outlining: the calls stay in
// the host plan, where the `plan` view shows them and the profile times them.
//
// The reduction is in place where it can be: when the input (the rank's block sum) is a
// buffer of its own that nothing reads after the call, and the output is a fresh buffer that
// nothing touches before it, the output's uses take the input instead and the call passes one
// buffer twice. Bufferization gave the collective a result buffer beside its operand; the
// gradients' size in the plan is that second buffer, which this removes.
//
// The overlapped reduction (--step-build-train-step's split of step.all_reduce, each layer's
// start moved into the backward by --step-sink-layer-updates) reaches here as copies marked
// "all_reduce_start" and "all_reduce_wait"; they become
//
//   stepc_all_reduce_start_f32(input, started, id)   stepc_all_reduce_wait_f32(started, output, id)
//
// The start copies the input into its result (unless they are one buffer) and the runtime
// reduces there, in the background; nothing but the wait reads that buffer. The wait finds
// the reductions in its input (one start's result, or a repeat's stack of them), waits for
// them and copies the sums out. Both are in place where the rules above allow. The starts
// count as the reductions in the description.
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
// With defer-gathers (the CPU pipeline's) and a step whose reductions overlap the backward,
// a gather into a parameter itself (an in-place update) becomes
//
//   stepc_all_gather_start_f32(placed, whole, rounds, last, id)
//
// instead: the exchange runs on the reductions' thread while the step returns and the next
// one begins, and --step-await-gathers waits before each command that touches the parameter.
// `rounds` is the layers of a rank's block of a stacked parameter (1 otherwise): the runtime
// gathers those a layer at a time, so the next forward's first layer waits for its own rows
// only. `last` marks the step's last deferred gather: the runtime orders the batch then.
//
// --shard-optimizer's reduce-scatter reaches here as a copy marked "reduce_scatter_start",
// right after a call `stepc_reduce_scatter_owner(first, per)` (the owner of its first float
// and how many floats each owner has, in blocks); the two become
//
//   stepc_reduce_scatter_start_f32(input, started, first, per, id)
//
// and its wait is the all-reduce's. They count as reduce-scatters in the description.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/Passes.h"
#include "compiler/Codegen/Common/ViewRoot.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
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
constexpr llvm::StringLiteral kGatherStart = "stepc_all_gather_start_f32";
constexpr llvm::StringLiteral kStart = "stepc_all_reduce_start_f32";
constexpr llvm::StringLiteral kWait = "stepc_all_reduce_wait_f32";
constexpr llvm::StringLiteral kScatter = "stepc_reduce_scatter_start_f32";
constexpr llvm::StringLiteral kOwner = "stepc_reduce_scatter_owner";  // StepToLinalg's

// The owner call the lowering put before a reduce-scatter's start, or null: the nearest call
// before `copy` in its block, with no other collective in between.
mlir::func::CallOp ownerCall(mlir::linalg::CopyOp copy) {
  for (mlir::Operation *op = copy->getPrevNode(); op; op = op->getPrevNode()) {
    if (auto call = llvm::dyn_cast<mlir::func::CallOp>(op))
      if (call.getCallee() == kOwner) return call;
    if (op->hasAttr("step.collective")) return nullptr;
  }
  return nullptr;
}

// The parameter `whole` is all of, if the gather writes one in place: its argument.
mlir::BlockArgument gatheredParameter(mlir::linalg::CopyOp copy) {
  mlir::Value whole = copy.getOutputs()[0];
  mlir::BlockArgument arg = rootArgument(whole);
  auto func = arg ? llvm::dyn_cast<mlir::func::FuncOp>(arg.getOwner()->getParentOp()) : nullptr;
  if (!func || arg.getOwner() != &func.getBody().front()) return {};
  auto role = func.getArgAttrOfType<mlir::StringAttr>(arg.getArgNumber(), "step.role");
  auto argType = llvm::dyn_cast<mlir::MemRefType>(arg.getType());
  auto type = llvm::cast<mlir::MemRefType>(whole.getType());
  if (!role || role.getValue() != "param" || !argType || !argType.hasStaticShape() ||
      argType.getNumElements() != type.getNumElements())
    return {};
  return arg;
}

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
  using impl::CollectivesToRuntimeBase<CollectivesToRuntimePass>::CollectivesToRuntimeBase;
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::MLIRContext *ctx = &getContext();
    llvm::SmallVector<mlir::linalg::CopyOp> copies;
    module.walk([&](mlir::linalg::CopyOp copy) {
      if (copy->hasAttr(kCollective)) copies.push_back(copy);
    });
    if (copies.empty()) return;
    auto text = module->getAttrOfType<mlir::StringAttr>("step.program");
    rt::ProgramDescription d;
    if (text)
      if (rt::Status s = rt::parseProgramDescription(text.str(), d); !s.ok()) {
        module.emitError("bad `step.program` description: ") << s.message();
        return signalPassFailure();
      }
    // The gathers to defer: into a parameter, in a function whose reductions overlap.
    llvm::DenseMap<mlir::Operation *, mlir::BlockArgument> deferred;
    llvm::DenseMap<mlir::Operation *, mlir::Operation *> lastDeferred;  // by function
    if (deferGathers) {
      llvm::DenseSet<mlir::Operation *> overlapping;
      for (mlir::linalg::CopyOp copy : copies) {
        llvm::StringRef kind = copy->getAttrOfType<mlir::StringAttr>(kCollective).getValue();
        // (a reduce-scatter is started either way; an all-reduce only when they overlap)
        if (kind == "all_reduce_start")
          overlapping.insert(copy->getParentOfType<mlir::func::FuncOp>());
      }
      for (mlir::linalg::CopyOp copy : copies) {
        auto func = copy->getParentOfType<mlir::func::FuncOp>();
        if (copy->getAttrOfType<mlir::StringAttr>(kCollective).getValue() != "all_gather" ||
            copy->hasAttr("step.norm_shares") || !overlapping.contains(func) ||
            copy->getParentOp() != func)  // at the step's top level, after everything
          continue;
        if (mlir::BlockArgument param = gatheredParameter(copy)) {
          deferred[copy] = param;
          lastDeferred[func] = copy;
        }
      }
    }
    // A deferred gather's rounds: the layers of a rank's block of a stacked parameter.
    auto rounds = [&](mlir::BlockArgument param) -> int64_t {
      auto func = llvm::cast<mlir::func::FuncOp>(param.getOwner()->getParentOp());
      auto name = func.getArgAttrOfType<mlir::StringAttr>(param.getArgNumber(), "step.name");
      auto shards = func->getAttrOfType<mlir::IntegerAttr>("step.shard_optimizer");
      auto type = llvm::cast<mlir::MemRefType>(param.getType());
      if (!name || !shards || shards.getInt() < 1 || type.getRank() == 0) return 1;
      for (const rt::ParamSpec &p : d.info.params)
        if (p.name == name.getValue() && p.stackedDims > 0 &&
            type.getDimSize(0) % shards.getInt() == 0)
          return std::max<int64_t>(1, type.getDimSize(0) / shards.getInt());
      return 1;
    };
    mlir::OpBuilder b(ctx);
    auto unranked = mlir::UnrankedMemRefType::get(b.getF32Type(), 0);
    auto declare = [&](llvm::StringRef name) {
      auto callee = module.lookupSymbol<mlir::func::FuncOp>(name);
      if (!callee) {
        mlir::OpBuilder top = mlir::OpBuilder::atBlockEnd(module.getBody());
        llvm::SmallVector<mlir::Type> args{unranked, unranked, top.getI64Type()};
        if (name == kScatter || name == kGatherStart)
          args.append({top.getI64Type(), top.getI64Type()});
        callee = top.create<mlir::func::FuncOp>(module.getLoc(), name,
                                                top.getFunctionType(args, {}));
        callee.setPrivate();
        callee->setAttr("llvm.emit_c_interface", b.getUnitAttr());
      }
      return callee;
    };
    int64_t bytes = 0, id = 0, gathers = 0, gatherBytes = 0, waits = 0, starts = 0,
            scatters = 0, scatterBytes = 0, shareGathers = 0;
    for (mlir::linalg::CopyOp copy : copies) {
      auto attr = copy->getAttrOfType<mlir::StringAttr>(kCollective);
      llvm::StringRef kind = attr.getValue();
      bool gather = kind == "all_gather", start = kind == "all_reduce_start",
           wait = kind == "all_reduce_wait", scatter = kind == "reduce_scatter_start";
      if (kind != "all_reduce_sum" && !gather && !start && !wait && !scatter) {
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
      mlir::func::CallOp owner = scatter ? ownerCall(copy) : nullptr;
      bool shares = gather && copy->hasAttr("step.norm_shares");  // the norms', not parameters
      if (scatter && (!owner || !owner->use_empty())) {
        copy.emitError() << "a reduce-scatter's start without its owner call before it (a "
                            "compiler bug)";
        return signalPassFailure();
      }
      b.setInsertionPoint(copy);
      mlir::Value inView = b.create<mlir::memref::CastOp>(loc, unranked, in);
      mlir::Value outView = b.create<mlir::memref::CastOp>(loc, unranked, out);
      mlir::Value index = b.create<mlir::arith::ConstantIntOp>(loc, id++, 64);
      auto defer = deferred.find(copy);
      bool later = defer != deferred.end();
      llvm::StringRef callee = later   ? kGatherStart
                               : gather  ? kAllGather
                               : start ? kStart
                               : wait  ? kWait
                               : scatter ? kScatter
                                         : kAllReduce;
      llvm::SmallVector<mlir::Value> args{inView, outView, index};
      if (scatter) {
        args.insert(args.begin() + 2, owner.getOperands().begin(), owner.getOperands().end());
        owner.erase();
      }
      if (later) {
        args.insert(args.begin() + 2,
                    {b.create<mlir::arith::ConstantIntOp>(loc, rounds(defer->second), 64),
                     b.create<mlir::arith::ConstantIntOp>(
                         loc, lastDeferred.lookup(copy->getParentOfType<mlir::func::FuncOp>()) ==
                                  copy.getOperation(),
                         64)});
      }
      auto call = b.create<mlir::func::CallOp>(loc, declare(callee), args);
      copy.erase();
      if (wait) {  // its starts counted the reduction
        ++waits;
        continue;
      }
      // A start in a layer loop reduces one layer's slice per iteration.
      int64_t trips = 1;
      for (auto loop = call->getParentOfType<mlir::scf::ForOp>(); loop;
           loop = loop->getParentOfType<mlir::scf::ForOp>())
        if (std::optional<int64_t> n = mlir::constantTripCount(
                loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
          trips *= *n;
      if (shares) {
        ++shareGathers;
        continue;
      }
      (gather ? gatherBytes : scatter ? scatterBytes : bytes) += type.getNumElements() * 4 * trips;
      gathers += gather;
      starts += start;
      scatters += scatter;
    }
    if (auto decl = module.lookupSymbol<mlir::func::FuncOp>(kOwner);
        decl && decl.isDeclaration() && decl.symbolKnownUseEmpty(module))
      decl.erase();
    if (!text) return;  // a bare module (a lit test of this pass alone)
    d.info.allReduces = id - gathers - waits - scatters - shareGathers;
    d.info.normShareGathers = shareGathers;
    d.info.reduceScatters = scatters;
    d.info.reduceScatterBytes = scatterBytes;
    d.info.overlappedReductions = starts;
    d.info.allReduceBytes = bytes;
    d.info.allGathers = gathers;
    d.info.deferredGathers = static_cast<int64_t>(deferred.size());
    d.info.allGatherBytes = gatherBytes;
    module->setAttr("step.program", mlir::StringAttr::get(ctx, rt::writeProgramDescription(d)));
  }
};

}  // namespace

}  // namespace stepc::codegen
