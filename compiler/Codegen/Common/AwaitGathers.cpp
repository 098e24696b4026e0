//===- AwaitGathers.cpp - --step-await-gathers -----------------------------===//
//
// --shard-optimizer's gathers of the updated parameters may be left running when the step
// returns (--step-collectives-to-runtime{defer-gathers}: stepc_all_gather_start_f32), so that
// they overlap the next step's forward instead of ending this one. Every command of the
// function that touches such a parameter, through any view of it, then first calls
//
//   stepc_all_gather_wait_f32(view)      (runtime/hal/cpu/Collectives.h)
//
// with the view it passes: the runtime waits only for the exchanges that write floats of
// that view (a layer's rows of a stacked parameter inside the forward's layer loop), and
// returns at once when none is pending. Waits go before commands of the step that started
// the gathers as well, so a read after the start in the same step is safe too. The waits
// share one profile entry, "all_gather_wait": their time is communication the step waited
// for.
//
// Runs on the host plan after kernel outlining: the commands are calls (kernels, GEMMs,
// runtime functions), copies and the few ops left on the host; views (subview, reshapes,
// casts) read nothing and get no wait. The other entry points (eval, sampling) read the
// parameters only after the runtime settled the gathers (CompiledProgram).
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/Passes.h"
#include "compiler/Codegen/Common/ViewRoot.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "runtime/formats/ProgramDescription.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_AWAITGATHERS
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

constexpr llvm::StringLiteral kStart = "stepc_all_gather_start_f32";
constexpr llvm::StringLiteral kWait = "stepc_all_gather_wait_f32";

bool isView(mlir::Operation *op) {
  return llvm::isa<mlir::ViewLikeOpInterface, mlir::memref::CastOp,
                   mlir::memref::ExtractStridedMetadataOp, mlir::memref::DeallocOp>(op);
}

// The runtime's profile hooks (runtime/hal/Profile.h), as --step-outline-kernels declares them.
mlir::func::FuncOp profileFn(mlir::ModuleOp module, llvm::StringRef name) {
  if (auto fn = module.lookupSymbol<mlir::func::FuncOp>(name)) return fn;
  mlir::OpBuilder b = mlir::OpBuilder::atBlockBegin(module.getBody());
  auto fn = b.create<mlir::func::FuncOp>(module.getLoc(), name,
                                         b.getFunctionType({b.getI64Type()}, {}));
  fn.setPrivate();
  return fn;
}

// One profile entry for all the waits (STEPC_PROFILE=1 and the data-parallel benchmark count
// the time in them as exposed communication), appended to the description's names; its id.
int64_t addProfileEntry(mlir::ModuleOp module) {
  auto text = module->getAttrOfType<mlir::StringAttr>("step.program");
  rt::ProgramDescription d;
  if (!text || !rt::parseProgramDescription(text.getValue().str(), d).ok())
    return 0;  // a bare module (this pass's lit test): no profile to name
  auto id = static_cast<int64_t>(d.info.kernelNames.size());
  d.info.kernelNames.push_back("all_gather_wait (the deferred gathers, where a parameter is used)");
  d.info.kernelBytes.push_back(0);
  d.info.kernelFlops.push_back(0);
  module->setAttr("step.program",
                  mlir::StringAttr::get(module.getContext(), rt::writeProgramDescription(d)));
  return id;
}

struct AwaitGathersPass : impl::AwaitGathersBase<AwaitGathersPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::OpBuilder b(&getContext());
    auto unranked = mlir::UnrankedMemRefType::get(b.getF32Type(), 0);
    mlir::func::FuncOp wait;
    int64_t profileId = -1;
    for (auto func : llvm::to_vector(module.getOps<mlir::func::FuncOp>())) {
      if (func.isDeclaration()) continue;
      // The parameters this function's deferred gathers write.
      llvm::DenseSet<mlir::BlockArgument> gathered;
      func.walk([&](mlir::func::CallOp call) {
        if (call.getCallee() != kStart) return;
        mlir::BlockArgument arg = rootArgument(call.getOperand(1));
        if (arg && arg.getOwner() == &func.getBody().front()) gathered.insert(arg);
      });
      if (gathered.empty()) continue;
      if (!wait) {
        wait = module.lookupSymbol<mlir::func::FuncOp>(kWait);
        if (!wait) {
          mlir::OpBuilder top = mlir::OpBuilder::atBlockEnd(module.getBody());
          wait = top.create<mlir::func::FuncOp>(module.getLoc(), kWait,
                                                top.getFunctionType({unranked}, {}));
          wait.setPrivate();
          wait->setAttr("llvm.emit_c_interface", top.getUnitAttr());
        }
      }
      llvm::SmallVector<std::pair<mlir::Operation *, mlir::Value>> waits;
      mlir::WalkResult walked = func.walk([&](mlir::Operation *op) -> mlir::WalkResult {
        if (isView(op) || op->hasTrait<mlir::OpTrait::IsTerminator>())
          return mlir::WalkResult::advance();
        if (auto call = llvm::dyn_cast<mlir::func::CallOp>(op))
          if (call.getCallee() == kStart || call.getCallee() == kWait)
            return mlir::WalkResult::advance();
        llvm::SmallVector<mlir::Value> touched;
        for (mlir::Value v : op->getOperands()) {
          auto type = llvm::dyn_cast<mlir::MemRefType>(v.getType());
          if (!type || llvm::is_contained(touched, v)) continue;
          mlir::BlockArgument arg = rootArgument(v);
          if (!arg || !gathered.contains(arg)) continue;
          if (!type.getElementType().isF32()) {
            op->emitError() << "reads a gathered parameter as " << type
                            << ": the deferred gathers' waits take f32 views";
            return mlir::WalkResult::interrupt();
          }
          touched.push_back(v);
        }
        for (mlir::Value v : touched) waits.push_back({op, v});
        return mlir::WalkResult::advance();
      });
      if (walked.wasInterrupted()) return signalPassFailure();
      if (profileId < 0) profileId = addProfileEntry(module);
      for (auto [op, v] : waits) {
        b.setInsertionPoint(op);
        mlir::Location loc = op->getLoc();
        mlir::Value view = b.create<mlir::memref::CastOp>(loc, unranked, v);
        mlir::Value id = b.create<mlir::arith::ConstantIntOp>(loc, profileId, 64);
        b.create<mlir::func::CallOp>(loc, profileFn(module, "stepc_profile_enter"),
                                     mlir::ValueRange{id});
        b.create<mlir::func::CallOp>(loc, wait, mlir::ValueRange{view});
        b.create<mlir::func::CallOp>(loc, profileFn(module, "stepc_profile_exit"),
                                     mlir::ValueRange{id});
      }
    }
  }
};

}  // namespace

}  // namespace stepc::codegen
