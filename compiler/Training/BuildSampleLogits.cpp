//===- BuildSampleLogits.cpp - --step-build-sample-logits -----------------===//
//
// The generation program next to the training step: @sample_logits(params, tokens, position)
// -> the next-token logits [B, V] of every row, for `NAME sample`. It is the model's forward
// (NextTokenForward.h: no dropout) over the whole window, read at `position`: a row's window
// holds its context from position 0, right-padded, so for a causal model position p predicts
// the token after the first p + 1 tokens, whatever the padding after them holds. (Reading a
// fixed last position of a left-padded window would move every token as the context grows, and
// no per-position state, as @sample_step keeps, could follow that.) Models that are not
// language models get no @sample_logits and their executables say so.
//
//===----------------------------------------------------------------------===//
#include "compiler/Autodiff/GradBuilder.h"
#include "compiler/Training/NextTokenForward.h"
#include "compiler/Training/Passes.h"

namespace stepc::train {

#define GEN_PASS_DEF_BUILDSAMPLELOGITS
#include "compiler/Training/Passes.h.inc"

namespace {

struct BuildSampleLogitsPass : impl::BuildSampleLogitsBase<BuildSampleLogitsPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    if (module.lookupSymbol<mlir::func::FuncOp>("sample_logits")) return;
    std::string whyNot;
    auto forward = buildNextTokenForward(module, "sample_logits", whyNot);
    if (failed(forward)) {
      if (whyNot.empty()) signalPassFailure();
      return;  // not a language model: no sampling program
    }
    mlir::func::FuncOp fn = forward->fn;
    int64_t batch = forward->batch, seq = forward->seq, vocab = forward->vocab;
    auto ret = llvm::cast<mlir::func::ReturnOp>(fn.getBody().front().getTerminator());
    mlir::OpBuilder b(ret);
    unsigned at = fn.getNumArguments();
    fn.insertArgument(at, mlir::RankedTensorType::get({}, b.getI32Type()),
                      b.getDictionaryAttr({b.getNamedAttr("step.role", b.getStringAttr("position")),
                                           b.getNamedAttr("step.name", b.getStringAttr("position"))}),
                      fn.getLoc());
    mlir::Value position = fn.getArgument(at);
    ad::GradBuilder g(b, ret.getOperand(0).getLoc());
    // Row r's logits at `position` are row r * T + position of the [B * T, V] logits: a gather,
    // which step.embedding is.
    mlir::Value rows = g.reshape(ret.getOperand(0), {batch * seq, vocab});
    mlir::Value starts = g.mul(
        g.one<step::IotaOp>({}, {g.arrayAttr("shape", {batch}), g.i64Attr("axis", 0),
                                 g.attr("dtype", mlir::TypeAttr::get(b.getI32Type())),
                                 g.i64Attr("offset", 0)}),
        g.scalar(static_cast<double>(seq), b.getI32Type()));
    mlir::Value ids = g.add(starts, position);
    mlir::Value next = g.one<step::EmbeddingOp>({rows, ids});  // [B, V]
    if (!ad::elementTypeOf(next).isF32())
      next = g.one<step::CastOp>({next}, {g.attr("to", mlir::TypeAttr::get(b.getF32Type()))});
    if (g.failed()) return signalPassFailure();
    ret->setOperands(next);
    fn.setFunctionType(mlir::FunctionType::get(&getContext(), fn.getBody().front().getArgumentTypes(),
                                               {next.getType()}));
    fn.setResultAttrs(0, b.getDictionaryAttr({b.getNamedAttr("step.role", b.getStringAttr("logits")),
                                              b.getNamedAttr("step.name", b.getStringAttr("logits"))}));
  }
};

}  // namespace
}  // namespace stepc::train
