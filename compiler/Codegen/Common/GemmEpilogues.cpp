//===- GemmEpilogues.cpp - --step-gemm-epilogues --------------------------===//
//
// Folds the bias add after a GEMM into the GEMM (cuBLASLt's BIAS and GELU_BIAS epilogues, with
// beta = 1 for a residual): a library GEMM `C = op(A)·op(B)` (--step-contractions-to-library)
// whose output is a temporary read once, by the very next kernel, where that kernel is
//     D = C + bias           (bias broadcast along the last dimension)
//  or D = C + bias + R       (any order of the adds; R a residual of D's shape)
//  or D = gelu(C + bias)     (step.gelu's tanh form, as lowered, in any operand order)
//  or D = C · gelu'(X)       (its backward form, as the VJP writes it; X the GELU's input),
//                            with the bias gradient (D's column sums) after it folded in too
//  or D = C + D              (a residual updated in place: the plain GEMM accumulating into D)
// becomes one call `stepc_matmul_epilogue_f32(A, B, D, bias, R, transA, transB, flags)`
// (runtime/hal/Gemm.h; flags: 1 residual, 2 gelu, 4 gelu' with X in R's slot, 8 the bias
// gradient into the bias slot): D = op(A)·op(B) (+ R) + bias, or gelu of it, or
// op(A)·op(B) · gelu'(X) [and bias = D's column sums]; C's buffer is dropped. GPT-2 has them after every projection (the attention's qkv and
// output, the MLP's fc with its GELU, and its output). The CPU
// implementation is the GEMM then a pass adding the bias; on CUDA, cuBLASLt does it in the
// GEMM's epilogue, saving a kernel and a round trip of D through memory.
//
// The kernel is the first op after the GEMM reading C; the GEMM moves to it, so nothing in
// between may write A's or B's buffer (ops with unknown effects may not touch them at all).
// D and R must collapse to the GEMM's 2-D shape without a copy.
// Separately, a weight-gradient GEMM dW = op(X)·dY and the bias gradient of the same dY (its
// column sums) anywhere in the same block become one call with flags 16 (cuBLASLt's BGRADA),
// when nothing between them interferes.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/Passes.h"
#include "compiler/Codegen/Common/ViewRoot.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <tuple>
#include <utility>

namespace stepc::codegen {

#define GEN_PASS_DEF_GEMMEPILOGUES
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

constexpr llvm::StringLiteral kEpilogue = "stepc_matmul_epilogue_f32";
// The call's last operand (runtime/hal/Gemm.h).
constexpr int64_t kResidual = 1, kGelu = 2, kDGelu = 4, kBiasGrad = 8, kBiasGradOfB = 16;

// The buffer a view is of (through casts, reshapes and subviews).
mlir::Value rootOf(mlir::Value v) {
  while (mlir::Operation *def = v.getDefiningOp()) {
    if (auto view = llvm::dyn_cast<mlir::ViewLikeOpInterface>(def))
      v = view.getViewSource();
    else
      break;
  }
  return v;
}

// Every op using `buffer` through views (the views themselves excluded).
void usersOf(mlir::Value buffer, llvm::SmallVectorImpl<mlir::Operation *> &out) {
  for (mlir::Operation *user : buffer.getUsers()) {
    auto view = llvm::dyn_cast<mlir::ViewLikeOpInterface>(user);
    if (view && view.getViewSource() == buffer) {
      for (mlir::Value r : user->getResults()) usersOf(r, out);
      continue;
    }
    out.push_back(user);
  }
}


bool isCallTo(mlir::Operation *op, llvm::StringRef name) {
  auto call = llvm::dyn_cast<mlir::func::CallOp>(op);
  return call && call.getCallee() == name;
}

// The body is a sum of the block arguments `leaves` (each exactly once), with addf only.
bool isSumOf(mlir::Block &body, llvm::ArrayRef<mlir::BlockArgument> leaves) {
  llvm::SmallVector<mlir::Value> seen;
  std::function<bool(mlir::Value)> walk = [&](mlir::Value v) {
    if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(v)) {
      if (!llvm::is_contained(leaves, arg) || llvm::is_contained(seen, v)) return false;
      seen.push_back(v);
      return true;
    }
    auto add = v.getDefiningOp<mlir::arith::AddFOp>();
    return add && add->getBlock() == &body && walk(add.getLhs()) && walk(add.getRhs());
  };
  if (body.getOperations().size() != leaves.size())  // leaves - 1 adds and the yield
    return false;
  return walk(body.getTerminator()->getOperand(0)) && seen.size() == leaves.size();
}

// `v` is a float constant equal to `want` (to float precision).
bool isConstant(mlir::Value v, double want) {
  llvm::APFloat value(0.0);
  if (!mlir::matchPattern(v, mlir::m_ConstantFloat(&value))) return false;
  bool lost = false;
  value.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &lost);
  return std::abs(value.convertToDouble() - want) <= 1e-6 * std::abs(want);
}

// `v` = op(a, b) of type Op with `pred(a, b)` in either order; records the op in `used`.
template <typename Op, typename Pred>
bool commuted(mlir::Value v, llvm::SmallPtrSetImpl<mlir::Operation *> &used, Pred pred) {
  auto op = v.getDefiningOp<Op>();
  if (!op || !(pred(op.getLhs(), op.getRhs()) || pred(op.getRhs(), op.getLhs()))) return false;
  used.insert(op);
  return true;
}

// The x of y = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (step.gelu's tanh form, as
// ElementwisePatterns.cpp lowers it, in any operand order), or null; `used` gets its ops.
mlir::Value geluTanhInput(mlir::Value y, llvm::SmallPtrSetImpl<mlir::Operation *> &used) {
  namespace ar = mlir::arith;
  mlir::Value x, inner;
  auto half = [&](mlir::Value a, mlir::Value b) {  // a = 0.5·x, b = 1 + tanh(...)
    return commuted<ar::MulFOp>(a, used, [&](mlir::Value c, mlir::Value v) {
             if (!isConstant(c, 0.5)) return false;
             x = v;
             return true;
           }) &&
           commuted<ar::AddFOp>(b, used, [&](mlir::Value c, mlir::Value t) {
             auto tanh = t.getDefiningOp<mlir::math::TanhOp>();
             if (!isConstant(c, 1.0) || !tanh) return false;
             used.insert(tanh);
             inner = tanh.getOperand();
             return true;
           });
  };
  if (!commuted<ar::MulFOp>(y, used, half) || !x) return nullptr;
  // inner = √(2/π)·(x + 0.044715·((x·x)·x))
  bool ok = commuted<ar::MulFOp>(inner, used, [&](mlir::Value c, mlir::Value sum) {
    return isConstant(c, std::sqrt(2.0 / M_PI)) &&
           commuted<ar::AddFOp>(sum, used, [&](mlir::Value a, mlir::Value cubic) {
             return a == x && commuted<ar::MulFOp>(cubic, used, [&](mlir::Value k, mlir::Value x3) {
                      return isConstant(k, 0.044715) &&
                             commuted<ar::MulFOp>(x3, used, [&](mlir::Value sq, mlir::Value x1) {
                               return x1 == x && commuted<ar::MulFOp>(sq, used, [&](mlir::Value p,
                                                                                    mlir::Value q) {
                                        return p == x && q == x;
                                      });
                             });
                    });
           });
  });
  return ok ? x : nullptr;
}

// y = g · gelu'(x) for step.gelu's tanh form, as its VJP (ElementwiseVjps.cpp) writes it:
//   x2 = x·x, t = tanh(k·(x + c·x2·x)), du = k·(1 + 3c·x2),
//   y = g · ((1 + t)·0.5 + (0.5·x)·((1 - t·t)·du)),
// with k = √(2/π), c = 0.044715, in any operand order of the commutative ops.
bool isGeluTanhGrad(mlir::Value y, mlir::Value g, mlir::Value x,
                    llvm::SmallPtrSetImpl<mlir::Operation *> &used) {
  namespace ar = mlir::arith;
  constexpr double k = 0.7978845608028654, c = 0.044715;
  auto isX2 = [&](mlir::Value v) {
    return commuted<ar::MulFOp>(v, used, [&](mlir::Value p, mlir::Value q) { return p == x && q == x; });
  };
  auto scaled = [&](mlir::Value v, double factor, auto &&inner) {  // v = factor · inner(.)
    return commuted<ar::MulFOp>(v, used, [&](mlir::Value f, mlir::Value rest) {
      return isConstant(f, factor) && inner(rest);
    });
  };
  mlir::Value t;
  auto isTanh = [&](mlir::Value v) {
    auto tanh = v.getDefiningOp<mlir::math::TanhOp>();
    if (!tanh) return false;
    if (t && t != v) return false;
    bool ok = scaled(tanh.getOperand(), k, [&](mlir::Value sum) {
      return commuted<ar::AddFOp>(sum, used, [&](mlir::Value a, mlir::Value cubic) {
        return a == x && scaled(cubic, c, [&](mlir::Value x3) {
                 return commuted<ar::MulFOp>(x3, used, [&](mlir::Value p, mlir::Value q) {
                   return isX2(p) && q == x;
                 });
               });
      });
    });
    if (ok) {
      used.insert(tanh);
      t = v;
    }
    return ok;
  };
  auto onePlusT = [&](mlir::Value v) {
    return commuted<ar::AddFOp>(v, used, [&](mlir::Value one, mlir::Value tv) {
      return isConstant(one, 1.0) && isTanh(tv);
    });
  };
  auto left = [&](mlir::Value v) { return scaled(v, 0.5, onePlusT); };  // (1 + t)·0.5
  auto right = [&](mlir::Value v) {  // (0.5·x)·((1 - t·t)·du)
    return commuted<ar::MulFOp>(v, used, [&](mlir::Value halfX, mlir::Value rest) {
      return scaled(halfX, 0.5, [&](mlir::Value xv) { return xv == x; }) &&
             commuted<ar::MulFOp>(rest, used, [&](mlir::Value oneMinus, mlir::Value du) {
               auto sub = oneMinus.getDefiningOp<ar::SubFOp>();
               if (!sub || !isConstant(sub.getLhs(), 1.0) ||
                   !commuted<ar::MulFOp>(sub.getRhs(), used, [&](mlir::Value p, mlir::Value q) {
                     return p == q && isTanh(p);
                   }))
                 return false;
               used.insert(sub);
               return scaled(du, k, [&](mlir::Value sum) {
                 return commuted<ar::AddFOp>(sum, used, [&](mlir::Value one, mlir::Value x2c) {
                   return isConstant(one, 1.0) && scaled(x2c, 3 * c, isX2);
                 });
               });
             });
    });
  };
  return commuted<ar::MulFOp>(y, used, [&](mlir::Value gv, mlir::Value d) {
    return gv == g && commuted<ar::AddFOp>(d, used, [&](mlir::Value p, mlir::Value q) {
             return left(p) && right(q);
           });
  });
}

// `sum` sums a reshape of the buffer `source` over all but its last dimension, in order, into
// a 1-D f32 buffer G (G[j] += X[..., j]), and `fill` zero-fills G: a bias gradient.
bool isBiasGradient(mlir::linalg::FillOp fill, mlir::linalg::GenericOp sum, mlir::Value source) {
  mlir::FloatAttr zero;
  if (!fill || !sum || !mlir::matchPattern(fill.getInputs().front(), mlir::m_Constant(&zero)) ||
      !zero.getValue().isZero() || sum.getNumDpsInputs() != 1 || sum.getNumDpsInits() != 1 ||
      sum.getDpsInits()[0] != fill.getOutputs().front())
    return false;
  int64_t rank = sum.getNumLoops();
  auto iterators = sum.getIteratorTypesArray();
  for (int64_t i = 0; i < rank; ++i)
    if ((iterators[i] == mlir::utils::IteratorType::parallel) != (i == rank - 1)) return false;
  mlir::MLIRContext *ctx = sum.getContext();
  mlir::OpOperand *in = sum.getDpsInputOperand(0), *out = sum.getDpsInitOperand(0);
  auto outType = llvm::dyn_cast<mlir::MemRefType>(out->get().getType());
  if (!isReshapeOf(in->get(), source) ||
      sum.getMatchingIndexingMap(in) != mlir::AffineMap::getMultiDimIdentityMap(rank, ctx) ||
      sum.getMatchingIndexingMap(out) !=
          mlir::AffineMap::get(rank, 0, mlir::getAffineDimExpr(rank - 1, ctx), ctx) ||
      !outType || outType.getRank() != 1 || !outType.getElementType().isF32() ||
      rootOf(out->get()) == source)
    return false;
  mlir::Block &body = *sum.getBody();
  auto add = body.getTerminator()->getOperand(0).getDefiningOp<mlir::arith::AddFOp>();
  mlir::Value x = sum.getMatchingBlockArgument(in), acc = sum.getMatchingBlockArgument(out);
  return body.getOperations().size() == 2 && add &&
         ((add.getLhs() == acc && add.getRhs() == x) || (add.getLhs() == x && add.getRhs() == acc));
}

// Whether `op` may write (or free) one of the buffers `roots`: the GEMM interface writes its
// third operand only; other ops by their memory effects; an op without declared effects may
// write any buffer it is given.
bool mayWrite(mlir::Operation *op, std::initializer_list<mlir::Value> roots) {
  auto isTarget = [&](mlir::Value v) {
    return llvm::isa<mlir::MemRefType>(v.getType()) && llvm::is_contained(roots, rootOf(v));
  };
  auto call = llvm::dyn_cast<mlir::func::CallOp>(op);
  if (call && (call.getCallee().starts_with("stepc_matmul_") ||
               call.getCallee().starts_with("stepc_batch_matmul_")))
    return isTarget(call.getOperand(2));
  if (auto effects = llvm::dyn_cast<mlir::MemoryEffectOpInterface>(op)) {
    llvm::SmallVector<mlir::MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    return llvm::any_of(list, [&](mlir::MemoryEffects::EffectInstance &e) {
      return !llvm::isa<mlir::MemoryEffects::Read>(e.getEffect()) &&
             (!e.getValue() || isTarget(e.getValue()));
    });
  }
  return llvm::any_of(op->getOperands(), isTarget);
}

// The next op after `op` that is not a view, an allocation or a constant.
mlir::Operation *nextWork(mlir::Operation *op) {
  for (op = op->getNextNode(); op; op = op->getNextNode())
    if (!llvm::isa<mlir::ViewLikeOpInterface, mlir::memref::AllocOp>(op) &&
        !op->hasTrait<mlir::OpTrait::ConstantLike>())
      return op;
  return nullptr;
}

// The bias gradient right after `consumer` (only views, constants and allocations between),
// summing D (root `d`). Both null if not there.
std::pair<mlir::linalg::FillOp, mlir::linalg::GenericOp> biasGradientAfter(
    mlir::Operation *consumer, mlir::Value d) {
  auto fill = llvm::dyn_cast_or_null<mlir::linalg::FillOp>(nextWork(consumer));
  if (!fill) return {};
  auto sum = llvm::dyn_cast_or_null<mlir::linalg::GenericOp>(nextWork(fill));
  if (!isBiasGradient(fill, sum, d)) return {};
  return {fill, sum};
}

struct GemmEpiloguesPass : impl::GemmEpiloguesBase<GemmEpiloguesPass> {
  using GemmEpiloguesBase::GemmEpiloguesBase;
  mlir::func::FuncOp declaration(mlir::ModuleOp module, mlir::OpBuilder &b) {
    if (auto fn = module.lookupSymbol<mlir::func::FuncOp>(kEpilogue)) return fn;
    mlir::OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    mlir::Type m2 = view(b, 2), m1 = view(b, 1), i64 = b.getI64Type();
    auto fn = b.create<mlir::func::FuncOp>(
        module.getLoc(), kEpilogue, b.getFunctionType({m2, m2, m2, m1, m2, i64, i64, i64}, {}));
    fn.setPrivate();
    fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
    return fn;
  }

  // stepc_matmul_epilogue_f32(A, B, d, bias, r, transA, transB, flags), A, B and the
  // transposes taken from `gemm`, at b's insertion point.
  void createCall(mlir::ModuleOp module, mlir::OpBuilder &b, mlir::func::CallOp gemm,
                  mlir::Value d, mlir::Value bias, mlir::Value r, int64_t flags) {
    mlir::Location loc = gemm.getLoc();
    mlir::Value flagsValue = b.create<mlir::arith::ConstantIntOp>(loc, flags, 64);
    b.create<mlir::func::CallOp>(
        loc, declaration(module, b),
        mlir::ValueRange{gemm.getOperand(0), gemm.getOperand(1), d, bias, r, gemm.getOperand(3),
                         gemm.getOperand(4), flagsValue});
  }

  static mlir::MemRefType view(mlir::OpBuilder &b, unsigned rank) {
    int64_t dyn = mlir::ShapedType::kDynamic;
    llvm::SmallVector<int64_t> shape(rank, dyn), strides(rank, dyn);
    return mlir::MemRefType::get(shape, b.getF32Type(),
                                 mlir::StridedLayoutAttr::get(b.getContext(), dyn, strides));
  }

  // `v` (the generic's operand, rank r) as the GEMM's 2-D dynamic view, or null.
  static mlir::Value asMatrix(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v) {
    auto type = llvm::cast<mlir::MemRefType>(v.getType());
    mlir::Value m = v;
    if (type.getRank() > 2) {
      llvm::SmallVector<mlir::ReassociationIndices> groups(2);
      for (int64_t i = 0; i + 1 < type.getRank(); ++i) groups[0].push_back(i);
      groups[1].push_back(type.getRank() - 1);
      if (!mlir::memref::CollapseShapeOp::isGuaranteedCollapsible(type, groups)) return nullptr;
      m = b.create<mlir::memref::CollapseShapeOp>(loc, v, groups);
    } else if (type.getRank() != 2) {
      return nullptr;
    }
    return b.create<mlir::memref::CastOp>(loc, view(b, 2), m);
  }

  bool rewrite(mlir::ModuleOp module, mlir::func::CallOp gemm) {
    llvm::APInt accumulate;
    if (!mlir::matchPattern(gemm.getOperand(5), mlir::m_ConstantInt(&accumulate)) ||
        accumulate != 0)
      return false;
    mlir::Value c = rootOf(gemm.getOperand(2));
    if (!c.getDefiningOp<mlir::memref::AllocOp>()) return false;
    // The consumer: the first later op reading C. The GEMM moves to it, so nothing in between
    // may write (or free) A's or B's buffer; an op whose effects are unknown must not touch
    // them at all, and nothing in between may hold regions (loops).
    mlir::Value rootA = rootOf(gemm.getOperand(0)), rootB = rootOf(gemm.getOperand(1));
    mlir::Operation *next = gemm->getNextNode();
    for (; next; next = next->getNextNode()) {
      if (llvm::isa<mlir::ViewLikeOpInterface, mlir::memref::AllocOp>(next) ||
          next->hasTrait<mlir::OpTrait::ConstantLike>())
        continue;
      bool readsC = llvm::any_of(next->getOperands(), [&](mlir::Value v) {
        return llvm::isa<mlir::MemRefType>(v.getType()) && rootOf(v) == c;
      });
      if (readsC) break;
      if (next->getNumRegions() != 0 && !llvm::isa<mlir::linalg::LinalgOp>(next)) return false;
      if (mayWrite(next, {rootA, rootB})) return false;
    }
    auto generic = llvm::dyn_cast_or_null<mlir::linalg::GenericOp>(next);
    if (!generic || generic.getNumDpsInits() != 1 || generic.getNumParallelLoops() != generic.getNumLoops())
      return false;
    // The GEMM writes all of C. Nobody but the consumer reads what it wrote: C's other users
    // come before the GEMM (which overwrites them), or after the consumer when the consumer
    // wrote D into C itself (in place: they read D), or free it.
    if (!isReshapeOf(gemm.getOperand(2), c)) return false;
    bool inPlace = rootOf(generic.getDpsInitOperand(0)->get()) == c;
    llvm::SmallVector<mlir::Operation *> users;
    usersOf(c, users);
    for (mlir::Operation *user : users) {
      if (user == gemm.getOperation() || user == generic.getOperation() ||
          llvm::isa<mlir::memref::DeallocOp>(user))
        continue;
      mlir::Operation *at = gemm->getBlock()->findAncestorOpInBlock(*user);
      if (!at) return false;
      bool before = at->isBeforeInBlock(gemm), after = generic->isBeforeInBlock(at);
      if (!before && !(after && inPlace)) return false;
    }
    // Inputs: C and R with D's identity map, the bias along the last loop.
    int64_t rank = generic.getNumLoops();
    mlir::Value cView, bias, residual;
    mlir::BlockArgument cArg, biasArg, residualArg;
    mlir::AffineMap identity = mlir::AffineMap::getMultiDimIdentityMap(rank, &getContext());
    mlir::AffineMap last = mlir::AffineMap::get(
        rank, 0, mlir::getAffineDimExpr(rank - 1, &getContext()), &getContext());
    for (mlir::OpOperand *input : generic.getDpsInputOperands()) {
      mlir::AffineMap map = generic.getMatchingIndexingMap(input);
      mlir::BlockArgument arg = generic.getMatchingBlockArgument(input);
      auto type = llvm::dyn_cast<mlir::MemRefType>(input->get().getType());
      if (!type || !type.getElementType().isF32()) return false;
      if (map == identity && rootOf(input->get()) == c && !cView) {
        cView = input->get();
        cArg = arg;
      } else if (map == last && !bias) {
        bias = input->get();
        biasArg = arg;
      } else if (map == identity && !residual) {
        residual = input->get();
        residualArg = arg;
      } else {
        return false;
      }
    }
    mlir::OpOperand *init = generic.getDpsInitOperand(0);
    if (!cView || generic.getMatchingIndexingMap(init) != identity ||
        !generic.getMatchingBlockArgument(init).use_empty())
      return false;
    llvm::SmallVector<mlir::BlockArgument> leaves{cArg, biasArg};
    if (residual) leaves.push_back(residualArg);
    int64_t flags = residual ? kResidual : 0;
    // D = C + R with D the very buffer R is (a residual stream updated in place, x += h·W): the
    // GEMM accumulates into D itself (BLAS's beta = 1), so C and the kernel go. No epilogue
    // call: the plain GEMM interface does it, on the CPU too.
    bool intoResidual = !bias && residual && init->get() == residual &&
                        isSumOf(*generic.getBody(), {cArg, residualArg});
    if (intoResidual) {
      // checked below with the other forms
    } else if (!bias) {
      // D = C · gelu'(X), X the GELU's input (the residual slot carries it): cuBLASLt's DGELU.
      if (!gelu) return false;
      mlir::Block &body = *generic.getBody();
      llvm::SmallPtrSet<mlir::Operation *, 32> used;
      if (!residual || !isGeluTanhGrad(body.getTerminator()->getOperand(0), cArg, residualArg,
                                       used))
        return false;
      for (mlir::Operation &op : body.without_terminator())
        if (!used.contains(&op) && !op.hasTrait<mlir::OpTrait::ConstantLike>()) return false;
      flags = kDGelu;
    } else if (!isSumOf(*generic.getBody(), leaves)) {
      // D = gelu(C + bias): cuBLASLt's GELU_BIAS epilogue.
      if (!gelu) return false;
      mlir::Block &body = *generic.getBody();
      llvm::SmallPtrSet<mlir::Operation *, 16> used;
      mlir::Value x = residual ? nullptr : geluTanhInput(body.getTerminator()->getOperand(0), used);
      if (!x || !commuted<mlir::arith::AddFOp>(x, used, [&](mlir::Value p, mlir::Value q) {
            return p == cArg && q == biasArg;
          }))
        return false;
      for (mlir::Operation &op : body.without_terminator())
        if (!used.contains(&op) && !op.hasTrait<mlir::OpTrait::ConstantLike>()) return false;
      flags = kGelu;
    }

    // D is C's shape (C read whole, through reshapes only), and the GEMM's inputs and the
    // bias are not D (cuBLASLt reads them while writing D; R may be D, an in-place residual).
    auto cType = llvm::dyn_cast<mlir::MemRefType>(c.getType());
    auto dType = llvm::cast<mlir::MemRefType>(init->get().getType());
    if (!cType || !cType.hasStaticShape() || !dType.hasStaticShape() || !isReshapeOf(cView, c) ||
        cType.getNumElements() != dType.getNumElements() ||
        cType.getShape().back() != dType.getShape().back())
      return false;
    mlir::Value dRoot = rootOf(init->get());
    if (rootA == dRoot || rootB == dRoot || (bias && rootOf(bias) == dRoot) ||
        (flags == kDGelu && rootOf(residual) == dRoot))
      return false;
    if (intoResidual) {
      mlir::OpBuilder b(generic);
      mlir::Location loc = gemm.getLoc();
      mlir::Value d = asMatrix(b, loc, init->get());
      if (!d) return false;
      mlir::Value one = b.create<mlir::arith::ConstantIntOp>(loc, 1, 64);
      auto call = b.create<mlir::func::CallOp>(
          loc, gemm.getCallee(), mlir::TypeRange{},
          mlir::ValueRange{gemm.getOperand(0), gemm.getOperand(1), d, gemm.getOperand(3),
                           gemm.getOperand(4), one});
      for (mlir::NamedAttribute attr : gemm->getDiscardableAttrs())
        call->setAttr(attr.getName(), attr.getValue());
      generic.erase();
      gemm.erase();
      return true;
    }

    // After GELU's gradient, the bias gradient (a zero fill, then D's column sums into it) joins
    // the epilogue too: cuBLASLt's DGELU_BGRAD.
    mlir::linalg::FillOp gradFill;
    mlir::linalg::GenericOp gradSum;
    if (flags == kDGelu) std::tie(gradFill, gradSum) = biasGradientAfter(generic, dRoot);
    if (gradSum) {
      mlir::Value g = rootOf(gradSum.getDpsInits()[0]);
      if (g == rootA || g == rootB || g == rootOf(residual)) gradFill = {}, gradSum = {};
    }

    // The fused call goes where the last folded kernel was (only views, allocations, constants
    // and the dropped fill lie between, and the gradient's buffer may be made among them).
    mlir::OpBuilder b(gradSum ? gradSum.getOperation() : generic.getOperation());
    mlir::Location loc = gemm.getLoc();
    mlir::Value d = asMatrix(b, loc, init->get());
    mlir::Value r = residual ? asMatrix(b, loc, residual) : d;
    if (!d || !r) return false;
    // DGELU has no bias: the slot gets D's first row, which the runtime does not read; with
    // the bias gradient it is that gradient's buffer (written).
    mlir::Value biasView;
    if (gradSum) {
      biasView = b.create<mlir::memref::CastOp>(loc, view(b, 1), gradSum.getDpsInits()[0]);
      flags |= kBiasGrad;
    } else if (bias) {
      biasView = b.create<mlir::memref::CastOp>(loc, view(b, 1), bias);
    } else {
      mlir::OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
      mlir::Value n = b.create<mlir::memref::DimOp>(loc, d, 1);
      biasView = b.create<mlir::memref::SubViewOp>(
          loc, view(b, 1), d, llvm::ArrayRef<mlir::OpFoldResult>{zero, zero},
          llvm::ArrayRef<mlir::OpFoldResult>{one, n}, llvm::ArrayRef<mlir::OpFoldResult>{one, one});
    }
    createCall(module, b, gemm, d, biasView, r, flags);
    generic.erase();
    gemm.erase();
    if (gradSum) {
      gradSum.erase();
      gradFill.erase();
    }
    return true;
  }

  // A weight-gradient GEMM dW = op(X)·dY (dY not transposed) and the bias gradient of the
  // same dY (a zero fill, then dY's column sums) anywhere in the block: one call, flags 16
  // (cuBLASLt's BGRADA; accumulate is the residual R = D). Both move to the later of the two
  // places, so nothing in between may touch dW, the gradient's buffer, or write X or dY.
  bool rewriteWeightGradient(mlir::ModuleOp module, mlir::func::CallOp gemm) {
    llvm::APInt transB, accumulate;
    if (!mlir::matchPattern(gemm.getOperand(4), mlir::m_ConstantInt(&transB)) || transB != 0 ||
        !mlir::matchPattern(gemm.getOperand(5), mlir::m_ConstantInt(&accumulate)))
      return false;
    mlir::Value rootA = rootOf(gemm.getOperand(0)), rootB = rootOf(gemm.getOperand(1)),
                rootC = rootOf(gemm.getOperand(2));
    if (!isReshapeOf(gemm.getOperand(1), rootB)) return false;
    mlir::Block *block = gemm->getBlock();
    mlir::linalg::FillOp fill;
    mlir::linalg::GenericOp sum;
    for (mlir::Operation &op : *block) {
      auto f = llvm::dyn_cast<mlir::linalg::FillOp>(op);
      if (!f) continue;
      auto g = llvm::dyn_cast_or_null<mlir::linalg::GenericOp>(nextWork(f));
      if (isBiasGradient(f, g, rootB)) {
        fill = f;
        sum = g;
        break;
      }
    }
    if (!sum) return false;
    mlir::Value rootG = rootOf(sum.getDpsInits()[0]);
    if (rootG == rootA || rootG == rootB || rootG == rootC) return false;
    bool sumFirst = sum->isBeforeInBlock(gemm);
    mlir::Operation *first = sumFirst ? sum.getOperation() : gemm.getOperation();
    mlir::Operation *last = sumFirst ? gemm.getOperation() : fill.getOperation();
    for (mlir::Operation *op = first->getNextNode(); op && op != last; op = op->getNextNode()) {
      if (op == fill.getOperation() || op == sum.getOperation() ||
          llvm::isa<mlir::ViewLikeOpInterface, mlir::memref::AllocOp>(op) ||
          op->hasTrait<mlir::OpTrait::ConstantLike>())
        continue;
      if (op->getNumRegions() != 0 && !llvm::isa<mlir::linalg::LinalgOp>(op)) return false;
      for (mlir::Value v : op->getOperands()) {
        if (!llvm::isa<mlir::MemRefType>(v.getType())) continue;
        mlir::Value root = rootOf(v);
        if (root == rootC || root == rootG) return false;
      }
      if (mayWrite(op, {rootA, rootB})) return false;
    }
    // The gradient's buffer must be defined before the fused call (at the later place).
    mlir::Operation *place = sumFirst ? gemm.getOperation() : sum.getOperation();
    mlir::Value g = sum.getDpsInits()[0];
    if (auto def = g.getDefiningOp())
      if (def->getBlock() == block && !def->isBeforeInBlock(place)) return false;
    mlir::OpBuilder b(place);
    mlir::Location loc = gemm.getLoc();
    mlir::Value d = gemm.getOperand(2);
    mlir::Value biasView = b.create<mlir::memref::CastOp>(loc, view(b, 1), g);
    createCall(module, b, gemm, d, biasView, d, kBiasGradOfB | (accumulate != 0 ? kResidual : 0));
    gemm.erase();
    sum.erase();
    fill.erase();
    return true;
  }

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    llvm::SmallVector<mlir::func::CallOp> gemms;
    module.walk([&](mlir::func::CallOp call) {
      if (isCallTo(call, "stepc_matmul_f32")) gemms.push_back(call);
    });
    llvm::SmallVector<mlir::func::CallOp> left;
    for (mlir::func::CallOp gemm : gemms)
      if (!rewrite(module, gemm)) left.push_back(gemm);
    for (mlir::func::CallOp gemm : left) rewriteWeightGradient(module, gemm);
  }
};

}  // namespace

}  // namespace stepc::codegen
