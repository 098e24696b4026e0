//===- BlockReduction.cpp - a row reduction shared by a GPU block's threads ===//
//
// See BlockReduction.h. The rows of the tile are a uniform loop (every thread of a block runs
// every iteration: its bounds depend on the block only), so the gpu.all_reduce inside it is
// reached by the whole block, as it must be.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/LLVMGPU/BlockReduction.h"

#include "compiler/Codegen/Common/Delinearize.h"

#include <limits>

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace stepc::codegen {

namespace ar = mlir::arith;
using Kind = mlir::gpu::AllReduceOperation;

std::optional<Kind> reductionKind(mlir::Operation *op) {
  if (llvm::isa<ar::AddFOp>(op)) return Kind::ADD;
  if (llvm::isa<ar::MulFOp>(op)) return Kind::MUL;
  if (llvm::isa<ar::MaximumFOp>(op)) return Kind::MAXIMUMF;
  if (llvm::isa<ar::MinimumFOp>(op)) return Kind::MINIMUMF;
  if (llvm::isa<ar::MaxNumFOp>(op)) return Kind::MAXNUMF;
  if (llvm::isa<ar::MinNumFOp>(op)) return Kind::MINNUMF;
  return std::nullopt;
}

namespace {

double identityOf(Kind kind) {
  // Exact identities: -0 + x is x for every x (+0 would turn -0 into +0), and maxnum/minnum
  // return the other operand for NaN (±inf would turn an all-NaN row into ±inf).
  double inf = std::numeric_limits<double>::infinity();
  switch (kind) {
    case Kind::MUL: return 1;
    case Kind::MAXIMUMF: return -inf;
    case Kind::MINIMUMF: return inf;
    case Kind::MAXNUMF: case Kind::MINNUMF: return std::numeric_limits<double>::quiet_NaN();
    default: return -0.0;
  }
}

}  // namespace

mlir::Value reductionIdentity(mlir::OpBuilder &b, mlir::Location loc, Kind kind, mlir::Type type) {
  return b.create<ar::ConstantOp>(loc, b.getFloatAttr(type, identityOf(kind)));
}

mlir::Value combine(mlir::OpBuilder &b, mlir::Location loc, Kind kind, mlir::Value lhs,
                    mlir::Value rhs) {
  switch (kind) {
    case Kind::MUL: return b.create<ar::MulFOp>(loc, lhs, rhs);
    case Kind::MAXIMUMF: return b.create<ar::MaximumFOp>(loc, lhs, rhs);
    case Kind::MINIMUMF: return b.create<ar::MinimumFOp>(loc, lhs, rhs);
    case Kind::MAXNUMF: return b.create<ar::MaxNumFOp>(loc, lhs, rhs);
    case Kind::MINNUMF: return b.create<ar::MinNumFOp>(loc, lhs, rhs);
    default: return b.create<ar::AddFOp>(loc, lhs, rhs);
  }
}

namespace {

mlir::Value product(mlir::OpBuilder &b, mlir::Location loc, llvm::ArrayRef<mlir::Value> sizes) {
  mlir::Value p = b.create<ar::ConstantIndexOp>(loc, 1);
  for (mlir::Value s : sizes) p = b.create<ar::MulIOp>(loc, p, s);
  return p;
}

// A single row at least this long is split over the grid (see BlockReduction.h).
constexpr int64_t kSplitLength = 1 << 16;
constexpr int64_t kFinishThreads = 256;

// The device buffer of `fn`'s per-block partials, every entry the identity between launches.
mlir::memref::GlobalOp partialsOf(mlir::gpu::GPUFuncOp fn, Kind kind, int64_t count) {
  auto module = fn->getParentOfType<mlir::gpu::GPUModuleOp>();
  mlir::OpBuilder b(module.getBody(), module.getBody()->begin());
  auto type = mlir::MemRefType::get({count}, b.getF32Type());
  auto init = mlir::DenseElementsAttr::get(
      mlir::RankedTensorType::get({count}, b.getF32Type()),
      llvm::APFloat(static_cast<float>(identityOf(kind))));
  return b.create<mlir::memref::GlobalOp>(fn.getLoc(), (fn.getName() + "_partials").str(),
                                          b.getStringAttr("private"), type, init,
                                          /*constant=*/false, /*alignment=*/nullptr);
}

// The second kernel of a split row: one block combines the partials (resetting them to the
// identity for the next launch) and thread 0 folds the total into the output element, at
// `indices` (constants) of the argument `out`.
mlir::gpu::GPUFuncOp finishKernel(mlir::gpu::GPUFuncOp fn, mlir::memref::GlobalOp partials,
                                  Kind kind, unsigned out, llvm::ArrayRef<int64_t> indices) {
  mlir::Location loc = fn.getLoc();
  mlir::OpBuilder b(fn);
  b.setInsertionPointAfter(fn);
  auto finish = b.create<mlir::gpu::GPUFuncOp>(loc, (fn.getName() + "_finish").str(),
                                               fn.getFunctionType());
  finish->setAttr(mlir::gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  b.setInsertionPointToStart(&finish.getBody().front());
  mlir::Value tid = b.create<mlir::gpu::ThreadIdOp>(loc, mlir::gpu::Dimension::x);
  mlir::Value threads = b.create<mlir::gpu::BlockDimOp>(loc, mlir::gpu::Dimension::x);
  mlir::Value buffer = b.create<mlir::memref::GetGlobalOp>(loc, partials.getType(), partials.getSymName());
  mlir::Value identity = reductionIdentity(b, loc, kind, b.getF32Type());
  mlir::Value count = b.create<ar::ConstantIndexOp>(loc, partials.getType().getDimSize(0));
  auto loop = b.create<mlir::scf::ForOp>(
      loc, tid, count, threads, mlir::ValueRange{identity},
      [&](mlir::OpBuilder &lb, mlir::Location l, mlir::Value i, mlir::ValueRange acc) {
        mlir::Value v = lb.create<mlir::memref::LoadOp>(l, buffer, i);
        lb.create<mlir::memref::StoreOp>(l, identity, buffer, i);
        lb.create<mlir::scf::YieldOp>(l, combine(lb, l, kind, acc[0], v));
      });
  auto total = b.create<mlir::gpu::AllReduceOp>(
      loc, loop.getResult(0), mlir::gpu::AllReduceOperationAttr::get(b.getContext(), kind),
      /*uniform=*/true);
  mlir::Value first = b.create<ar::CmpIOp>(loc, ar::CmpIPredicate::eq, tid,
                                           b.create<ar::ConstantIndexOp>(loc, 0));
  auto owner = b.create<mlir::scf::IfOp>(loc, first, /*withElseRegion=*/false);
  owner->setAttr(kBlockOwnerAttr, b.getUnitAttr());
  b.setInsertionPointToStart(owner.thenBlock());
  llvm::SmallVector<mlir::Value> at;
  for (int64_t i : indices) at.push_back(b.create<ar::ConstantIndexOp>(loc, i));
  mlir::Value target = finish.getArgument(out);
  mlir::Value old = b.create<mlir::memref::LoadOp>(loc, target, at);
  b.create<mlir::memref::StoreOp>(loc, combine(b, loc, kind, total.getResult(), old), target, at);
  b.setInsertionPointToEnd(&finish.getBody().front());
  b.create<mlir::gpu::ReturnOp>(loc);
  return finish;
}

}  // namespace

std::optional<BlockReductionLaunch> mapBlockReduction(mlir::OpBuilder &b,
                                                      mlir::linalg::LinalgOp op, bool gridRows,
                                                      int64_t maxBlocks) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0 || !op.hasPureBufferSemantics())
    return std::nullopt;
  auto iterators = op.getIteratorTypesArray();
  if (iterators.back() != mlir::utils::IteratorType::reduction) return std::nullopt;
  mlir::Block *body = op.getBlock();
  mlir::BlockArgument out = op.getRegionOutputArgs().front();
  if (!out.getType().isF32() || !out.hasOneUse()) return std::nullopt;
  llvm::SmallVector<mlir::Operation *> combiners;
  mlir::Value reduced = mlir::matchReduction(op.getRegionOutputArgs(), 0, combiners);
  if (!reduced || combiners.size() != 1) return std::nullopt;
  mlir::Operation *combiner = combiners.front();
  auto kind = reductionKind(combiner);
  if (!kind || body->getTerminator()->getOperand(0) != combiner->getResult(0)) return std::nullopt;

  int64_t staticR = 1, staticRows = 1;
  llvm::SmallVector<int64_t> staticRanges = op.getStaticLoopRanges();
  for (auto [extent, it] : llvm::zip(staticRanges, iterators)) {
    int64_t &n = it == mlir::utils::IteratorType::reduction ? staticR : staticRows;
    n = (extent == mlir::ShapedType::kDynamic || n < 0) ? -1 : n * extent;
  }
  if (staticR >= 0 && staticR < 32) return std::nullopt;  // a thread per row does as well

  // One long row (a whole tensor's sum): over the grid, when its output is a kernel argument
  // with constant indices.
  auto fn = op->getParentOfType<mlir::gpu::GPUFuncOp>();
  mlir::OpOperand *init = op.getDpsInitOperand(0);
  auto outArg = llvm::dyn_cast<mlir::BlockArgument>(init->get());
  bool splitRow = gridRows && staticRows == 1 && staticR >= kSplitLength && fn && outArg &&
                  outArg.getOwner() == &fn.getBody().front();
  llvm::SmallVector<int64_t> outIndices;
  if (splitRow) {
    llvm::SmallVector<int64_t> zeros(op.getMatchingIndexingMap(init).getNumDims(), 0);
    outIndices = llvm::to_vector(op.getMatchingIndexingMap(init).compose(zeros));
  }
  int64_t partialCount = splitRow ? std::min<int64_t>(maxBlocks, staticR / 1024) : 0;

  mlir::Location loc = op.getLoc();
  b.setInsertionPoint(op);
  llvm::SmallVector<mlir::Value> parallelSizes, reductionSizes;
  for (auto [range, it] : llvm::zip(op.createLoopRanges(b, loc), iterators)) {
    mlir::Value size = mlir::getValueOrCreateConstantIndexOp(b, loc, range.size);
    (it == mlir::utils::IteratorType::reduction ? reductionSizes : parallelSizes).push_back(size);
  }
  mlir::Value zero = b.create<ar::ConstantIndexOp>(loc, 0);
  mlir::Value one = b.create<ar::ConstantIndexOp>(loc, 1);
  mlir::Value rows = product(b, loc, parallelSizes);
  mlir::Value length = product(b, loc, reductionSizes);
  mlir::Value tid = b.create<mlir::gpu::ThreadIdOp>(loc, mlir::gpu::Dimension::x);
  mlir::Value threads = b.create<mlir::gpu::BlockDimOp>(loc, mlir::gpu::Dimension::x);
  mlir::Value first = b.create<ar::CmpIOp>(loc, ar::CmpIPredicate::eq, tid, zero);

  // The loop ivs in the op's order, from the row's and the element's split indices.
  auto merge = [&](llvm::ArrayRef<mlir::Value> p, llvm::ArrayRef<mlir::Value> r) {
    llvm::SmallVector<mlir::Value> ivs;
    size_t pi = 0, ri = 0;
    for (auto it : iterators)
      ivs.push_back(it == mlir::utils::IteratorType::reduction ? r[ri++] : p[pi++]);
    return ivs;
  };
  auto at = [&](mlir::OpBuilder &ib, mlir::AffineMap map, llvm::ArrayRef<mlir::Value> ivs) {
    return *mlir::affine::expandAffineMap(ib, loc, map, ivs);
  };

  mlir::Value firstRow = zero, rowStride = one;
  if (gridRows && !splitRow) {
    firstRow = b.create<mlir::gpu::BlockIdOp>(loc, mlir::gpu::Dimension::x);
    rowStride = b.create<mlir::gpu::GridDimOp>(loc, mlir::gpu::Dimension::x);
  }
  auto rowLoop = b.create<mlir::scf::ForOp>(loc, firstRow, rows, rowStride);
  b.setInsertionPointToStart(rowLoop.getBody());
  auto rowIvs = split(b, loc, rowLoop.getInductionVar(), parallelSizes);
  mlir::Value identity = reductionIdentity(b, loc, *kind, out.getType());
  // Thread t takes elements t, t + blockDim, ...; with a split row, the grid's threads share
  // the row the same way (block b from b · blockDim).
  mlir::Value firstElement = tid, elementStride = threads, block;
  if (splitRow) {
    block = b.create<mlir::gpu::BlockIdOp>(loc, mlir::gpu::Dimension::x);
    mlir::Value blocks = b.create<mlir::gpu::GridDimOp>(loc, mlir::gpu::Dimension::x);
    firstElement = b.create<ar::AddIOp>(loc, b.create<ar::MulIOp>(loc, block, threads), tid);
    elementStride = b.create<ar::MulIOp>(loc, blocks, threads);
  }
  auto elementLoop = b.create<mlir::scf::ForOp>(loc, firstElement, length, elementStride,
                                                mlir::ValueRange{identity});
  {
    mlir::OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(elementLoop.getBody());
    auto ivs = merge(rowIvs, split(b, loc, elementLoop.getInductionVar(), reductionSizes));
    mlir::IRMapping map;
    for (mlir::OpOperand *input : op.getDpsInputOperands()) {
      mlir::BlockArgument arg = op.getMatchingBlockArgument(input);
      if (!llvm::isa<mlir::MemRefType>(input->get().getType())) {
        map.map(arg, input->get());
        continue;
      }
      auto indices = at(b, op.getMatchingIndexingMap(input), ivs);
      map.map(arg, b.create<mlir::memref::LoadOp>(loc, input->get(), indices));
    }
    map.map(out, elementLoop.getRegionIterArgs().front());
    for (mlir::Operation &inner : body->without_terminator()) {
      if (auto index = llvm::dyn_cast<mlir::linalg::IndexOp>(inner)) {
        map.map(index.getResult(), ivs[index.getDim()]);
        continue;
      }
      b.clone(inner, map);
    }
    b.create<mlir::scf::YieldOp>(loc, map.lookup(body->getTerminator()->getOperand(0)));
  }
  auto total = b.create<mlir::gpu::AllReduceOp>(
      loc, elementLoop.getResult(0), mlir::gpu::AllReduceOperationAttr::get(b.getContext(), *kind),
      /*uniform=*/true);
  auto owner = b.create<mlir::scf::IfOp>(loc, first, /*withElseRegion=*/false);
  owner->setAttr(kBlockOwnerAttr, b.getUnitAttr());
  b.setInsertionPointToStart(owner.thenBlock());
  BlockReductionLaunch launch;
  if (splitRow) {
    // The block's total goes to its partial (folded in, so that emulated threads, each with
    // its own partial, add up too); the finish kernel does the rest.
    auto partials = partialsOf(fn, *kind, partialCount);
    mlir::Value buffer = b.create<mlir::memref::GetGlobalOp>(loc, partials.getType(),
                                                             partials.getSymName());
    mlir::Value old = b.create<mlir::memref::LoadOp>(loc, buffer, block);
    b.create<mlir::memref::StoreOp>(loc, combine(b, loc, *kind, total.getResult(), old), buffer,
                                    block);
    launch.finish = finishKernel(fn, partials, *kind, outArg.getArgNumber(), outIndices);
    launch.finishThreads = kFinishThreads;
    launch.threads = 256;
    launch.rows = partialCount;
    op->erase();
    return launch;
  }
  llvm::SmallVector<mlir::Value> zeros(reductionSizes.size(), zero);
  auto indices = at(b, op.getMatchingIndexingMap(init), merge(rowIvs, zeros));
  mlir::Value old = b.create<mlir::memref::LoadOp>(loc, init->get(), indices);
  mlir::Value folded = combine(b, loc, *kind, total.getResult(), old);
  b.create<mlir::memref::StoreOp>(loc, folded, init->get(), indices);
  op->erase();
  launch.threads = staticR < 0 ? 256 : std::min<int64_t>(256, (staticR + 31) / 32 * 32);
  launch.rows = gridRows ? staticRows : 1;
  return launch;
}

}  // namespace stepc::codegen
