//===- TileKernels.cpp - --step-tile-kernels ------------------------------===//
//
// Tiles the linalg op of every outlined kernel (`step.kernel`) to an `scf.forall` over its
// leading parallel dimensions: the independent pieces of work a kernel splits into. It is the
// form the CUDA mapping starts from (forall iterations become blocks), and the CPU path runs
// the iterations in chunks on the runtime's threads (--step-parallelize-kernels).
//
// Only the leading parallel dimensions are tiled, so a tile still does whole reductions (a
// row of a norm, a column of a scan) and the iterations never write the same element. The
// tiled ones end at a dimension some operand reads through an index linalg's tiling cannot
// slice (see `sliceable`). Tile
// sizes are chosen for about `target-tiles` iterations: outer dimensions with tile size 1
// until the product of their sizes reaches the target, then the next dimension in chunks,
// preferring a chunk that divides it (static tile shapes vectorise best). Kernels smaller than
// `min-work` iterations stay as they are: splitting them costs more than it saves. With
// `min-tile-work`, a kernel is split into at most work / min-tile-work tiles (the GPU's: a
// tile is a block, which should have work for its threads), and with `at-least` the target is
// a floor (a dividing chunk is looked for below the even one, not above). The CPU pipeline asks for about
// 64 tiles; the CUDA one for two waves of the target's SMs (GpuTargets.h).
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include "compiler/Codegen/Common/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_TILEKERNELS
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

// Whether tiling can slice through `e`: a sum of dims with positive coefficients and no
// constant term. Linalg's tiling slices each operand at the map of the tile's first index, with
// the size the map gives the tile's extent, and keeps the map on the slice: a constant term
// then counts twice, and a decreasing term (K-1-s) or a floordiv starts the slice in the wrong
// place, a silent out-of-bounds read.
bool sliceable(mlir::AffineExpr e) {
  if (llvm::isa<mlir::AffineDimExpr>(e)) return true;
  auto bin = llvm::dyn_cast<mlir::AffineBinaryOpExpr>(e);
  if (!bin) return false;
  if (bin.getKind() == mlir::AffineExprKind::Add)
    return sliceable(bin.getLHS()) && sliceable(bin.getRHS());
  if (bin.getKind() == mlir::AffineExprKind::Mul) {
    auto c = llvm::dyn_cast<mlir::AffineConstantExpr>(bin.getRHS());
    return c && c.getValue() > 0 && sliceable(bin.getLHS());
  }
  return false;
}

// Whether `e` is not zero at the origin (a constant term, K-1-k at k = 0). Linalg's tiling
// slices every operand dimension, the untiled ones too (at offset e(0) with the map kept, as
// the tile's extent is the whole loop), so such an index counts its constant twice whatever
// loop is tiled: the grouped input gradient's s + (K-1) - k read K-1 rows too far, silently.
bool offsetAtOrigin(mlir::AffineExpr e, unsigned dims) {
  llvm::SmallVector<mlir::AffineExpr> zeros(dims, mlir::getAffineConstantExpr(0, e.getContext()));
  mlir::AffineExpr at = mlir::simplifyAffineExpr(e.replaceDimsAndSymbols(zeros, {}), 0, 0);
  auto c = llvm::dyn_cast<mlir::AffineConstantExpr>(at);
  return !c || c.getValue() != 0;
}

// Whether the op may be tiled at all: no operand index is offset at the origin.
bool sliceableAtOrigin(mlir::linalg::LinalgOp op) {
  for (mlir::AffineMap map : op.getIndexingMapsArray())
    for (mlir::AffineExpr e : map.getResults())
      if (offsetAtOrigin(e, map.getNumDims())) return false;
  return true;
}

// Whether loop `d` may be tiled: every operand index that depends on it is sliceable.
bool tileable(mlir::linalg::LinalgOp op, unsigned d) {
  for (mlir::AffineMap map : op.getIndexingMapsArray())
    for (mlir::AffineExpr e : map.getResults())
      if (e.isFunctionOfDim(d) && !sliceable(e)) return false;
  return true;
}

// Tile sizes for the leading parallel dimensions of `ranges` (0 = not tiled), or none if the
// op should stay whole.
llvm::SmallVector<int64_t> chooseTileSizes(mlir::linalg::LinalgOp op, int64_t targetTiles,
                                           int64_t minWork, int64_t minTileWork, bool atLeast) {
  llvm::SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto iterators = op.getIteratorTypesArray();
  int64_t work = 1;
  for (int64_t r : ranges) {
    if (r == mlir::ShapedType::kDynamic) return {};
    work *= r;
  }
  if (work < minWork || ranges.empty() ||
      iterators.front() != mlir::utils::IteratorType::parallel || !sliceableAtOrigin(op))
    return {};
  if (minTileWork > 0) targetTiles = std::min(targetTiles, std::max<int64_t>(work / minTileWork, 2));
  llvm::SmallVector<int64_t> sizes(ranges.size(), 0);
  int64_t tiles = 1;
  for (size_t d = 0; d < ranges.size(); ++d) {
    if (iterators[d] != mlir::utils::IteratorType::parallel || !tileable(op, d)) break;
    int64_t n = ranges[d];
    int64_t want = (targetTiles + tiles - 1) / tiles;  // tiles still wanted from this dim on
    if (n <= want) {
      sizes[d] = 1;
      tiles *= n;
      if (n == want) break;
      continue;
    }
    int64_t chunk = atLeast ? std::max<int64_t>(1, n / want) : (n + want - 1) / want;
    if (atLeast) {
      for (int64_t c = chunk; c >= std::max<int64_t>(1, chunk / 2); --c)
        if (n % c == 0) {
          chunk = c;
          break;
        }
    } else {
      for (int64_t c = chunk; c <= 2 * chunk && c <= n; ++c)
        if (n % c == 0) {
          chunk = c;
          break;
        }
    }
    sizes[d] = chunk;
    tiles *= (n + chunk - 1) / chunk;
    break;
  }
  if (tiles < 2) return {};
  return sizes;
}

struct TileKernelsPass : impl::TileKernelsBase<TileKernelsPass> {
  using TileKernelsBase::TileKernelsBase;

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::IRRewriter rewriter(&getContext());
    for (auto fn : module.getOps<mlir::func::FuncOp>()) {
      if (!fn->hasAttr("step.kernel") || fn.isExternal()) continue;
      llvm::SmallVector<mlir::linalg::LinalgOp> ops;
      for (mlir::Operation &op : fn.getBody().front())
        if (auto linalg = llvm::dyn_cast<mlir::linalg::LinalgOp>(op)) ops.push_back(linalg);
      if (ops.size() != 1) continue;  // a kernel is one linalg op; anything else stays
      mlir::linalg::LinalgOp op = ops.front();
      if (!op.hasPureBufferSemantics()) {
        op->emitError("--step-tile-kernels expects bufferized kernels");
        return signalPassFailure();
      }
      llvm::SmallVector<int64_t> sizes = chooseTileSizes(op, targetTiles, minWork, minTileWork, atLeast);
      if (sizes.empty()) continue;
      rewriter.setInsertionPoint(op);
      llvm::SmallVector<mlir::OpFoldResult> tileSizes;
      for (int64_t s : sizes) tileSizes.push_back(rewriter.getIndexAttr(s));
      auto tiled = mlir::linalg::tileToForallOpUsingTileSizes(
          rewriter, llvm::cast<mlir::TilingInterface>(op.getOperation()), tileSizes,
          std::nullopt);
      if (failed(tiled)) {
        op->emitError("could not tile this kernel to scf.forall");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
    }
  }
};

}  // namespace

}  // namespace stepc::codegen
