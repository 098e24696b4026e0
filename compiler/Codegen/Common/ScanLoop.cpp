//===- ScanLoop.cpp - a cumsum's loop, recognised and split ---------------===//
//
// See ScanLoop.h.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/ScanLoop.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace stepc::codegen {

namespace {

namespace ar = mlir::arith;

// The base of `v` if `v` is a slice base[0, ..., at, ..., 0] of `element`s with the state's
// shape (1 along the axis), the base `length` long along it.
mlir::Value sliceBase(mlir::Value v, mlir::scf::ForOp loop, mlir::Value at,
                      llvm::ArrayRef<int64_t> shape, int64_t length, mlir::Type element,
                      int64_t &axis) {
  auto view = v.getDefiningOp<mlir::memref::SubViewOp>();
  if (!view || view->getBlock() != loop.getBody() ||
      !loop.isDefinedOutsideOfLoop(view.getSource()))
    return {};
  auto base = llvm::cast<mlir::MemRefType>(view.getSource().getType());
  if (base.getRank() != static_cast<int64_t>(shape.size()) || base.getElementType() != element ||
      !base.hasStaticShape() || view.getType().getRank() != base.getRank())
    return {};
  int64_t found = -1;
  for (auto [d, offset] : llvm::enumerate(view.getMixedOffsets())) {
    if (auto value = llvm::dyn_cast<mlir::Value>(offset)) {
      if (value != at || found >= 0) return {};
      found = static_cast<int64_t>(d);
    } else if (mlir::getConstantIntValue(offset) != 0) {
      return {};
    }
  }
  if (found < 0 || (axis >= 0 && found != axis)) return {};
  for (int64_t d = 0; d < base.getRank(); ++d)
    if (view.getStaticSizes()[d] != shape[d] || view.getStaticStrides()[d] != 1 ||
        base.getDimSize(d) != (d == found ? length : shape[d]))
      return {};
  axis = found;
  return view.getSource();
}

}  // namespace

std::optional<ScanLoop> matchScanLoop(mlir::scf::ForOp loop) {
  auto lb = mlir::getConstantIntValue(loop.getLowerBound()), ub = mlir::getConstantIntValue(loop.getUpperBound()),
       step = mlir::getConstantIntValue(loop.getStep());
  if (lb != 0 || step != 1 || !ub || *ub <= 0 || loop.getNumResults() != 0) return std::nullopt;
  mlir::linalg::GenericOp add;
  mlir::linalg::CopyOp copy;
  for (mlir::Operation &op : loop.getBody()->without_terminator()) {
    if (auto g = llvm::dyn_cast<mlir::linalg::GenericOp>(op)) {
      if (add) return std::nullopt;
      add = g;
    } else if (auto c = llvm::dyn_cast<mlir::linalg::CopyOp>(op)) {
      if (copy) return std::nullopt;
      copy = c;
    } else if (!llvm::isa<mlir::memref::SubViewOp, ar::SubIOp, ar::ConstantOp>(op)) {
      return std::nullopt;
    }
  }
  if (!add || !copy || !add->isBeforeInBlock(copy) || add.getNumDpsInputs() != 1 ||
      add.getNumDpsInits() != 1 || add.getNumReductionLoops() != 0 ||
      !llvm::all_of(add.getIndexingMapsArray(), [](mlir::AffineMap m) { return m.isIdentity(); }))
    return std::nullopt;
  // The body: yield(addf(in, out)) for f32, yield(addi(in, out)) for i32 (a routing's counts),
  // either order.
  mlir::Block *body = add.getBody();
  auto yield = llvm::cast<mlir::linalg::YieldOp>(body->getTerminator());
  mlir::Operation *sum = yield.getNumOperands() == 1 ? yield.getOperand(0).getDefiningOp() : nullptr;
  if (!sum || !llvm::isa<ar::AddFOp, ar::AddIOp>(sum) || body->getOperations().size() != 2)
    return std::nullopt;
  llvm::SmallPtrSet<mlir::Value, 2> operands{sum->getOperand(0), sum->getOperand(1)};
  if (!operands.contains(body->getArgument(0)) || !operands.contains(body->getArgument(1)))
    return std::nullopt;

  ScanLoop scan;
  scan.length = *ub;
  scan.state = add.getDpsInits()[0];
  auto stateType = llvm::dyn_cast<mlir::MemRefType>(scan.state.getType());
  if (!stateType || !stateType.hasStaticShape() || !loop.isDefinedOutsideOfLoop(scan.state) ||
      copy.getDpsInputs()[0] != scan.state)
    return std::nullopt;
  scan.element = stateType.getElementType();
  bool isFloat = llvm::isa<ar::AddFOp>(sum);
  if (isFloat ? !scan.element.isF32() : !scan.element.isInteger(32)) return std::nullopt;
  scan.shape.assign(stateType.getShape().begin(), stateType.getShape().end());
  // The position: the slice's one dynamic offset.
  auto view = add.getDpsInputs()[0].getDefiningOp<mlir::memref::SubViewOp>();
  if (!view || view.getOffsets().size() != 1) return std::nullopt;
  mlir::Value at = view.getOffsets()[0], iv = loop.getInductionVar();
  if (at != iv) {
    auto back = at.getDefiningOp<ar::SubIOp>();
    if (!back || back.getRhs() != iv || mlir::getConstantIntValue(back.getLhs()) != scan.length - 1)
      return std::nullopt;
    scan.reverse = true;
  }
  scan.x = sliceBase(add.getDpsInputs()[0], loop, at, scan.shape, scan.length, scan.element,
                     scan.axis);
  scan.y = sliceBase(copy.getDpsInits()[0], loop, at, scan.shape, scan.length, scan.element,
                     scan.axis);
  if (!scan.x || !scan.y || scan.shape[scan.axis] != 1) return std::nullopt;
  scan.add = add;
  scan.copy = copy;
  return scan;
}

mlir::LogicalResult splitScanOverForall(mlir::scf::ForOp loop, ScanLoop scan) {
  int64_t rank = static_cast<int64_t>(scan.shape.size()), split = -1;
  for (int64_t d = 0; d < rank && split < 0; ++d)
    if (d != scan.axis && scan.shape[d] > 1) split = d;
  if (split < 0) return mlir::failure();
  mlir::Location loc = loop.getLoc();
  mlir::OpBuilder b(loop);
  auto forall = b.create<mlir::scf::ForallOp>(
      loc, llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(scan.shape[split])},
      mlir::ValueRange{}, std::nullopt);
  b.setInsertionPoint(forall.getBody()->getTerminator());
  mlir::Value column = forall.getInductionVars().front();
  // base[..., column (split), ..., at (axis), ...] with the tile's shape (1 along both).
  auto slice = [&](mlir::OpBuilder &sb, mlir::Value base, mlir::Value at) -> mlir::Value {
    llvm::SmallVector<mlir::OpFoldResult> offsets(rank, sb.getIndexAttr(0)), sizes,
        strides(rank, sb.getIndexAttr(1));
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(sb.getIndexAttr(d == split ? 1 : scan.shape[d]));
    offsets[split] = column;
    if (at) offsets[scan.axis] = at;
    return sb.create<mlir::memref::SubViewOp>(loc, base, offsets, sizes, strides);
  };
  mlir::Value state = slice(b, scan.state, mlir::Value());
  mlir::Value zero = b.create<ar::ConstantIndexOp>(loc, 0);
  mlir::Value one = b.create<ar::ConstantIndexOp>(loc, 1);
  mlir::Value length = b.create<ar::ConstantIndexOp>(loc, scan.length);
  auto tileLoop = b.create<mlir::scf::ForOp>(loc, zero, length, one);
  tileLoop->setAttr("step.scan", b.getUnitAttr());
  mlir::OpBuilder lb = mlir::OpBuilder::atBlockTerminator(tileLoop.getBody());
  mlir::Value at = tileLoop.getInductionVar();
  if (scan.reverse)
    at = lb.create<ar::SubIOp>(loc, lb.create<ar::ConstantIndexOp>(loc, scan.length - 1), at);
  mlir::IRMapping map;
  map.map(scan.add.getDpsInputs()[0], slice(lb, scan.x, at));
  map.map(scan.state, state);
  lb.clone(*scan.add.getOperation(), map);
  map.map(scan.copy.getDpsInits()[0], slice(lb, scan.y, at));
  lb.clone(*scan.copy.getOperation(), map);
  loop.erase();
  return mlir::success();
}

}  // namespace stepc::codegen
