//===- PackEntryPoints.cpp - --step-pack-entry-points ---------------------===//
//
// On the LLVM dialect: gives each lowered step function (@train_step, @eval_loss and, for a
// language model, @sample_logits and @sample_step) a packed entry point
// `void stepc_train_step(ptr buffers)` / `stepc_eval_loss` / `stepc_sample_logits` /
// `stepc_sample_step` that loads its N buffer pointers from an array and calls it, and embeds
// the module's `step.program` description as the NUL-terminated constant
// @stepc_program_description. The runtime (CompiledMain.cpp) links against exactly these
// symbols (the sampling ones weakly), whatever the model, so nothing model-specific is
// generated in C++.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/LLVMCPU/Passes.h"
#include "runtime/formats/ProgramDescription.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_PACKENTRYPOINTS
#include "compiler/Codegen/LLVMCPU/Passes.h.inc"

namespace {

struct PackEntryPointsPass : impl::PackEntryPointsBase<PackEntryPointsPass> {
  using PackEntryPointsBase::PackEntryPointsBase;

  mlir::LogicalResult pack(mlir::ModuleOp module, llvm::StringRef name, llvm::StringRef entry,
                           const rt::EntryDescription &described) {
    auto fn = module.lookupSymbol<mlir::LLVM::LLVMFuncOp>(name);
    if (!fn)
      return module.emitError("expected the lowered function @")
             << name << " (llvm.func) for the entry point " << entry;
    if (module.lookupSymbol(entry)) return mlir::success();  // already packed
    mlir::MLIRContext *ctx = module.getContext();
    auto ptr = mlir::LLVM::LLVMPointerType::get(ctx);
    for (mlir::Type t : fn.getFunctionType().getParams())
      if (t != ptr)
        return fn.emitError("every argument of a step function must lower to a pointer "
                            "(a statically shaped buffer), found ")
               << t;
    if (!llvm::isa<mlir::LLVM::LLVMVoidType>(fn.getFunctionType().getReturnType()))
      return fn.emitError("a step function must return through out-parameters");
    // The runtime passes one pointer per described argument and result, in that order: a
    // description that disagrees with the signature would bind the wrong buffers.
    size_t expected = described.args.size() + described.results.size();
    if (fn.getNumArguments() != expected)
      return fn.emitError("@") << name << " takes " << fn.getNumArguments()
                               << " buffers but its description binds " << expected << " ("
                               << described.args.size() << " arguments, "
                               << described.results.size() << " results)";
    mlir::OpBuilder b(ctx);
    b.setInsertionPointToEnd(module.getBody());
    mlir::Location loc = fn.getLoc();
    auto wrapper = b.create<mlir::LLVM::LLVMFuncOp>(
        loc, entry, mlir::LLVM::LLVMFunctionType::get(mlir::LLVM::LLVMVoidType::get(ctx), {ptr}));
    mlir::Block *block = wrapper.addEntryBlock(b);
    b.setInsertionPointToStart(block);
    llvm::SmallVector<mlir::Value> args;
    for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
      mlir::Value slot = b.create<mlir::LLVM::GEPOp>(
          loc, ptr, ptr, block->getArgument(0),
          llvm::ArrayRef<mlir::LLVM::GEPArg>{static_cast<int32_t>(i)});
      args.push_back(b.create<mlir::LLVM::LoadOp>(loc, ptr, slot));
    }
    b.create<mlir::LLVM::CallOp>(loc, fn, args);
    b.create<mlir::LLVM::ReturnOp>(loc, mlir::ValueRange{});
    // A second step in the same executable (the CUDA one) keeps its functions to itself.
    if (prefix != "stepc_")
      fn.setLinkageAttr(mlir::LLVM::LinkageAttr::get(ctx, mlir::LLVM::Linkage::Internal));
    return mlir::success();
  }

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    auto description = module->getAttrOfType<mlir::StringAttr>("step.program");
    if (!description) {
      module.emitError("expected the `step.program` description (--step-describe-program)");
      return signalPassFailure();
    }
    rt::ProgramDescription d;
    if (rt::Status s = rt::parseProgramDescription(description.getValue().str(), d); !s.ok()) {
      module.emitError("bad `step.program` description: ") << s.message();
      return signalPassFailure();
    }
    std::string train = prefix + "train_step", eval = prefix + "eval_loss",
                described = prefix + "program_description";
    if (failed(pack(module, "train_step", train, d.train)) ||
        failed(pack(module, "eval_loss", eval, d.eval)))
      return signalPassFailure();
    // Sampling runs on the CPU step only (one token at a time: launch-bound on a GPU); a
    // second step's copy stays its own.
    if (!d.sample.symbol.empty() && prefix == "stepc_" &&
        failed(pack(module, "sample_logits", prefix + "sample_logits", d.sample)))
      return signalPassFailure();
    if (!d.sampleStep.symbol.empty() && prefix == "stepc_" &&
        failed(pack(module, "sample_step", prefix + "sample_step", d.sampleStep)))
      return signalPassFailure();
    if (prefix != "stepc_")
      for (llvm::StringRef name : {"sample_logits", "sample_step"})
        if (auto sample = module.lookupSymbol<mlir::LLVM::LLVMFuncOp>(name))
          sample.setLinkageAttr(
              mlir::LLVM::LinkageAttr::get(module.getContext(), mlir::LLVM::Linkage::Internal));
    if (module.lookupSymbol(described)) return;
    mlir::OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    std::string text = description.getValue().str();
    text.push_back('\0');
    auto type = mlir::LLVM::LLVMArrayType::get(b.getI8Type(), text.size());
    b.create<mlir::LLVM::GlobalOp>(module.getLoc(), type, /*isConstant=*/true,
                                   mlir::LLVM::Linkage::External, described,
                                   b.getStringAttr(text));
  }
};

}  // namespace

}  // namespace stepc::codegen
