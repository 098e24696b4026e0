//===- GatheredGemms.cpp - --step-gathered-gemms ---------------------------===//
//
// An MoE's dispatch (step.gather_rows: slot c of expert e takes token row ids[e, c] / group,
// zeros for -1) lowers to a gather kernel that writes [E, C, D], which the experts' batched
// GEMMs then read: the forward's X_e · W1 and the backward's X_eᵀ · dH. Everything else the
// gather feeds fuses into its consumer; a library GEMM is the one consumer it cannot fuse into,
// so the rows were written once and read twice, and the GEMMs proved the empty slots empty by
// reading their zeros. The runtime's own kernels pack A anyway: here they pack it straight
// from the token rows (runtime/hal/Gemm.h, stepc_batch_matmul_gathered_f32), and the ids say
// which slots are empty, so nothing is written or read for them. Then every other batched
// GEMM whose A is proved zero in the empty slots (or whose B is, where the GEMM sums over the
// slots: a weight gradient Aᵀ · B) gets the ids too (stepc_batch_matmul_masked_f32), so its
// experts stop at their last slot in use without reading the empty rows to find out.
//
//   linalg.generic ins(%ids) outs(%xe) { select(id >= 0, X[clamp(id) / group, d], 0) }
//   stepc_batch_matmul_f32(%xe, %b, %c, tA, tB, acc)          (each GEMM that reads %xe as A)
//     →  stepc_batch_matmul_gathered_f32(%X, %b, %c, %ids, group, tA, tB, acc)
//
// Only when every reader of %xe is such a GEMM (the gather and its buffer are then erased, or
// the buffer kept when a later value reuses it), no GEMM writes X or the ids, and nothing
// writes or frees them between the gather and the last GEMM (a dealloc between them moves
// after it: the buffers now live until then). A gather with anything fused into it (a cast to
// bf16, a gate scale) stays a kernel, its empty rows still known zero. "Zero" assumes finite
// values, as the runtime's trims do (0 · x = 0). CPU only, on bufferized host code after
// --step-contractions-to-library; the proofs look only within one block, at buffers that are
// allocations or the function's arguments.
//
//===----------------------------------------------------------------------===//
#include <functional>
#include <optional>

#include "compiler/Codegen/Common/RuntimeCallWrites.h"
#include "compiler/Codegen/Common/ViewRoot.h"
#include "llvm/ADT/SetVector.h"
#include "compiler/Codegen/LLVMCPU/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_GATHEREDGEMMS
#include "compiler/Codegen/LLVMCPU/Passes.h.inc"

namespace {

using mlir::Value;

constexpr llvm::StringLiteral kBatch = "stepc_batch_matmul_f32";
constexpr llvm::StringLiteral kGathered = "stepc_batch_matmul_gathered_f32";
constexpr llvm::StringLiteral kMasked = "stepc_batch_matmul_masked_f32";

// A buffer whose every alias the walks below see: an allocation, or an argument of the
// function (the step's parameters, state and batch). A view made by an op that is not
// view-like (memref.transpose, a loop's result) roots elsewhere; such a root proves nothing,
// and an op writing through one may write anything.
bool knownRoot(Value root) {
  if (root.getDefiningOp<mlir::memref::AllocOp>()) return true;
  auto arg = llvm::dyn_cast<mlir::BlockArgument>(root);
  return arg && arg.getOwner()->isEntryBlock() &&
         llvm::isa<mlir::func::FuncOp>(arg.getOwner()->getParentOp());
}

std::optional<int64_t> constantInt(Value v) {
  llvm::APInt value;
  if (!mlir::matchPattern(v, mlir::m_ConstantInt(&value))) return std::nullopt;
  return value.getSExtValue();
}

// `v` = op(x, constant c) (either order) for a binary op of type Op: x, or null.
template <typename Op>
Value withConstant(Value v, int64_t c) {
  auto op = v.getDefiningOp<Op>();
  if (!op) return {};
  if (constantInt(op.getRhs()) == c) return op.getLhs();
  if (constantInt(op.getLhs()) == c) return op.getRhs();
  return {};
}

// A dispatch gather as gatherRows (StepToLinalg's LoweringUtils.cpp) writes it, bufferized:
// [E, C, D] from ids [E, C], or [E·C, D] from ids [E·C, 1] (a gather whose ids were reshaped).
struct Gather {
  mlir::linalg::GenericOp op;
  Value source, ids, out;
  int64_t group;
};

bool rowMajor(mlir::MemRefType type) {
  llvm::SmallVector<int64_t> strides;
  int64_t offset;
  return mlir::succeeded(mlir::getStridesAndOffset(type, strides, offset)) && strides.back() == 1;
}

// A whole buffer of static shape with the identity layout: rows of its last dim, contiguous.
bool wholeBuffer(Value v) {
  auto type = llvm::dyn_cast<mlir::MemRefType>(v.getType());
  return type && type.hasStaticShape() && type.getLayout().isIdentity() && type.getRank() >= 1 &&
         type.getNumElements() > 0 && knownRoot(v);
}

std::optional<Gather> gatherOf(mlir::linalg::GenericOp g) {
  unsigned loops = g.getNumLoops();
  if (g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 || (loops != 2 && loops != 3) ||
      g.getNumReductionLoops() != 0 || !g.hasPureBufferSemantics())
    return std::nullopt;
  Value ids = g.getDpsInputOperand(0)->get(), out = g.getDpsInitOperand(0)->get();
  auto idsType = llvm::dyn_cast<mlir::MemRefType>(ids.getType());
  auto outType = llvm::dyn_cast<mlir::MemRefType>(out.getType());
  if (!idsType || !outType || idsType.getRank() != 2 || !idsType.getElementType().isInteger(32) ||
      !outType.getElementType().isF32() || !wholeBuffer(out) || outType.getRank() != loops)
    return std::nullopt;
  mlir::MLIRContext *ctx = g.getContext();
  auto d = [&](unsigned i) { return mlir::getAffineDimExpr(i, ctx); };
  auto maps = g.getIndexingMapsArray();
  mlir::AffineMap idsMap =
      loops == 3 ? mlir::AffineMap::get(3, 0, {d(0), d(1)}, ctx)
                 : mlir::AffineMap::get(2, 0, {d(0), mlir::getAffineConstantExpr(0, ctx)}, ctx);
  if (maps[0] != idsMap || !maps[1].isIdentity()) return std::nullopt;
  mlir::Block &body = g.getRegion().front();
  Value id = body.getArgument(0);
  auto yield = llvm::cast<mlir::linalg::YieldOp>(body.getTerminator());
  auto select = yield.getOperand(0).getDefiningOp<mlir::arith::SelectOp>();
  if (!select || !mlir::matchPattern(select.getFalseValue(), mlir::m_AnyZeroFloat()))
    return std::nullopt;
  auto present = select.getCondition().getDefiningOp<mlir::arith::CmpIOp>();
  if (!present || present.getPredicate() != mlir::arith::CmpIPredicate::sge ||
      present.getLhs() != id || constantInt(present.getRhs()) != 0)
    return std::nullopt;
  auto load = select.getTrueValue().getDefiningOp<mlir::memref::LoadOp>();
  if (!load || load.getIndices().size() != 2 ||
      g.getRegion().isAncestor(load.getMemRef().getParentRegion()))
    return std::nullopt;
  auto col = load.getIndices()[1].getDefiningOp<mlir::linalg::IndexOp>();
  auto sourceType = load.getMemRefType();
  if (!col || col.getDim() != loops - 1 || !sourceType.getElementType().isF32() ||
      !sourceType.hasStaticShape() || !rowMajor(sourceType) ||
      sourceType.getDimSize(1) != outType.getDimSize(loops - 1))
    return std::nullopt;
  // The row: clamp(id) or clamp(id) / group, clamp = min(max(id, 0), rows · group - 1).
  Value row = load.getIndices()[0];
  int64_t group = 1;
  if (auto div = row.getDefiningOp<mlir::arith::DivUIOp>()) {
    auto g2 = constantInt(div.getRhs());
    if (!g2 || *g2 < 1) return std::nullopt;
    group = *g2;
    row = div.getLhs();
  }
  Value clamped = withConstant<mlir::arith::MinSIOp>(row, sourceType.getDimSize(0) * group - 1);
  Value nonNegative = clamped ? withConstant<mlir::arith::MaxSIOp>(clamped, 0) : Value();
  auto cast = nonNegative ? nonNegative.getDefiningOp<mlir::arith::IndexCastOp>() : nullptr;
  if (!cast || cast.getIn() != id) return std::nullopt;
  // Nothing else in the body: the ops above, the constants they may hold, and the yield.
  for (mlir::Operation &op : body)
    if (!llvm::isa<mlir::linalg::YieldOp, mlir::arith::SelectOp, mlir::arith::CmpIOp,
                   mlir::memref::LoadOp, mlir::linalg::IndexOp, mlir::arith::DivUIOp,
                   mlir::arith::MinSIOp, mlir::arith::MaxSIOp, mlir::arith::IndexCastOp,
                   mlir::arith::ConstantOp>(op))
      return std::nullopt;
  // One id per row of the output, and the ids a whole buffer the GEMMs can view as [E, C].
  int64_t rows = outType.getNumElements() / outType.getShape().back();
  if (idsType.getNumElements() != rows || !wholeBuffer(viewRoot(ids)) ||
      !isReshapeOf(ids, viewRoot(ids)) || !knownRoot(viewRoot(load.getMemRef())) ||
      llvm::cast<mlir::MemRefType>(viewRoot(ids).getType()).getNumElements() != rows)
    return std::nullopt;
  return Gather{g, load.getMemRef(), ids, out, group};
}

// Whether `op` (not its nested ops: the caller walks them) may write or free a buffer whose
// root is in `roots`.
bool mayWrite(mlir::Operation *op, llvm::ArrayRef<Value> roots) {
  auto touches = [&](Value v) {
    if (!llvm::isa<mlir::BaseMemRefType>(v.getType())) return false;
    Value root = viewRoot(v);
    return !knownRoot(root) || llvm::is_contained(roots, root);
  };
  if (auto call = llvm::dyn_cast<mlir::func::CallOp>(op)) {
    for (auto [i, v] : llvm::enumerate(call.getOperands())) {
      if (!touches(v)) continue;
      std::optional<bool> writes = runtimeCallWrites(call.getCallee(), i);
      if (!writes || *writes) return true;
    }
    return false;
  }
  if (auto dps = llvm::dyn_cast<mlir::DestinationStyleOpInterface>(op))
    return llvm::any_of(dps.getDpsInits(), touches);
  if (auto effects = llvm::dyn_cast<mlir::MemoryEffectOpInterface>(op)) {
    llvm::SmallVector<mlir::MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (auto &effect : list)
      if (llvm::isa<mlir::MemoryEffects::Write, mlir::MemoryEffects::Free>(effect.getEffect()) &&
          (!effect.getValue() || touches(effect.getValue())))
        return true;
    return false;
  }
  if (op->hasTrait<mlir::OpTrait::HasRecursiveMemoryEffects>()) return false;
  return llvm::any_of(op->getOperands(), touches);
}

mlir::MemRefType dynamicView(mlir::MLIRContext *ctx, unsigned rank, mlir::Type element) {
  int64_t dyn = mlir::ShapedType::kDynamic;
  llvm::SmallVector<int64_t> shape(rank, dyn), strides(rank, dyn);
  return mlir::MemRefType::get(shape, element, mlir::StridedLayoutAttr::get(ctx, dyn, strides));
}

// The runtime function `name`, taking (A view of rank `aRank`, B, C, ids, [group,] tA, tB, acc).
mlir::func::FuncOp declaration(mlir::ModuleOp module, llvm::StringRef name, unsigned aRank,
                               bool group) {
  if (auto fn = module.lookupSymbol<mlir::func::FuncOp>(name)) return fn;
  mlir::OpBuilder b(module.getBodyRegion());
  mlir::MLIRContext *ctx = module.getContext();
  mlir::Type f32 = b.getF32Type(), i64 = b.getI64Type();
  llvm::SmallVector<mlir::Type> inputs = {dynamicView(ctx, aRank, f32), dynamicView(ctx, 3, f32),
                                          dynamicView(ctx, 3, f32),
                                          dynamicView(ctx, 2, b.getI32Type())};
  inputs.append(group ? 4 : 3, i64);
  auto fn = b.create<mlir::func::FuncOp>(module.getLoc(), name, b.getFunctionType(inputs, {}));
  fn.setPrivate();
  fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());  // runtime/hal/Gemm.h
  return fn;
}

// Whether `v` is all of `buffer` as rows of the same width (a reshape that keeps the last dim).
bool sameRows(Value v, Value buffer) {
  auto width = [](Value x) {
    return llvm::cast<mlir::MemRefType>(x.getType()).getShape().back();
  };
  return wholeBuffer(buffer) && isReshapeOf(v, buffer) && width(v) == width(buffer);
}

// A call of the plain batched GEMM: its A view (without the cast to the interface's type).
bool isBatchGemm(mlir::Operation *op) {
  auto call = llvm::dyn_cast<mlir::func::CallOp>(op);
  return call && call.getCallee() == kBatch && call.getNumOperands() == 6;
}
Value uncast(Value v) {
  if (auto cast = v.getDefiningOp<mlir::memref::CastOp>()) return cast.getSource();
  return v;
}

// The routing map `ids` (a whole buffer of E·C ids) as the [E, C] view the runtime takes.
Value idsView(mlir::OpBuilder &b, mlir::Location loc, Value ids, int64_t experts, int64_t slots) {
  auto type = mlir::MemRefType::get({experts, slots}, b.getI32Type());
  Value view = b.create<mlir::memref::ReinterpretCastOp>(
      loc, type, ids, b.getIndexAttr(0),
      llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(experts), b.getIndexAttr(slots)},
      llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(slots), b.getIndexAttr(1)});
  return b.create<mlir::memref::CastOp>(loc, dynamicView(b.getContext(), 2, b.getI32Type()),
                                        view);
}

// The batched GEMM's A view [E, rows, cols] (stored; transposed or not), and how many of its
// stored rows each batch has: the slots when they are the routing's.
std::pair<int64_t, int64_t> batchRows(mlir::func::CallOp call) {
  auto type = llvm::cast<mlir::MemRefType>(uncast(call.getOperand(0)).getType());
  if (type.getRank() != 3 || !type.hasStaticShape()) return {0, 0};
  return {type.getDimSize(0), type.getDimSize(1)};
}

// Phase 1. The GEMMs that read the gather's rows as A, if they are all its readers and nothing
// between it and them writes its source or ids; the deallocs of those in between, to move.
// The buffer may hold another value after the last of them (one-shot bufferization reuses a
// dead buffer in place: the next GEMM's C), if the first op that touches it again overwrites
// it whole: a GEMM's C with = (not +=). The buffer is then kept for that value.
struct Readers {
  llvm::SmallVector<mlir::func::CallOp> calls;
  llvm::SmallVector<mlir::Operation *> deallocs;  // the buffer's
  llvm::SmallVector<mlir::memref::DeallocOp> moved;
  bool reused = false;
};

// The ancestor of `op` in `block`, or null.
mlir::Operation *inBlock(mlir::Operation *op, mlir::Block *block) {
  return block->findAncestorOpInBlock(*op);
}

// Whether `op` overwrites all of `buffer`: a GEMM whose C is a cast of the buffer itself,
// with = , and no other operand a view of it.
bool overwrites(mlir::Operation *op, Value buffer) {
  auto call = llvm::dyn_cast<mlir::func::CallOp>(op);
  if (!call || !(call.getCallee().starts_with("stepc_matmul_") ||
                 call.getCallee().starts_with("stepc_batch_matmul_")) ||
      call.getNumOperands() != 6 || constantInt(call.getOperand(5)) != 0)
    return false;
  auto cast = call.getOperand(2).getDefiningOp<mlir::memref::CastOp>();
  if (!cast || cast.getSource() != buffer) return false;
  return viewRoot(call.getOperand(0)) != buffer && viewRoot(call.getOperand(1)) != buffer;
}

// Whether nothing in (from, to) of one block writes or frees a buffer with a root in `roots`;
// deallocs directly in the block go to `moved` (when given) instead of failing.
bool untouched(mlir::Operation *from, mlir::Operation *to, llvm::ArrayRef<Value> roots,
               llvm::SmallVector<mlir::memref::DeallocOp> *moved) {
  for (mlir::Operation *op = from->getNextNode(); op && op != to; op = op->getNextNode()) {
    auto dealloc = llvm::dyn_cast<mlir::memref::DeallocOp>(op);
    if (moved && dealloc && llvm::is_contained(roots, viewRoot(dealloc.getMemref()))) {
      moved->push_back(dealloc);
      continue;
    }
    bool writes = false;
    op->walk([&](mlir::Operation *nested) {
      if (mayWrite(nested, roots)) writes = true;
    });
    if (writes) return false;
  }
  return true;
}

std::optional<Readers> readersOf(const Gather &gather) {
  if (!gather.out.getDefiningOp<mlir::memref::AllocOp>()) return std::nullopt;
  Readers r;
  mlir::Block *block = gather.op->getBlock();
  int64_t rows = llvm::cast<mlir::MemRefType>(viewRoot(gather.ids).getType()).getNumElements();
  // Every op that reaches the buffer through views: the gather, its deallocs, the A reads,
  // and the others (a later value's).
  llvm::SmallVector<mlir::Operation *> others;
  llvm::SmallVector<mlir::OpOperand *> work;
  for (mlir::OpOperand &use : gather.out.getUses()) work.push_back(&use);
  while (!work.empty()) {
    mlir::OpOperand *use = work.pop_back_val();
    mlir::Operation *user = use->getOwner();
    if (user == gather.op) continue;
    if (llvm::isa<mlir::memref::DeallocOp>(user)) {
      r.deallocs.push_back(user);
      continue;
    }
    if (isBatchGemm(user) && use->getOperandNumber() == 0 &&
        sameRows(uncast(use->get()), gather.out) && user->getBlock() == block &&
        gather.op->isBeforeInBlock(user) &&
        llvm::none_of(user->getOperands().drop_front(),
                      [&](Value v) { return viewRoot(v) == gather.out; })) {
      auto call = llvm::cast<mlir::func::CallOp>(user);
      auto [experts, slots] = batchRows(call);
      if (experts * slots == rows) {
        r.calls.push_back(call);
        continue;
      }
    }
    if (llvm::isa<mlir::ViewLikeOpInterface, mlir::memref::CastOp>(user)) {
      for (mlir::OpOperand &next : user->getUses()) work.push_back(&next);
      continue;
    }
    if (!inBlock(user, block)) return std::nullopt;
    others.push_back(user);
  }
  if (r.calls.empty()) return std::nullopt;
  Value roots[] = {viewRoot(gather.source), viewRoot(gather.ids)};
  // The gathered call reads X while it writes C: the gather's copy kept them apart.
  for (mlir::func::CallOp call : r.calls)
    if (llvm::is_contained(roots, viewRoot(call.getOperand(1))) ||
        llvm::is_contained(roots, viewRoot(call.getOperand(2))))
      return std::nullopt;
  mlir::Operation *last = r.calls.front();
  for (mlir::func::CallOp call : r.calls)
    if (last->isBeforeInBlock(call)) last = call;
  if (!others.empty()) {
    mlir::Operation *first = inBlock(others.front(), block);
    for (mlir::Operation *op : others)
      if (inBlock(op, block)->isBeforeInBlock(first)) first = inBlock(op, block);
    if (!last->isBeforeInBlock(first) || !overwrites(first, gather.out)) return std::nullopt;
    r.reused = true;
  }
  if (!untouched(gather.op, last, roots, &r.moved)) return std::nullopt;
  return r;
}

void rewriteGathered(const Gather &gather, Readers &readers) {
  auto module = gather.op->getParentOfType<mlir::ModuleOp>();
  mlir::func::FuncOp callee = declaration(module, kGathered, 2, /*group=*/true);
  mlir::MLIRContext *ctx = module.getContext();
  mlir::Operation *last = readers.calls.front();
  for (mlir::func::CallOp call : readers.calls) {
    if (last->isBeforeInBlock(call)) last = call;
    mlir::OpBuilder b(call);
    mlir::Location loc = call.getLoc();
    auto [experts, slots] = batchRows(call);
    Value source = b.create<mlir::memref::CastOp>(
        loc, dynamicView(ctx, 2, b.getF32Type()), gather.source);
    Value ids = idsView(b, loc, viewRoot(gather.ids), experts, slots);
    Value group = b.create<mlir::arith::ConstantIntOp>(loc, gather.group, 64);
    auto replacement = b.create<mlir::func::CallOp>(
        loc, callee,
        mlir::ValueRange{source, call.getOperand(1), call.getOperand(2), ids, group,
                         call.getOperand(3), call.getOperand(4), call.getOperand(5)});
    // The attributes the call carries (the model op it came from) go with it.
    for (mlir::NamedAttribute attr : call->getDiscardableAttrs())
      replacement->setAttr(attr.getName(), attr.getValue());
  }
  for (mlir::memref::DeallocOp dealloc : readers.moved) dealloc->moveAfter(last);
  for (mlir::func::CallOp call : readers.calls) call.erase();
  gather.op->erase();
  if (readers.reused) return;
  for (mlir::Operation *op : readers.deallocs) op->erase();
  // The views the calls read through are left unused: erased users first.
  llvm::SetVector<mlir::Operation *> dead;
  std::function<void(Value)> collect = [&](Value v) {
    for (mlir::Operation *user : v.getUsers()) {
      for (Value result : user->getResults()) collect(result);
      dead.insert(user);
    }
  };
  collect(gather.out);
  for (mlir::Operation *op : dead) op->erase();
  gather.out.getDefiningOp()->erase();
}

// Phase 2. Which rows of a buffer are known to be zero: those where the routing map is -1.
// Just before `at`, the buffer `root` (rows of its last dim) holds zeros in every row whose id
// is negative, if its last writer in the block is
//   - a batched GEMM with = whose A rows are so (gathered, masked, or a plain one whose A is
//     known so before it): C's rows are A's rows, or
//   - an elementwise kernel that yields zero where its masked inputs are zero or its row's id
//     is negative (a gather, scaled or not; GELU of the experts' hidden rows; its gradient
//     times the masked output gradient),
// and the same ids hold for every masked input. Returns those ids (their root buffer) and the
// op the chain starts at (the ids must not change from there on), or nothing. As the runtime's
// trims, "zero" assumes finite values (0 · inf would be NaN).
struct Mask {
  Value ids;
  mlir::Operation *origin;
};

// Whether `map` reads, at each point of a loop nest over an output's elements, the id of the
// output's row: its leading dims in order (and a trailing 0 for a unit dim).
bool isRowMap(mlir::AffineMap map) {
  unsigned n = map.getNumDims();
  if (n < 2 || map.getNumResults() < n - 1 || map.getNumResults() > n) return false;
  for (unsigned i = 0; i + 1 < n; ++i)
    if (map.getResult(i) != mlir::getAffineDimExpr(i, map.getContext())) return false;
  if (map.getNumResults() == n - 1) return true;
  auto last = mlir::dyn_cast<mlir::AffineConstantExpr>(map.getResult(n - 1));
  return last && last.getValue() == 0;
}

int64_t rowsOf(Value v) {
  auto type = llvm::cast<mlir::MemRefType>(v.getType());
  return type.getNumElements() / type.getShape().back();
}

// Which buffers hold zeros in the empty rows, memoized (each question walks a block).
class MaskAnalysis {
 public:
  std::optional<Mask> before(Value root, mlir::Operation *at, int depth = 0) {
    auto key = std::make_pair(root.getAsOpaquePointer(), at);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    std::optional<Mask> mask = compute(root, at, depth);
    memo_[key] = mask;
    return mask;
  }

 private:
  std::optional<Mask> compute(Value root, mlir::Operation *at, int depth) {
    if (depth > 8 || !wholeBuffer(root)) return std::nullopt;
    Value roots[] = {root};
    for (mlir::Operation *op = at->getPrevNode(); op; op = op->getPrevNode()) {
      bool writes = false;
      op->walk([&](mlir::Operation *nested) {
        if (mayWrite(nested, roots)) writes = true;
      });
      if (!writes) continue;
      std::optional<Mask> mask = at_(op, root, depth);
      if (!mask ||
          llvm::cast<mlir::MemRefType>(mask->ids.getType()).getNumElements() != rowsOf(root))
        return std::nullopt;
      return mask;
    }
    return std::nullopt;
  }

  // Whether the body value `v` is zero in an empty row: when the block arguments in `zeros`
  // are zero and those in `ids` (the row's id) are negative. Within the runtime's trims'
  // assumption (finite values: 0 · x = 0), nothing more: 0 / y is not zero for y = 0.
  bool zeroWhen(Value v, const llvm::SmallPtrSetImpl<Value> &zeros,
                const llvm::SmallPtrSetImpl<Value> &ids, llvm::DenseMap<Value, bool> &seen) {
    if (zeros.contains(v)) return true;
    if (auto it = seen.find(v); it != seen.end()) return it->second;
    seen[v] = false;  // a cycle cannot happen in SSA; this also bounds the work
    bool zero = false;
    auto z = [&](Value x) { return zeroWhen(x, zeros, ids, seen); };
    mlir::Operation *def = v.getDefiningOp();
    if (mlir::matchPattern(v, mlir::m_AnyZeroFloat())) {
      zero = true;
    } else if (!def) {
      zero = false;
    } else if (llvm::isa<mlir::arith::MulFOp>(def)) {
      zero = z(def->getOperand(0)) || z(def->getOperand(1));
    } else if (llvm::isa<mlir::arith::NegFOp>(def)) {
      zero = z(def->getOperand(0));
    } else if (llvm::isa<mlir::arith::DivFOp>(def)) {
      // 0 / c for a nonzero constant c.
      mlir::FloatAttr c;
      zero = z(def->getOperand(0)) && mlir::matchPattern(def->getOperand(1), mlir::m_Constant(&c)) &&
             !c.getValue().isZero();
    } else if (llvm::isa<mlir::arith::AddFOp, mlir::arith::SubFOp>(def)) {
      zero = z(def->getOperand(0)) && z(def->getOperand(1));
    } else if (auto select = llvm::dyn_cast<mlir::arith::SelectOp>(def)) {
      // select(id >= 0, x, 0): a gather's zero row for an empty slot.
      auto present = select.getCondition().getDefiningOp<mlir::arith::CmpIOp>();
      if (present && present.getPredicate() == mlir::arith::CmpIPredicate::sge &&
          ids.contains(present.getLhs()) && constantInt(present.getRhs()) == 0)
        zero = z(select.getFalseValue());
      else
        zero = z(select.getTrueValue()) && z(select.getFalseValue());
    }
    seen[v] = zero;
    return zero;
  }

  std::optional<Mask> at_(mlir::Operation *writer, Value root, int depth) {
    if (auto g = llvm::dyn_cast<mlir::linalg::GenericOp>(writer)) return generic(g, root, depth);
    auto call = llvm::dyn_cast<mlir::func::CallOp>(writer);
    if (!call || call.getNumOperands() < 6 || !sameRows(uncast(call.getOperand(2)), root))
      return std::nullopt;
    llvm::StringRef callee = call.getCallee();
    unsigned flags = callee == kGathered ? 5 : callee == kMasked ? 4 : callee == kBatch ? 3 : 0;
    if (!flags || constantInt(call.getOperand(flags)) != 0 ||
        constantInt(call.getOperand(flags + 2)) != 0)
      return std::nullopt;  // A transposed (C's rows are not A's), or C accumulated onto
    if (callee != kBatch) return Mask{viewRoot(call.getOperand(3)), writer};
    Value a = uncast(call.getOperand(0));
    if (!sameRows(a, viewRoot(a))) return std::nullopt;
    return before(viewRoot(a), writer, depth + 1);
  }

  // Elementwise over the whole buffer (the output map the identity), its rows zero where the
  // inputs it reads row by row are (masked inputs: identity maps over rows of the same width;
  // ids: the row's id, which a gather selects on), and nothing written from its body.
  std::optional<Mask> generic(mlir::linalg::GenericOp g, Value root, int depth) {
    if (g.getNumDpsInits() != 1 || g.getNumReductionLoops() != 0 ||
        !sameRows(g.getDpsInitOperand(0)->get(), root) || !g.hasPureBufferSemantics() ||
        !g.getMatchingIndexingMap(g.getDpsInitOperand(0)).isIdentity())
      return std::nullopt;
    for (mlir::Operation &op : g.getRegion().front())
      if (!llvm::isa<mlir::linalg::YieldOp, mlir::memref::LoadOp>(op) &&
          !mlir::isMemoryEffectFree(&op))
        return std::nullopt;
    std::optional<Mask> mask;
    auto join = [&](const Mask &m) {
      if (mask && m.ids != mask->ids) return false;
      if (!mask || m.origin->isBeforeInBlock(mask->origin)) mask = m;
      return true;
    };
    llvm::SmallPtrSet<Value, 4> zeros, ids;
    auto width = [](Value x) {
      return llvm::cast<mlir::MemRefType>(x.getType()).getShape().back();
    };
    for (mlir::OpOperand &operand : g->getOpOperands()) {
      Value v = operand.get();
      auto type = llvm::dyn_cast<mlir::MemRefType>(v.getType());
      if (!type || !wholeBuffer(viewRoot(v)) || !isReshapeOf(v, viewRoot(v))) continue;
      mlir::AffineMap map = g.getMatchingIndexingMap(&operand);
      if (type.getElementType().isInteger(32) && isRowMap(map) &&
          llvm::cast<mlir::MemRefType>(viewRoot(v).getType()).getNumElements() == rowsOf(root)) {
        if (join(Mask{viewRoot(v), g})) ids.insert(g.getMatchingBlockArgument(&operand));
        continue;
      }
      // Rows of the same width in the input's buffer, the view and the output's buffer.
      if (!map.isIdentity() || width(v) != width(root) || width(viewRoot(v)) != width(root))
        continue;
      std::optional<Mask> m = before(viewRoot(v), g, depth + 1);
      if (m && join(*m)) zeros.insert(g.getMatchingBlockArgument(&operand));
    }
    auto yield = llvm::cast<mlir::linalg::YieldOp>(g.getRegion().front().getTerminator());
    llvm::DenseMap<Value, bool> seen;
    if (mask && zeroWhen(yield.getOperand(0), zeros, ids, seen)) return mask;
    return std::nullopt;
  }

  llvm::DenseMap<std::pair<const void *, mlir::Operation *>, std::optional<Mask>> memo_;
};

void rewriteMasked(mlir::func::CallOp call, const Mask &mask) {
  auto module = call->getParentOfType<mlir::ModuleOp>();
  mlir::func::FuncOp callee = declaration(module, kMasked, 3, /*group=*/false);
  mlir::OpBuilder b(call);
  mlir::Location loc = call.getLoc();
  auto [experts, slots] = batchRows(call);
  Value ids = idsView(b, loc, mask.ids, experts, slots);
  auto replacement = b.create<mlir::func::CallOp>(
      loc, callee,
      mlir::ValueRange{call.getOperand(0), call.getOperand(1), call.getOperand(2), ids,
                       call.getOperand(3), call.getOperand(4), call.getOperand(5)});
  for (mlir::NamedAttribute attr : call->getDiscardableAttrs())
    replacement->setAttr(attr.getName(), attr.getValue());
  call.erase();
}

struct GatheredGemmsPass : impl::GatheredGemmsBase<GatheredGemmsPass> {
  void runOnOperation() override {
    llvm::SmallVector<Gather> gathers;
    getOperation().walk([&](mlir::linalg::GenericOp g) {
      if (auto gather = gatherOf(g)) gathers.push_back(*gather);
    });
    for (const Gather &gather : gathers)
      if (auto readers = readersOf(gather)) rewriteGathered(gather, *readers);
    // Then the batched GEMMs whose A (or, summing over the slots, B) is known zero in the
    // routing's empty slots.
    llvm::SmallVector<std::pair<mlir::func::CallOp, Mask>> masked;
    MaskAnalysis analysis;
    getOperation().walk([&](mlir::func::CallOp call) {
      if (!isBatchGemm(call)) return;
      Value a = uncast(call.getOperand(0));
      if (!sameRows(a, viewRoot(a))) return;
      std::optional<Mask> mask = analysis.before(viewRoot(a), call);
      // Aᵀ · B summed over the slots (a weight gradient) with B zero in the empty slots: those
      // terms are zero whatever A holds there, so the same call leaves them out.
      Value b = uncast(call.getOperand(1));
      if (!mask && constantInt(call.getOperand(3)) == 1 && constantInt(call.getOperand(4)) == 0 &&
          sameRows(b, viewRoot(b)) && rowsOf(viewRoot(b)) == rowsOf(viewRoot(a)))
        mask = analysis.before(viewRoot(b), call);
      auto [experts, slots] = batchRows(call);
      if (!mask || experts * slots != rowsOf(viewRoot(a)) ||
          viewRoot(call.getOperand(2)) == mask->ids ||
          !untouched(mask->origin, call, {mask->ids}, nullptr))
        return;
      masked.push_back({call, *mask});
    });
    for (auto &[call, mask] : masked) rewriteMasked(call, mask);
  }
};

}  // namespace

}  // namespace stepc::codegen
