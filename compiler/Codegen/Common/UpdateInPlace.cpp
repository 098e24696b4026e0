//===- UpdateInPlace.cpp - --step-update-in-place -------------------------===//
//
// Params and optimizer state are updated in place. @train_step returns each new param and
// state tensor; this ties every such result to the argument it replaces with
// `bufferization.materialize_in_destination`, so that one-shot bufferization writes the update
// straight into the argument's buffer (after --eliminate-empty-tensors has made the producing
// kernel's output that buffer) and --drop-equivalent-buffer-results then removes the result.
// The runtime has nothing to copy back, and the step needs no second copy of the params and
// state. Where an in-place write would clobber a value still to be read, one-shot
// bufferization writes elsewhere and copies at the end instead: always correct, never silent.
//
// The kernel computing an update gets a tensor.empty of its own first: a shared one would be
// replaced by the first destination for every user (upstream's elimination rewrites the
// value, not the use). Only those: giving every tensor.empty one use makes one-shot
// bufferization allocate far more (byte_lm_residual_small's arena grew from 108 to 172 MB). A
// shared zero fill (CSE merges the zero-initialised outputs of GEMMs of one shape) makes every
// user but one write out of place: a copy of zeros, then a GEMM that accumulates onto them;
// with a fill of its own per user, each GEMM overwrites its output instead (beta = 0, see
// --step-contractions-to-library). Fills are cheap to repeat; copies of whole outputs are not.
//
// The description (`step.program`) drops those results from @train_step's bindings: they
// leave the signature in the `buffers` stage, and --step-pack-entry-points checks that the
// description and the final signature agree.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/Passes.h"
#include "compiler/Codegen/Common/TieToDestination.h"
#include "compiler/Training/UpdatedArguments.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "runtime/formats/ProgramDescription.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_UPDATEINPLACE
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

// Gives every use of a fill of a tensor.empty its own fill.
void untieDestinations(mlir::func::FuncOp fn) {
  auto split = [](mlir::Operation *op) {
    auto uses = llvm::to_vector(llvm::make_pointer_range(op->getResult(0).getUses()));
    // The copies go right before their users, which may be inside a loop: one made outside
    // would hold a buffer for the whole loop.
    for (size_t u = 1; u < uses.size(); ++u) {
      mlir::OpBuilder b(uses[u]->getOwner());
      uses[u]->set(b.clone(*op)->getResult(0));
    }
  };
  llvm::SmallVector<mlir::linalg::FillOp> fills;
  fn.walk([&](mlir::linalg::FillOp fill) {
    if (fill.hasPureTensorSemantics() && fill.getOutputs()[0].getDefiningOp<mlir::tensor::EmptyOp>())
      fills.push_back(fill);
  });
  for (mlir::linalg::FillOp fill : fills) split(fill);
}

// Whether `value` is computed in a loop over `dest` (--step-sink-layer-updates): a loop result
// that starts from `dest` (or from its reshape, the result reshaped back: a segmented stack)
// and whose iterations insert each slice, computed by a kernel (whose output is untied, to
// become the slice) or by an inner loop over that slice.
bool updatedByLoop(mlir::Value value, mlir::Value dest) {
  if (auto collapse = value.getDefiningOp<mlir::tensor::CollapseShapeOp>()) {
    auto loop = collapse.getSrc().getDefiningOp<mlir::scf::ForOp>();
    if (!loop) return false;
    unsigned r = llvm::cast<mlir::OpResult>(collapse.getSrc()).getResultNumber();
    auto expand = loop.getInitArgs()[r].getDefiningOp<mlir::tensor::ExpandShapeOp>();
    if (!expand || expand.getSrc() != dest ||
        expand.getReassociationIndices() != collapse.getReassociationIndices())
      return false;
    return updatedByLoop(collapse.getSrc(), expand.getResult());
  }
  auto loop = value.getDefiningOp<mlir::scf::ForOp>();
  if (!loop) return false;
  unsigned r = llvm::cast<mlir::OpResult>(value).getResultNumber();
  if (loop.getInitArgs()[r] != dest) return false;
  auto yield = llvm::cast<mlir::scf::YieldOp>(loop.getBody()->getTerminator());
  auto insert = yield.getOperand(r).getDefiningOp<mlir::tensor::InsertSliceOp>();
  if (!insert) return true;
  mlir::Value slice = insert.getSource();
  if (auto inner = slice.getDefiningOp<mlir::scf::ForOp>()) {
    unsigned ir = llvm::cast<mlir::OpResult>(slice).getResultNumber();
    auto extract = inner.getInitArgs()[ir].getDefiningOp<mlir::tensor::ExtractSliceOp>();
    if (extract && extract.getSource() == loop.getRegionIterArgs()[r] &&
        updatedByLoop(slice, extract.getResult()))
      return true;
  }
  untieOutput(slice);
  return true;
}

struct UpdateInPlacePass : impl::UpdateInPlaceBase<UpdateInPlacePass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    auto train = module.lookupSymbol<mlir::func::FuncOp>("train_step");
    for (auto fn : module.getOps<mlir::func::FuncOp>()) untieDestinations(fn);
    if (!train || train.isExternal()) return;
    if (llvm::any_of(train.getArgumentTypes(),
                     [](mlir::Type t) { return llvm::isa<mlir::BaseMemRefType>(t); })) {
      train.emitError("--step-update-in-place runs before bufferization");
      return signalPassFailure();
    }
    llvm::SmallVector<int> argOf = train::updatedArguments(train);
    auto ret = llvm::cast<mlir::func::ReturnOp>(train.getBody().back().getTerminator());
    mlir::OpBuilder b(ret);
    bool tied = false;
    for (unsigned i = 0; i < train.getNumResults(); ++i) {
      if (argOf[i] < 0) continue;
      mlir::Value dest = train.getArgument(argOf[i]);
      mlir::Value value = ret.getOperand(i);
      if (value.getType() != dest.getType()) {
        auto name = train.getArgAttrOfType<mlir::StringAttr>(argOf[i], "step.name");
        ret.emitError("the update of '") << (name ? name.getValue() : "?") << "' has type "
                                         << value.getType() << ", its argument "
                                         << dest.getType();
        return signalPassFailure();
      }
      // The kernel that computes the update gets an output of its own, which
      // --eliminate-empty-tensors then replaces by the argument. An update computed layer by
      // layer in a loop over the argument (--step-sink-layer-updates) is inserted slice by
      // slice: each slice's kernel gets its own output, which becomes the argument's slice.
      if (updatedByLoop(value, dest)) {
        tied = true;
        continue;
      }
      ret.setOperand(i, tieToDestination(b, ret.getLoc(), value, dest));
      tied = true;
    }
    if (!tied) return;

    auto attr = module->getAttrOfType<mlir::StringAttr>("step.program");
    rt::ProgramDescription d;
    if (!attr || !rt::parseProgramDescription(attr.getValue().str(), d).ok()) {
      module.emitError("expected a valid `step.program` description (--step-describe-program)");
      return signalPassFailure();
    }
    std::vector<rt::Binding> kept;
    for (const rt::Binding &r : d.train.results)
      if (r.kind != rt::Binding::Kind::kParam && r.kind != rt::Binding::Kind::kState)
        kept.push_back(r);
    d.train.results = kept;
    module->setAttr("step.program",
                    mlir::StringAttr::get(&getContext(), rt::writeProgramDescription(d)));
  }
};

}  // namespace

}  // namespace stepc::codegen
