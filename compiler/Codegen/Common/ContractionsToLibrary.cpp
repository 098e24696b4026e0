//===- ContractionsToLibrary.cpp - --step-contractions-to-library ---------===//
//
// Bufferized f32 contractions (linalg.matmul, linalg.batch_matmul and the linalg.generic
// contractions that transposed or N-D matmuls lower to) become calls to the GEMM interface,
// runtime/hal/Gemm.h: stepc_matmul_f32 / stepc_batch_matmul_f32 (C += op(A) · op(B), through MLIR's
// C interface for memrefs; a last flag says whether to accumulate: a contraction right after a
// zero fill of its output overwrites instead, and the fill is dropped). Contractions of bf16
// operands into an f32 accumulator (--precision=bf16) call the _bf16 variants. A library GEMM is an order of magnitude faster than loops, and the
// CUDA backend implements the same two functions with cuBLASLt.
//
// Each operand's dims must fall into contiguous blocks (batch first, then the M/K, K/N or M/N
// blocks in either order) that collapse without a copy (memref.collapse_shape); the block order
// gives the transposes. Anything else stays a loop kernel.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_CONTRACTIONSTOLIBRARY
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

enum Group { kBatch, kM, kN, kK };

// The blocks of one operand: its dims grouped, in order, or failure if a group is split.
struct Blocks {
  llvm::SmallVector<Group> order;                      // one entry per block
  llvm::SmallVector<llvm::SmallVector<int64_t>> dims;  // operand dims per block
  llvm::SmallVector<llvm::SmallVector<unsigned>> loops;  // loop dims per block, in order
};

mlir::FailureOr<Blocks> blocksOf(mlir::AffineMap map, const llvm::DenseMap<unsigned, Group> &group) {
  Blocks b;
  for (unsigned i = 0; i < map.getNumResults(); ++i) {
    auto dim = llvm::dyn_cast<mlir::AffineDimExpr>(map.getResult(i));
    if (!dim) return mlir::failure();
    Group g = group.lookup(dim.getPosition());
    if (b.order.empty() || b.order.back() != g) {
      if (llvm::is_contained(b.order, g)) return mlir::failure();  // group split in two
      b.order.push_back(g);
      b.dims.emplace_back();
      b.loops.emplace_back();
    }
    b.dims.back().push_back(i);
    b.loops.back().push_back(dim.getPosition());
  }
  return b;
}

struct ContractionsToLibraryPass : impl::ContractionsToLibraryBase<ContractionsToLibraryPass> {
  // stepc_[batch_]matmul_f32, or _bf16 for bf16 operands (the output is f32 either way).
  mlir::func::FuncOp declaration(mlir::ModuleOp module, unsigned rank, mlir::Type input) {
    std::string name = std::string(rank == 2 ? "stepc_matmul_" : "stepc_batch_matmul_") +
                       (input.isF32() ? "f32" : "bf16");
    if (auto fn = module.lookupSymbol<mlir::func::FuncOp>(name)) return fn;
    mlir::OpBuilder b(module.getBodyRegion());
    mlir::Type view = dynamicView(b, rank, input), out = dynamicView(b, rank, b.getF32Type());
    auto fn = b.create<mlir::func::FuncOp>(
        module.getLoc(), name,
        b.getFunctionType({view, view, out, b.getI64Type(), b.getI64Type(), b.getI64Type()}, {}));
    fn.setPrivate();
    // Calls pass pointers to memref descriptors: _mlir_ciface_<name>, see runtime/hal/Gemm.h.
    fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
    return fn;
  }

  static mlir::MemRefType dynamicView(mlir::OpBuilder &b, unsigned rank, mlir::Type element) {
    int64_t dyn = mlir::ShapedType::kDynamic;
    llvm::SmallVector<int64_t> shape(rank, dyn), strides(rank, dyn);
    return mlir::MemRefType::get(shape, element,
                                 mlir::StridedLayoutAttr::get(b.getContext(), dyn, strides));
  }

  // The operand collapsed to one dim per block, cast to the interface's dynamic view type; or
  // null if its blocks do not collapse without a copy.
  mlir::Value collapse(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v, const Blocks &blocks) const {
    auto type = llvm::cast<mlir::MemRefType>(v.getType());
    llvm::SmallVector<mlir::ReassociationIndices> reassociation;
    for (const auto &dims : blocks.dims) reassociation.emplace_back(dims.begin(), dims.end());
    mlir::Value view = v;
    if (reassociation.size() != static_cast<size_t>(type.getRank())) {
      if (!mlir::memref::CollapseShapeOp::isGuaranteedCollapsible(type, reassociation))
        return nullptr;
      view = b.create<mlir::memref::CollapseShapeOp>(loc, v, reassociation);
    }
    return b.create<mlir::memref::CastOp>(
        loc, dynamicView(b, reassociation.size(), type.getElementType()), view);
  }

  // The linalg.fill of zero into `c` that `op` follows, if nothing between them can touch
  // memory (only views and constants); else null.
  static mlir::linalg::FillOp zeroFillOf(mlir::Operation *op, mlir::Value c) {
    for (mlir::Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
      if (auto fill = llvm::dyn_cast<mlir::linalg::FillOp>(prev)) {
        if (fill.getOutputs().front() != c) return nullptr;
        mlir::FloatAttr value;
        if (!mlir::matchPattern(fill.getInputs().front(), mlir::m_Constant(&value)) ||
            !value.getValue().isZero())
          return nullptr;
        return fill;
      }
      if (llvm::is_contained(prev->getOperands(), c)) return nullptr;
      if (!llvm::isa<mlir::memref::SubViewOp, mlir::memref::CollapseShapeOp,
                     mlir::memref::ExpandShapeOp, mlir::memref::CastOp, mlir::memref::ViewOp,
                     mlir::arith::ConstantOp>(prev))
        return nullptr;
    }
    return nullptr;
  }

  bool rewrite(mlir::linalg::LinalgOp op) {
    if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
        !mlir::linalg::isaContractionOpInterface(op))
      return false;
    // f32 = f32 x f32, or f32 = bf16 x bf16 (--precision=bf16: bf16 in, f32 accumulation).
    mlir::Type input;
    for (auto [i, v] : llvm::enumerate(op->getOperands())) {
      auto type = llvm::dyn_cast<mlir::MemRefType>(v.getType());
      if (!type || !type.hasStaticShape()) return false;
      mlir::Type element = type.getElementType();
      if (i == 2 ? !element.isF32() : !(element.isF32() || element.isBF16())) return false;
      if (i == 0) input = element;
      if (i == 1 && element != input) return false;
    }
    auto dims = mlir::linalg::inferContractionDims(op);
    if (mlir::failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty()) return false;
    llvm::DenseMap<unsigned, Group> group;
    for (unsigned d : dims->batch) group[d] = kBatch;
    for (unsigned d : dims->m) group[d] = kM;
    for (unsigned d : dims->n) group[d] = kN;
    for (unsigned d : dims->k) group[d] = kK;
    auto maps = op.getIndexingMapsArray();
    auto a = blocksOf(maps[0], group), bb = blocksOf(maps[1], group), c = blocksOf(maps[2], group);
    if (mlir::failed(a) || mlir::failed(bb) || mlir::failed(c)) return false;
    bool batched = !dims->batch.empty();
    // Batch leads everywhere; each operand has two more blocks of the expected groups.
    auto shapeOk = [&](const Blocks &x, Group p, Group q) {
      size_t first = batched ? 1 : 0;
      if (x.order.size() != first + 2 || (batched && x.order[0] != kBatch)) return false;
      return (x.order[first] == p && x.order[first + 1] == q) ||
             (x.order[first] == q && x.order[first + 1] == p);
    };
    if (!shapeOk(*a, kM, kK) || !shapeOk(*bb, kK, kN) || !shapeOk(*c, kM, kN)) return false;
    // Within a group the loops must come in the same order in every operand, or the collapsed
    // rows (columns) would not line up.
    auto loopsOf = [](const Blocks &x, Group g) {
      for (size_t i = 0; i < x.order.size(); ++i)
        if (x.order[i] == g) return x.loops[i];
      return llvm::SmallVector<unsigned>();
    };
    if (loopsOf(*a, kM) != loopsOf(*c, kM) || loopsOf(*bb, kN) != loopsOf(*c, kN) ||
        loopsOf(*a, kK) != loopsOf(*bb, kK) ||
        (batched && (loopsOf(*a, kBatch) != loopsOf(*c, kBatch) ||
                     loopsOf(*bb, kBatch) != loopsOf(*c, kBatch))))
      return false;
    size_t first = batched ? 1 : 0;
    bool transA = a->order[first] == kK, transB = bb->order[first] == kN;
    bool swapC = c->order[first] == kN;  // C stored [N, M]: compute C^T = op(B)^T op(A)^T

    // Looked up before the operand views are built (they use C themselves).
    mlir::linalg::FillOp fill = zeroFillOf(op, op->getOperand(2));
    mlir::OpBuilder b(op);
    mlir::Location loc = op.getLoc();
    mlir::Value va = collapse(b, loc, op->getOperand(0), *a);
    mlir::Value vb = collapse(b, loc, op->getOperand(1), *bb);
    mlir::Value vc = collapse(b, loc, op->getOperand(2), *c);
    if (!va || !vb || !vc) {
      // Undo the views made for the operands that did collapse (cast, then collapse_shape).
      for (mlir::Value v : {va, vb, vc}) {
        if (!v) continue;
        mlir::Operation *cast = v.getDefiningOp();
        mlir::Operation *source = cast->getOperand(0).getDefiningOp();
        cast->erase();
        if (auto shape = llvm::dyn_cast_or_null<mlir::memref::CollapseShapeOp>(source))
          if (shape->use_empty()) shape->erase();
      }
      return false;
    }
    if (swapC) {
      std::swap(va, vb);
      bool ta = !transB, tb = !transA;
      transA = ta;
      transB = tb;
    }
    auto module = op->getParentOfType<mlir::ModuleOp>();
    mlir::func::FuncOp fn = declaration(module, batched ? 3 : 2, input);
    mlir::Value ta = b.create<mlir::arith::ConstantIntOp>(loc, transA ? 1 : 0, 64);
    mlir::Value tb = b.create<mlir::arith::ConstantIntOp>(loc, transB ? 1 : 0, 64);
    // C = A·B instead of C += A·B when C was just zero-filled: the fill goes away.
    mlir::Value acc = b.create<mlir::arith::ConstantIntOp>(loc, fill ? 0 : 1, 64);
    b.create<mlir::func::CallOp>(loc, fn, mlir::ValueRange{va, vb, vc, ta, tb, acc});
    op->erase();
    if (fill) fill->erase();
    return true;
  }

  void runOnOperation() override {
    llvm::SmallVector<mlir::linalg::LinalgOp> ops;
    getOperation().walk([&](mlir::linalg::LinalgOp op) {
      auto fn = op->getParentOfType<mlir::func::FuncOp>();
      if (fn && !fn->hasAttr("step.kernel")) ops.push_back(op);
    });
    for (mlir::linalg::LinalgOp op : ops) rewrite(op);
  }
};

}  // namespace

}  // namespace stepc::codegen
