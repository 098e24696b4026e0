//===- CheckFinite.cpp - --step-check-finite (stepc compile --debug-nan) -===//
//
// The first NaN or Inf of a step, found where it is made. After every kernel call and library
// GEMM of the host plan (@train_step, @eval_loss) it calls the runtime's
// stepc_check_finite_f32(output, id) on each f32 buffer the command writes: a kernel's outputs
// are the arguments its linalg ops write (through views), a GEMM's its C / D operand. The
// runtime records the first non-finite value a step produces and the step fails with what the
// check id names: the model op the kernel was lowered from (StepToLinalg names every op's
// location after it), as "model.mlir:12:8: op 'step.rsqrt' (kernel_7_generic, output 1)",
// listed in the step.program description's debugChecks. A fused kernel is named after its
// root op, the last one of the group. Costs a pass over every output: a debugging build. A
// CPU pass: the checks read the outputs on the host, right after each command.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/LLVMCPU/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Location.h"
#include "runtime/formats/ProgramDescription.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_CHECKFINITE
#include "compiler/Codegen/LLVMCPU/Passes.h.inc"

namespace {

constexpr llvm::StringLiteral kCheck = "stepc_check_finite_f32";

// "file:line:col: op 'step.x'" from a location StepToLinalg named; "file:line:col" or "?"
// without.
std::string describeLocation(mlir::Location loc) {
  std::string where, name;
  loc->walk([&](mlir::Location l) {
    if (auto named = llvm::dyn_cast<mlir::NameLoc>(l); named && name.empty())
      name = named.getName().str();
    if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(l); file && where.empty())
      where = (file.getFilename().str() + ":" + std::to_string(file.getLine()) + ":" +
               std::to_string(file.getColumn()));
    return mlir::WalkResult::advance();
  });
  if (where.empty()) where = "?";
  if (name.empty()) return where;
  // Autodiff names a gradient's ops "gradient of step.x" (Autodiff.cpp).
  llvm::StringRef text(name);
  if (text.consume_front("gradient of ")) return where + ": the gradient of op '" + text.str() + "'";
  return where + ": op '" + name + "'";
}

// The block argument `v` is a view of, through the view ops between them; null if none.
mlir::BlockArgument viewedArgument(mlir::Value v) {
  while (mlir::Operation *def = v.getDefiningOp()) {
    if (!llvm::isa<mlir::memref::SubViewOp, mlir::memref::ExpandShapeOp,
                   mlir::memref::CollapseShapeOp, mlir::memref::CastOp,
                   mlir::memref::ReinterpretCastOp>(def))
      return nullptr;
    v = def->getOperand(0);
  }
  return llvm::dyn_cast<mlir::BlockArgument>(v);
}

// The argument positions a kernel writes, in order, and the location of its root op. Fills
// are left out: a max-reduction starts from a fill of -Inf, by design.
llvm::SmallVector<unsigned> writtenArguments(mlir::func::FuncOp kernel, mlir::Location &root) {
  llvm::SmallVector<unsigned> written;
  root = kernel.getLoc();
  kernel.walk([&](mlir::linalg::LinalgOp op) {
    if (llvm::isa<mlir::linalg::FillOp>(op)) return;
    root = op->getLoc();
    for (mlir::Value init : op.getDpsInits())
      if (mlir::BlockArgument arg = viewedArgument(init);
          arg && arg.getOwner()->getParentOp() == kernel &&
          !llvm::is_contained(written, arg.getArgNumber()))
        written.push_back(arg.getArgNumber());
  });
  return written;
}

struct CheckFinitePass : impl::CheckFiniteBase<CheckFinitePass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::MLIRContext *ctx = &getContext();
    mlir::OpBuilder b(ctx);
    b.setInsertionPointToEnd(module.getBody());
    auto unranked = mlir::UnrankedMemRefType::get(b.getF32Type(), 0);
    auto check = module.lookupSymbol<mlir::func::FuncOp>(kCheck);
    if (!check) {
      check = b.create<mlir::func::FuncOp>(module.getLoc(), kCheck,
                                           b.getFunctionType({unranked, b.getI64Type()}, {}));
      check.setPrivate();
      check->setAttr("llvm.emit_c_interface", b.getUnitAttr());
    }
    std::vector<std::string> checks;
    for (llvm::StringRef entry : {"train_step", "eval_loss"}) {
      auto fn = module.lookupSymbol<mlir::func::FuncOp>(entry);
      if (!fn || fn.isExternal()) continue;
      llvm::SmallVector<mlir::func::CallOp> calls;
      fn.walk([&](mlir::func::CallOp call) { calls.push_back(call); });
      for (mlir::func::CallOp call : calls) {
        auto callee = module.lookupSymbol<mlir::func::FuncOp>(call.getCallee());
        if (!callee) continue;
        llvm::SmallVector<unsigned> outputs;
        mlir::Location root = call.getLoc();
        std::string what;
        if (callee->hasAttr("step.kernel")) {
          outputs = writtenArguments(callee, root);
          what = callee.getSymName().str();
        } else if (call.getCallee().starts_with("stepc_matmul") ||
                   call.getCallee().starts_with("stepc_batch_matmul")) {
          outputs = {2};  // C, or the epilogue's D
          what = "GEMM " + call.getCallee().str();
        } else {
          continue;
        }
        // After the command's profile bracket (OutlineKernels), so checks are not timed as it.
        mlir::Operation *after = call;
        if (auto exit = llvm::dyn_cast_or_null<mlir::func::CallOp>(call->getNextNode());
            exit && exit.getCallee() == "stepc_profile_exit")
          after = exit;
        b.setInsertionPointAfter(after);
        for (auto [k, index] : llvm::enumerate(outputs)) {
          mlir::Value out = call.getOperand(index);
          auto type = llvm::dyn_cast<mlir::MemRefType>(out.getType());
          if (!type || !type.getElementType().isF32()) continue;
          mlir::Location loc = call.getLoc();
          mlir::Value view = b.create<mlir::memref::CastOp>(loc, unranked, out);
          mlir::Value id = b.create<mlir::arith::ConstantIntOp>(loc, checks.size(), 64);
          b.create<mlir::func::CallOp>(loc, check, mlir::ValueRange{view, id});
          checks.push_back(describeLocation(root) + " (" + what + " in @" + entry.str() +
                           ", output " + std::to_string(k) + ")");
        }
      }
    }
    auto text = module->getAttrOfType<mlir::StringAttr>("step.program");
    if (!text) {
      module.emitError("--step-check-finite expects the step.program description");
      return signalPassFailure();
    }
    rt::ProgramDescription d;
    if (rt::Status s = rt::parseProgramDescription(text.str(), d); !s.ok()) {
      module.emitError("bad `step.program` description: ") << s.message();
      return signalPassFailure();
    }
    d.debugChecks = std::move(checks);
    module->setAttr("step.program", mlir::StringAttr::get(ctx, rt::writeProgramDescription(d)));
  }
};

}  // namespace

}  // namespace stepc::codegen
