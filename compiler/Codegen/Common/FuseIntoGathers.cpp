//===- FuseIntoGathers.cpp - --step-fuse-into-gathers ---------------------===//
//
// An elementwise producer whose result is only read element by element, by tensor.extract in
// other kernels' bodies (a gather: step.gather_rows; a scan loop: the routing), directly or
// through a collapse_shape, is computed at each read instead: the read's indices become the
// producer's loop indices (a collapsed index delinearized over its group), its inputs are read
// there through their maps, and its payload is cloned in. The producer's tensor is never
// written.
//
// Why: the backward of an MoE's combine scales dY by each choice's gate ([T, k, D]: dY read
// once per choice) and gathers the scaled rows into expert order for the experts' GEMMs. The
// scaled copy was a kernel of its own, written (8 MiB at T = 4096, D = 256, k = 2) and read
// back once by the gather; now the gather reads dY's row and the gate itself.
//
// Only cheap producers (a few arith ops, like --step-fuse-elementwise's clones), reading
// their inputs through dims and constant indices, written into a fresh tensor, not reading a
// loop's carried value. Their inputs then live until the last read, in place of the result:
// they must not be larger than it, and nothing in between may write into them.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/Delinearize.h"
#include "compiler/Codegen/Common/FusionRules.h"
#include "compiler/Codegen/Common/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_FUSEINTOGATHERS
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

constexpr int kMaxOps = 4;  // as --step-fuse-elementwise's cheap clones

// A read of `value` inside another linalg.generic's body, or inside a scan loop (top_k's pick
// of a slot, read by route_tokens' loop, is then computed there from the slots).
bool isGatherRead(mlir::Operation *user, mlir::Value value) {
  auto extract = llvm::dyn_cast<mlir::tensor::ExtractOp>(user);
  return extract && extract.getTensor() == value &&
         (extract->getParentOfType<mlir::linalg::GenericOp>() || insideScan(extract));
}

// The producer's shape and payload, whatever its uses.
bool cheapProducer(mlir::linalg::GenericOp op) {
  if (op->getNumResults() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() || op->hasAttr("step.collective"))
    return false;
  mlir::OpOperand *init = op.getDpsInitOperand(0);
  auto type = llvm::dyn_cast<mlir::RankedTensorType>(init->get().getType());
  if (!type || !type.hasStaticShape() || !op.getMatchingIndexingMap(init).isIdentity() ||
      op.payloadUsesValueFromOperand(init) || !init->get().getDefiningOp<mlir::tensor::EmptyOp>())
    return false;
  int ops = 0;
  for (mlir::Operation &inner : op.getRegion().front().without_terminator()) {
    if (llvm::isa<mlir::linalg::IndexOp>(inner)) continue;
    if (!llvm::isa<mlir::arith::ArithDialect>(inner.getDialect()) || ++ops > kMaxOps) return false;
  }
  int64_t inputBytes = 0;
  for (mlir::OpOperand *input : op.getDpsInputOperands()) {
    if (isLoopCarried(input->get())) return false;
    auto inputType = llvm::dyn_cast<mlir::RankedTensorType>(input->get().getType());
    if (!inputType || !inputType.hasStaticShape()) return false;
    for (mlir::AffineExpr expr : op.getMatchingIndexingMap(input).getResults())
      if (!llvm::isa<mlir::AffineDimExpr, mlir::AffineConstantExpr>(expr)) return false;
    inputBytes += tensorBytes(inputType);
  }
  return inputBytes <= tensorBytes(type);
}

// A read, and the collapse it reads the producer through (or null).
using ExtractThrough = std::pair<mlir::tensor::ExtractOp, mlir::tensor::CollapseShapeOp>;

// The reads to rewrite, if every use of the producer is one.
std::optional<llvm::SmallVector<ExtractThrough>> gatherReads(mlir::linalg::GenericOp op) {
  llvm::SmallVector<ExtractThrough> reads;
  mlir::Value result = op->getResult(0);
  for (mlir::Operation *user : result.getUsers()) {
    if (isGatherRead(user, result)) {
      reads.push_back({llvm::cast<mlir::tensor::ExtractOp>(user), {}});
      continue;
    }
    auto collapse = llvm::dyn_cast<mlir::tensor::CollapseShapeOp>(user);
    if (!collapse || collapse->use_empty()) return std::nullopt;
    for (mlir::Operation *reader : collapse->getUsers()) {
      if (!isGatherRead(reader, collapse.getResult())) return std::nullopt;
      reads.push_back({llvm::cast<mlir::tensor::ExtractOp>(reader), collapse});
    }
  }
  if (reads.empty()) return std::nullopt;
  return reads;
}

// Whether an op between the producer and a read writes into one of its inputs (a value copied
// into a loop's iteration argument in place): the read would see the new value.
bool inputOverwrittenBefore(mlir::linalg::GenericOp producer, mlir::Operation *read) {
  mlir::Operation *at = producer->getBlock()->findAncestorOpInBlock(*read);
  if (!at) return true;
  llvm::SmallPtrSet<mlir::Value, 4> inputs;
  for (mlir::Value input : producer.getDpsInputs()) inputs.insert(input);
  return writtenBetween(inputs, producer, at);
}

// The producer's value at the element `read` reads, computed where `read` is.
void recompute(mlir::linalg::GenericOp producer, mlir::tensor::ExtractOp read,
               mlir::tensor::CollapseShapeOp collapse) {
  mlir::OpBuilder b(read);
  mlir::Location loc = read.getLoc();
  auto shape = llvm::cast<mlir::RankedTensorType>(producer->getResult(0).getType()).getShape();
  llvm::SmallVector<mlir::Value> indices;
  if (!collapse) {
    indices.assign(read.getIndices().begin(), read.getIndices().end());
  } else {
    for (auto [group, index] : llvm::zip(collapse.getReassociationIndices(), read.getIndices())) {
      llvm::SmallVector<int64_t> trips, zeros(group.size(), 0), ones(group.size(), 1);
      for (int64_t d : group) trips.push_back(shape[d]);
      llvm::append_range(indices, delinearize(b, loc, index, trips, zeros, ones));
    }
  }
  mlir::Block &body = producer.getRegion().front();
  mlir::IRMapping mapping;
  for (mlir::OpOperand *input : producer.getDpsInputOperands()) {
    llvm::SmallVector<mlir::Value> at;
    for (mlir::AffineExpr expr : producer.getMatchingIndexingMap(input).getResults()) {
      if (auto dim = llvm::dyn_cast<mlir::AffineDimExpr>(expr))
        at.push_back(indices[dim.getPosition()]);
      else
        at.push_back(b.create<mlir::arith::ConstantIndexOp>(
            loc, llvm::cast<mlir::AffineConstantExpr>(expr).getValue()));
    }
    mapping.map(body.getArgument(input->getOperandNumber()),
                b.create<mlir::tensor::ExtractOp>(loc, input->get(), at).getResult());
  }
  for (mlir::Operation &inner : body.without_terminator()) {
    if (auto index = llvm::dyn_cast<mlir::linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), indices[index.getDim()]);
      continue;
    }
    b.clone(inner, mapping);
  }
  read.getResult().replaceAllUsesWith(mapping.lookupOrDefault(body.getTerminator()->getOperand(0)));
  read->erase();
}

struct FuseIntoGathersPass : impl::FuseIntoGathersBase<FuseIntoGathersPass> {
  void runOnOperation() override {
    llvm::SmallVector<mlir::linalg::GenericOp> producers;
    getOperation().walk([&](mlir::linalg::GenericOp op) { producers.push_back(op); });
    for (mlir::linalg::GenericOp producer : producers) {
      if (!cheapProducer(producer)) continue;
      auto reads = gatherReads(producer);
      auto elements = llvm::cast<mlir::RankedTensorType>(producer->getResult(0).getType())
                          .getNumElements();
      if (!reads || llvm::any_of(*reads, [&](const ExtractThrough &read) {
            mlir::Operation *extract = read.first;
            // A scan loop's read computes the producer as often as it runs: at most once
            // per element.
            bool scanRead = !extract->getParentOfType<mlir::linalg::GenericOp>();
            return extract->getParentOfType<mlir::linalg::GenericOp>() == producer ||
                   inputOverwrittenBefore(producer, extract) ||
                   (scanRead && runsPer(extract, producer->getBlock()) > elements);
          }))
        continue;
      for (auto [read, collapse] : *reads) recompute(producer, read, collapse);
      for (mlir::Operation *user : llvm::make_early_inc_range(producer->getResult(0).getUsers()))
        if (user->use_empty()) user->erase();  // the collapses
      if (producer->use_empty()) producer->erase();
    }
  }
};

}  // namespace

}  // namespace stepc::codegen
