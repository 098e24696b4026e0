//===- ShapeRules.cpp - result-type inference of `step` tensor ops --------===//
//
// One `inferReturnTypes` per tensor op. Each checks what its operands and attributes must
// satisfy and says what it expected and found; these rules are also the ops' verifiers (the
// InferTypeOpInterface verifier compares results with them).
//
//===----------------------------------------------------------------------===//
#include "dialects/step/IR/ShapeRules.h"

#include "dialects/step/IR/StepDialect.h"
#include "dialects/step/IR/StepSpecs.h"
#include "llvm/ADT/STLExtras.h"
#include "mlir/IR/Diagnostics.h"

#include <array>
#include <cmath>

namespace stepc::step {

using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::SmallVectorImpl;
using mlir::failure;
using mlir::Location;
using mlir::LogicalResult;
using mlir::MLIRContext;
using mlir::RankedTensorType;
using mlir::success;
using mlir::Type;
using mlir::Value;
using mlir::Operation;
using mlir::OpResult;

std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (ArrayRef<int64_t> shape : shapes) rank = std::max(rank, shape.size());
  SmallVector<int64_t> out(rank, 1);
  for (ArrayRef<int64_t> shape : shapes) {
    size_t offset = rank - shape.size();
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t &dim = out[offset + i];
      if (shape[i] == dim || shape[i] == 1) continue;
      if (dim != 1) return std::nullopt;
      dim = shape[i];
    }
  }
  return out;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

std::optional<int64_t> checkedNumElements(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim <= 0 || dim > kMaxElements || count > kMaxElements / dim) return std::nullopt;
    count *= dim;
  }
  return count;
}

LogicalResult reinferResultTypes(mlir::Operation *op) {
  auto infer = llvm::dyn_cast<mlir::InferTypeOpInterface>(op);
  if (!infer) return success();
  SmallVector<Type> types;
  if (failed(infer.inferReturnTypes(op->getContext(), op->getLoc(), op->getOperands(),
                                    op->getAttrDictionary(), op->getPropertiesStorage(),
                                    op->getRegions(), types)))
    return failure();
  for (auto [result, type] : llvm::zip(op->getResults(), types)) result.setType(type);
  return success();
}

SmallVector<int64_t> toI64Vector(mlir::ArrayAttr array) {
  SmallVector<int64_t> out;
  for (mlir::Attribute a : array) out.push_back(llvm::cast<mlir::IntegerAttr>(a).getInt());
  return out;
}

namespace {

// Builds an error at `loc` when there is one, else a diagnostic nobody sees (inference called
// from C++ builders without a location just fails).
struct Reporter {
  std::optional<Location> loc;
  mlir::InFlightDiagnostic error() const {
    return loc ? mlir::emitError(*loc) : mlir::InFlightDiagnostic();
  }
  template <typename... Args>
  LogicalResult fail(Args &&...args) const {
    if (loc) (mlir::emitError(*loc) << ... << std::forward<Args>(args));
    return failure();
  }
};

// Attribute checks must run before inference reads attributes: the parser infers types before
// the ODS verifier has looked at the op.
template <typename Adaptor>
LogicalResult checkAttrs(MLIRContext *ctx, const Reporter &r, Adaptor &adaptor) {
  if (r.loc) return adaptor.verify(*r.loc);
  mlir::ScopedDiagnosticHandler silence(ctx, [](mlir::Diagnostic &) { return success(); });
  return adaptor.verify(mlir::UnknownLoc::get(ctx));
}

std::optional<RankedTensorType> ranked(const Reporter &r, mlir::Value v, llvm::StringRef what) {
  auto type = llvm::dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape()) {
    (void)r.fail("expected ", what, " to be a static-shaped ranked tensor, found ", v.getType());
    return std::nullopt;
  }
  return type;
}

LogicalResult sameElement(const Reporter &r, RankedTensorType a, RankedTensorType b,
                          llvm::StringRef what) {
  if (a.getElementType() == b.getElementType()) return success();
  return r.fail("expected ", what, " to have the same element type, found ", a.getElementType(),
                " and ", b.getElementType());
}

std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

LogicalResult inferSame(const Reporter &r, mlir::Value input, SmallVectorImpl<Type> &out) {
  auto type = ranked(r, input, "the operand");
  if (!type) return failure();
  out.push_back(*type);
  return success();
}

LogicalResult inferBroadcast(const Reporter &r, mlir::ValueRange operands, Type elementOverride,
                             SmallVectorImpl<Type> &out) {
  SmallVector<ArrayRef<int64_t>> shapes;
  SmallVector<RankedTensorType> types;
  for (mlir::Value v : operands) {
    auto t = ranked(r, v, "every operand");
    if (!t) return failure();
    types.push_back(*t);
    shapes.push_back(t->getShape());
  }
  std::optional<SmallVector<int64_t>> shape = broadcastShapes(shapes);
  if (!shape) {
    auto diag = r.error();
    diag << "operand shapes do not broadcast:";
    for (ArrayRef<int64_t> s : shapes) diag << " " << shapeString(s);
    diag << " (trailing dimensions must be equal or 1)";
    return failure();
  }
  Type element = elementOverride ? elementOverride : types.back().getElementType();
  out.push_back(RankedTensorType::get(*shape, element));
  return success();
}

template <typename Adaptor>
LogicalResult inferBinary(MLIRContext *ctx, const Reporter &r, Adaptor adaptor,
                          SmallVectorImpl<Type> &out) {
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto lhs = ranked(r, adaptor.getLhs(), "the left operand");
  auto rhs = ranked(r, adaptor.getRhs(), "the right operand");
  if (!lhs || !rhs || failed(sameElement(r, *lhs, *rhs, "both operands"))) return failure();
  return inferBroadcast(r, {adaptor.getLhs(), adaptor.getRhs()}, {}, out);
}

template <typename Adaptor>
LogicalResult inferUnary(MLIRContext *ctx, const Reporter &r, Adaptor adaptor,
                         SmallVectorImpl<Type> &out) {
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  return inferSame(r, adaptor.getInput(), out);
}

template <typename Adaptor>
LogicalResult inferReduce(MLIRContext *ctx, const Reporter &r, Adaptor adaptor,
                          SmallVectorImpl<Type> &out) {
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto input = ranked(r, adaptor.getInput(), "the operand");
  if (!input) return failure();
  int64_t rank = input->getRank();
  SmallVector<bool> reduced(rank, false);
  for (int64_t axis : toI64Vector(adaptor.getAxes())) {
    std::optional<int64_t> a = normalizeAxis(axis, rank);
    if (!a) return r.fail("axis ", axis, " is out of range for a rank-", rank, " operand");
    if (reduced[*a]) return r.fail("axis ", axis, " is listed twice");
    reduced[*a] = true;
  }
  if (adaptor.getAxes().empty()) return r.fail("expected at least one axis to reduce");
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i])
      shape.push_back(input->getDimSize(i));
    else if (adaptor.getKeepdim())
      shape.push_back(1);
  }
  out.push_back(RankedTensorType::get(shape, input->getElementType()));
  return success();
}

// Last-two-dims (rows, cols) of a matmul operand after its optional transpose.
std::pair<int64_t, int64_t> matrixDims(RankedTensorType t, bool transposed) {
  int64_t rows = t.getDimSize(t.getRank() - 2), cols = t.getDimSize(t.getRank() - 1);
  return transposed ? std::make_pair(cols, rows) : std::make_pair(rows, cols);
}

LogicalResult inferAxisOp(const Reporter &r, mlir::Value input, int64_t axis,
                          SmallVectorImpl<Type> &out) {
  auto type = ranked(r, input, "the operand");
  if (!type) return failure();
  if (!normalizeAxis(axis, type->getRank()))
    return r.fail("axis ", axis, " is out of range for a rank-", type->getRank(), " operand");
  out.push_back(*type);
  return success();
}

LogicalResult checkVector(const Reporter &r, mlir::Value v, llvm::StringRef what, int64_t size,
                          RankedTensorType like) {
  auto type = ranked(r, v, what);
  if (!type) return failure();
  if (type->getRank() != 1 || type->getDimSize(0) != size)
    return r.fail("expected ", what, " of shape [", size, "] (the last dimension), found ",
                  shapeString(type->getShape()));
  return sameElement(r, like, *type, ("the input and " + what).str());
}

}  // namespace

#define STEP_INFER(OP)                                                            \
  LogicalResult OP::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc, \
                                     Adaptor adaptor, SmallVectorImpl<Type> &out)

#define STEP_UNARY(OP) \
  STEP_INFER(OP) { return inferUnary(ctx, Reporter{loc}, adaptor, out); }
STEP_UNARY(NegOp)
STEP_UNARY(AbsOp)
STEP_UNARY(ExpOp)
STEP_UNARY(LogOp)
STEP_UNARY(SqrtOp)
STEP_UNARY(RsqrtOp)
STEP_UNARY(TanhOp)
STEP_UNARY(SigmoidOp)
STEP_UNARY(ReluOp)
STEP_UNARY(SiluOp)
STEP_UNARY(ErfOp)
STEP_UNARY(SinOp)
STEP_UNARY(CosOp)
STEP_UNARY(GeluOp)
STEP_UNARY(LeakyReluOp)
STEP_UNARY(PowOp)
STEP_UNARY(QuantizeOp)
STEP_UNARY(DropoutOp)
STEP_UNARY(JitterOp)
STEP_UNARY(AllReduceOp)
STEP_UNARY(AllReduceStartOp)
STEP_UNARY(AllReduceWaitOp)
#undef STEP_UNARY

#define STEP_BINARY(OP) \
  STEP_INFER(OP) { return inferBinary(ctx, Reporter{loc}, adaptor, out); }
STEP_BINARY(AddOp)
STEP_BINARY(SubOp)
STEP_BINARY(MulOp)
STEP_BINARY(DivOp)
STEP_BINARY(MaxOp)
STEP_BINARY(MinOp)
#undef STEP_BINARY

STEP_INFER(CompareOp) {
  Reporter r{loc};
  SmallVector<Type> inferred;
  if (failed(inferBinary(ctx, r, adaptor, inferred))) return failure();
  auto shape = llvm::cast<RankedTensorType>(inferred.front()).getShape();
  out.push_back(RankedTensorType::get(shape, mlir::IntegerType::get(ctx, 1)));
  return success();
}

STEP_INFER(SelectOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto cond = ranked(r, adaptor.getCond(), "the condition");
  auto a = ranked(r, adaptor.getOnTrue(), "the true operand");
  auto b = ranked(r, adaptor.getOnFalse(), "the false operand");
  if (!cond || !a || !b) return failure();
  if (!cond->getElementType().isInteger(1))
    return r.fail("expected an i1 condition, found ", cond->getElementType());
  if (failed(sameElement(r, *a, *b, "both choices"))) return failure();
  return inferBroadcast(r, {adaptor.getCond(), adaptor.getOnTrue(), adaptor.getOnFalse()},
                        a->getElementType(), out);
}

#define STEP_REDUCE(OP) \
  STEP_INFER(OP) { return inferReduce(ctx, Reporter{loc}, adaptor, out); }
STEP_REDUCE(SumOp)
STEP_REDUCE(MeanOp)
STEP_REDUCE(ReduceMaxOp)
#undef STEP_REDUCE

STEP_INFER(MatmulOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto lhs = ranked(r, adaptor.getLhs(), "the left operand");
  auto rhs = ranked(r, adaptor.getRhs(), "the right operand");
  if (!lhs || !rhs || failed(sameElement(r, *lhs, *rhs, "both operands"))) return failure();
  if (lhs->getRank() < 2)
    return r.fail("expected the left operand to have rank >= 2, found rank ", lhs->getRank());
  if (rhs->getRank() != 2)
    return r.fail("expected a rank-2 right operand [K, N], found rank ", rhs->getRank(),
                  " (use step.batch_matmul for batched right operands)");
  if (lhs->getRank() > 2 && adaptor.getTransposeLhs())
    return r.fail("transpose_lhs needs a rank-2 left operand, found rank ", lhs->getRank());
  auto [m, k] = matrixDims(*lhs, adaptor.getTransposeLhs());
  auto [k2, n] = matrixDims(*rhs, adaptor.getTransposeRhs());
  if (k != k2)
    return r.fail("contraction sizes differ: the left operand gives K = ", k,
                  ", the right operand gives K = ", k2);
  SmallVector<int64_t> shape(lhs->getShape().drop_back(2));
  shape.append({m, n});
  out.push_back(RankedTensorType::get(shape, lhs->getElementType()));
  return success();
}

STEP_INFER(BatchMatmulOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto lhs = ranked(r, adaptor.getLhs(), "the left operand");
  auto rhs = ranked(r, adaptor.getRhs(), "the right operand");
  if (!lhs || !rhs || failed(sameElement(r, *lhs, *rhs, "both operands"))) return failure();
  if (lhs->getRank() < 3 || lhs->getRank() != rhs->getRank())
    return r.fail("expected operands of equal rank >= 3, found ranks ", lhs->getRank(), " and ",
                  rhs->getRank());
  auto batchL = lhs->getShape().drop_back(2), batchR = rhs->getShape().drop_back(2);
  if (batchL != batchR)
    return r.fail("batch dimensions differ: ", shapeString(batchL), " and ", shapeString(batchR));
  auto [m, k] = matrixDims(*lhs, adaptor.getTransposeLhs());
  auto [k2, n] = matrixDims(*rhs, adaptor.getTransposeRhs());
  if (k != k2)
    return r.fail("contraction sizes differ: the left operand gives K = ", k,
                  ", the right operand gives K = ", k2);
  SmallVector<int64_t> shape(batchL);
  shape.append({m, n});
  out.push_back(RankedTensorType::get(shape, lhs->getElementType()));
  return success();
}

// The values integer ids can take when the model fixes them, as an exclusive upper bound: a
// token input's vocabulary (tokens and targets), a classification input's class count, an
// iota's extent along its axis. None for ids computed any other way (the compiled code clamps
// those, see StepToLinalg's clampedIndex; the interpreter reports them).
static std::optional<int64_t> idBound(Value ids, std::string &source) {
  Operation *def = ids ? ids.getDefiningOp() : nullptr;
  if (auto input = llvm::dyn_cast_or_null<InputOp>(def)) {
    llvm::StringRef kind = specKind(input.getSource());
    if (kind == "token_stream") {
      source = "token_stream(vocab = " + std::to_string(specInt(input.getSource(), "vocab")) + ")";
      return specInt(input.getSource(), "vocab");
    }
    if (kind == "classification" && llvm::cast<OpResult>(ids).getResultNumber() == 1) {
      source = "classification(classes = " +
               std::to_string(specInt(input.getSource(), "classes")) + ")";
      return specInt(input.getSource(), "classes");
    }
  }
  if (auto iota = llvm::dyn_cast_or_null<IotaOp>(def)) {
    auto type = llvm::dyn_cast<RankedTensorType>(iota.getType());
    std::optional<int64_t> axis = type ? normalizeAxis(iota.getAxis(), type.getRank()) : std::nullopt;
    if (axis && !type.isDynamicDim(*axis)) {
      source = "an iota along an axis of " + std::to_string(type.getDimSize(*axis));
      return type.getDimSize(*axis);
    }
  }
  return std::nullopt;
}

// Ids whose range the model fixes must fit what they index: statically checked, not clamped.
static LogicalResult checkIdRange(const Reporter &r, Value ids, int64_t size, bool targets) {
  std::string source;
  std::optional<int64_t> bound = idBound(ids, source);
  if (!bound || *bound <= size) return success();
  return r.fail(targets ? "the logits have " : "the table has ", size,
                targets ? " classes but the targets come from " : " rows but the ids come from ",
                source, " (values up to ", *bound - 1, "): they would index past it");
}

STEP_INFER(EmbeddingOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto table = ranked(r, adaptor.getTable(), "the table");
  auto ids = ranked(r, adaptor.getIds(), "the ids");
  if (!table || !ids) return failure();
  if (table->getRank() != 2)
    return r.fail("expected a rank-2 table [V, D], found ", shapeString(table->getShape()));
  if (!ids->getElementType().isSignlessInteger(32) && !ids->getElementType().isSignlessInteger(64))
    return r.fail("expected i32 or i64 ids, found ", ids->getElementType());
  if (!table->isDynamicDim(0) &&
      failed(checkIdRange(r, adaptor.getIds(), table->getDimSize(0), /*targets=*/false)))
    return failure();
  SmallVector<int64_t> shape(ids->getShape());
  shape.push_back(table->getDimSize(1));
  out.push_back(RankedTensorType::get(shape, table->getElementType()));
  return success();
}

STEP_INFER(Conv1dOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto input = ranked(r, adaptor.getInput(), "the input");
  auto weight = ranked(r, adaptor.getWeight(), "the weight");
  if (!input || !weight || failed(sameElement(r, *input, *weight, "input and weight")))
    return failure();
  if (input->getRank() != 3)
    return r.fail("expected a rank-3 input [B, S, Cin], found ", shapeString(input->getShape()));
  if (weight->getRank() != 3)
    return r.fail("expected a rank-3 weight [K, Cin/groups, Cout], found ",
                  shapeString(weight->getShape()));
  int64_t groups = adaptor.getGroups(), seq = input->getDimSize(1), cin = input->getDimSize(2);
  int64_t k = weight->getDimSize(0), cout = weight->getDimSize(2);
  if (cin % groups || cout % groups)
    return r.fail("groups = ", groups, " must divide both Cin = ", cin, " and Cout = ", cout);
  if (weight->getDimSize(1) != cin / groups)
    return r.fail("expected weight dimension 1 to be Cin/groups = ", cin / groups, ", found ",
                  weight->getDimSize(1));
  int64_t outSeq = adaptor.getPadding() == "causal" ? seq : seq - k + 1;
  if (outSeq < 1)
    return r.fail("kernel size ", k, " exceeds the sequence length ", seq, " with valid padding");
  out.push_back(RankedTensorType::get({input->getDimSize(0), outSeq, cout},
                                      input->getElementType()));
  return success();
}

STEP_INFER(EmbeddingGradOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto grad = ranked(r, adaptor.getGrad(), "the gradient");
  auto ids = ranked(r, adaptor.getIds(), "the ids");
  if (!grad || !ids) return failure();
  if (grad->getRank() != ids->getRank() + 1 ||
      grad->getShape().drop_back() != ids->getShape())
    return r.fail("expected a gradient of shape ids + [D], found ", shapeString(grad->getShape()),
                  " for ids ", shapeString(ids->getShape()));
  out.push_back(RankedTensorType::get({adaptor.getVocab(), grad->getShape().back()},
                                      grad->getElementType()));
  return success();
}

// step.rank_shard, step.reduce_scatter_wait and step.all_gather: the first axis divided by /
// multiplied by `parts`.
template <typename Adaptor>
static LogicalResult inferRankBlock(MLIRContext *ctx, const Reporter &r, Adaptor adaptor,
                                    SmallVectorImpl<Type> &out) {
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto in = ranked(r, adaptor.getInput(), "the input");
  if (!in) return failure();
  int64_t parts = adaptor.getParts();
  if (in->getRank() == 0 || in->getDimSize(0) % parts != 0)
    return r.fail("expected a first axis that parts = ", parts, " divides, found shape ",
                  shapeString(in->getShape()));
  SmallVector<int64_t> shape(in->getShape());
  shape[0] /= parts;
  out.push_back(RankedTensorType::get(shape, in->getElementType()));
  return success();
}
STEP_INFER(RankShardOp) { return inferRankBlock(ctx, Reporter{loc}, adaptor, out); }
STEP_INFER(ReduceScatterWaitOp) { return inferRankBlock(ctx, Reporter{loc}, adaptor, out); }

// step.reduce_scatter_start: the input's type; `owners` is 1 along every axis but the first,
// which is the input's or 1.
STEP_INFER(ReduceScatterStartOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto in = ranked(r, adaptor.getInput(), "the input");
  auto owners = ranked(r, adaptor.getOwners(), "the owners");
  if (!in || !owners) return failure();
  bool ok = owners->getRank() == in->getRank();
  for (int64_t d = 0; ok && d < owners->getRank(); ++d)
    ok = owners->getDimSize(d) == 1 || (d == 0 && owners->getDimSize(0) == in->getDimSize(0));
  if (!ok)
    return r.fail("expected owners of the input's rank, 1 along every axis but the first and "
                  "along the first 1 or the input's ",
                  in->getRank() ? in->getDimSize(0) : 1, ", found shape ",
                  shapeString(owners->getShape()), " for input ", shapeString(in->getShape()));
  int64_t parts = adaptor.getParts();
  if (owners->getRank() > 0 && owners->getDimSize(0) > 1 && in->getDimSize(0) % parts != 0)
    return r.fail("expected a first axis that parts = ", parts, " divides, found shape ",
                  shapeString(in->getShape()));
  out.push_back(*in);
  return success();
}

// step.last_micro_batch: the first axis (the micro-batches) dropped.
STEP_INFER(LastMicroBatchOp) {
  Reporter r{loc};
  auto in = ranked(r, adaptor.getInput(), "the input");
  if (!in) return failure();
  if (in->getRank() == 0 || in->getDimSize(0) < 1)
    return r.fail("expected a first axis of micro-batches, found shape ",
                  shapeString(in->getShape()));
  out.push_back(RankedTensorType::get(in->getShape().drop_front(), in->getElementType()));
  return success();
}

STEP_INFER(AllGatherOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto in = ranked(r, adaptor.getInput(), "the input");
  if (!in) return failure();
  if (in->getRank() == 0)
    return r.fail("expected a tensor with a first axis to gather along, found a scalar");
  SmallVector<int64_t> shape(in->getShape());
  shape[0] *= adaptor.getParts();
  if (!checkedNumElements(shape))
    return r.fail("the gathered shape ", shapeString(shape), " is too large");
  out.push_back(RankedTensorType::get(shape, in->getElementType()));
  return success();
}

// Checks the shared facts of the conv1d gradient ops; returns (K, Cin, Cout).
static std::optional<std::array<int64_t, 3>> convGradDims(const Reporter &r, RankedTensorType x,
                                                          RankedTensorType g, int64_t k,
                                                          int64_t cinPerGroup, int64_t groups,
                                                          llvm::StringRef padding) {
  if (x.getRank() != 3 || g.getRank() != 3) {
    (void)r.fail("expected rank-3 [B, S, C] input and gradient");
    return std::nullopt;
  }
  int64_t outSeq = padding == "causal" ? x.getDimSize(1) : x.getDimSize(1) - k + 1;
  if (g.getDimSize(0) != x.getDimSize(0) || g.getDimSize(1) != outSeq) {
    (void)r.fail("expected a gradient of shape [", x.getDimSize(0), ", ", outSeq, ", Cout], found ",
           shapeString(g.getShape()));
    return std::nullopt;
  }
  int64_t cin = x.getDimSize(2), cout = g.getDimSize(2);
  if (cin % groups || cout % groups || cin / groups != cinPerGroup) {
    (void)r.fail("channels do not match groups = ", groups, ": Cin = ", cin, ", Cout = ", cout);
    return std::nullopt;
  }
  return std::array<int64_t, 3>{k, cin, cout};
}

STEP_INFER(Conv1dGradInputOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto g = ranked(r, adaptor.getGrad(), "the gradient");
  auto w = ranked(r, adaptor.getWeight(), "the weight");
  if (!g || !w || failed(sameElement(r, *g, *w, "gradient and weight"))) return failure();
  if (g->getRank() != 3 || w->getRank() != 3)
    return r.fail("expected a rank-3 gradient [B, S', Cout] and weight [K, Cin/groups, Cout]");
  if (w->getDimSize(2) != g->getDimSize(2))
    return r.fail("the weight has ", w->getDimSize(2), " output channels, the gradient ",
                  g->getDimSize(2));
  if (g->getDimSize(2) % adaptor.getGroups())
    return r.fail("groups = ", adaptor.getGroups(), " must divide Cout = ", g->getDimSize(2));
  int64_t k = w->getDimSize(0);
  int64_t seq = adaptor.getPadding() == "causal" ? g->getDimSize(1) : g->getDimSize(1) + k - 1;
  out.push_back(RankedTensorType::get(
      {g->getDimSize(0), seq, w->getDimSize(1) * adaptor.getGroups()}, g->getElementType()));
  return success();
}

STEP_INFER(Conv1dGradWeightOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto x = ranked(r, adaptor.getInput(), "the input");
  auto g = ranked(r, adaptor.getGrad(), "the gradient");
  if (!x || !g || failed(sameElement(r, *x, *g, "input and gradient"))) return failure();
  int64_t groups = adaptor.getGroups();
  if (x->getRank() != 3) return r.fail("expected a rank-3 input [B, S, Cin]");
  auto dims = convGradDims(r, *x, *g, adaptor.getKernel(), x->getDimSize(2) / groups, groups,
                           adaptor.getPadding());
  if (!dims) return failure();
  out.push_back(RankedTensorType::get({(*dims)[0], (*dims)[1] / groups, (*dims)[2]},
                                      x->getElementType()));
  return success();
}

STEP_INFER(CumsumOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  return inferAxisOp(r, adaptor.getInput(), adaptor.getAxis(), out);
}

STEP_INFER(SoftmaxOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  return inferAxisOp(r, adaptor.getInput(), adaptor.getAxis(), out);
}

STEP_INFER(LogSoftmaxOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  return inferAxisOp(r, adaptor.getInput(), adaptor.getAxis(), out);
}

STEP_INFER(LayerNormOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto input = ranked(r, adaptor.getInput(), "the input");
  if (!input) return failure();
  if (input->getRank() < 1) return r.fail("expected an input of rank >= 1, found a scalar");
  int64_t c = input->getShape().back();
  if (failed(checkVector(r, adaptor.getGamma(), "gamma", c, *input)) ||
      failed(checkVector(r, adaptor.getBeta(), "beta", c, *input)))
    return failure();
  out.push_back(*input);
  return success();
}

STEP_INFER(RmsNormOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto input = ranked(r, adaptor.getInput(), "the input");
  if (!input) return failure();
  if (input->getRank() < 1) return r.fail("expected an input of rank >= 1, found a scalar");
  if (failed(checkVector(r, adaptor.getGamma(), "gamma", input->getShape().back(), *input)))
    return failure();
  out.push_back(*input);
  return success();
}

STEP_INFER(CrossEntropyOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto logits = ranked(r, adaptor.getLogits(), "the logits");
  auto targets = ranked(r, adaptor.getTargets(), "the targets");
  if (!logits || !targets) return failure();
  if (logits->getRank() < 1) return r.fail("expected logits [..., V], found a scalar");
  if (!targets->getElementType().isSignlessInteger(32) &&
      !targets->getElementType().isSignlessInteger(64))
    return r.fail("expected i32 or i64 targets, found ", targets->getElementType());
  if (targets->getShape() != logits->getShape().drop_back())
    return r.fail("expected targets of shape ", shapeString(logits->getShape().drop_back()),
                  " (the logits without the class dimension), found ",
                  shapeString(targets->getShape()));
  if (!logits->isDynamicDim(logits->getRank() - 1) &&
      failed(checkIdRange(r, adaptor.getTargets(), logits->getShape().back(), /*targets=*/true)))
    return failure();
  if (adaptor.getReduction() == "none")
    out.push_back(RankedTensorType::get(targets->getShape(), logits->getElementType()));
  else
    out.push_back(RankedTensorType::get({}, logits->getElementType()));
  return success();
}

STEP_INFER(ReshapeOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto input = ranked(r, adaptor.getInput(), "the operand");
  if (!input) return failure();
  SmallVector<int64_t> shape = toI64Vector(adaptor.getShape());
  int64_t known = 1, inferredAt = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) {
      if (static_cast<int64_t>(i) >= input->getRank())
        return r.fail("shape entry ", i, " is 0 (copy the operand's size) but the operand has rank ",
                      input->getRank());
      shape[i] = input->getDimSize(i);
    }
    if (shape[i] == -1) {
      if (inferredAt >= 0) return r.fail("at most one dimension of the shape may be -1");
      inferredAt = i;
    } else if (shape[i] <= 0) {
      return r.fail("expected positive sizes (or one -1, or 0 to copy), found ", shape[i]);
    } else {
      known *= shape[i];
    }
  }
  int64_t total = input->getNumElements();
  if (inferredAt >= 0) {
    if (total % known) return r.fail("cannot infer -1: ", total, " elements are not divisible by ", known);
    shape[inferredAt] = total / known;
  } else if (known != total) {
    return r.fail("reshape must keep the element count: the operand has ", total,
                  " elements, the shape ", shapeString(shape), " has ", known);
  }
  out.push_back(RankedTensorType::get(shape, input->getElementType()));
  return success();
}

STEP_INFER(TransposeOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto input = ranked(r, adaptor.getInput(), "the operand");
  if (!input) return failure();
  SmallVector<int64_t> perm = toI64Vector(adaptor.getPerm());
  int64_t rank = input->getRank();
  SmallVector<bool> seen(rank, false);
  if (static_cast<int64_t>(perm.size()) != rank)
    return r.fail("expected a permutation of ", rank, " axes, found ", perm.size());
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return r.fail("perm ", shapeString(perm), " is not a permutation of 0..", rank - 1);
    seen[p] = true;
    shape.push_back(input->getDimSize(p));
  }
  out.push_back(RankedTensorType::get(shape, input->getElementType()));
  return success();
}

STEP_INFER(BroadcastOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto input = ranked(r, adaptor.getInput(), "the operand");
  if (!input) return failure();
  SmallVector<int64_t> shape = toI64Vector(adaptor.getShape());
  if (!checkedNumElements(shape))
    return r.fail("expected positive sizes with at most 2^48 elements in all, found ",
                  shapeString(shape));
  std::optional<SmallVector<int64_t>> b = broadcastShapes({input->getShape(), shape});
  if (!b || *b != shape)
    return r.fail("cannot broadcast ", shapeString(input->getShape()), " to ", shapeString(shape));
  out.push_back(RankedTensorType::get(shape, input->getElementType()));
  return success();
}

STEP_INFER(SliceOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto input = ranked(r, adaptor.getInput(), "the operand");
  if (!input) return failure();
  int64_t rank = input->getRank();
  SmallVector<int64_t> start = toI64Vector(adaptor.getStart());
  SmallVector<int64_t> limit = toI64Vector(adaptor.getLimit());
  SmallVector<int64_t> strides =
      adaptor.getStrides() ? toI64Vector(*adaptor.getStrides()) : SmallVector<int64_t>(rank, 1);
  if (static_cast<int64_t>(start.size()) != rank || static_cast<int64_t>(limit.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank)
    return r.fail("expected start, limit and strides of length ", rank, " (the operand's rank)");
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (start[i] < 0 || start[i] >= limit[i] || limit[i] > input->getDimSize(i))
      return r.fail("dimension ", i, ": expected 0 <= start < limit <= ", input->getDimSize(i),
                    ", found start = ", start[i], ", limit = ", limit[i]);
    if (strides[i] < 1) return r.fail("dimension ", i, ": expected a stride >= 1, found ", strides[i]);
    shape.push_back((limit[i] - start[i] + strides[i] - 1) / strides[i]);
  }
  out.push_back(RankedTensorType::get(shape, input->getElementType()));
  return success();
}

STEP_INFER(SplitOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto input = ranked(r, adaptor.getInput(), "the operand");
  if (!input) return failure();
  std::optional<int64_t> axis = normalizeAxis(adaptor.getAxis(), input->getRank());
  if (!axis)
    return r.fail("axis ", adaptor.getAxis(), " is out of range for a rank-", input->getRank(),
                  " operand");
  int64_t parts = adaptor.getParts(), size = input->getDimSize(*axis);
  if (size % parts)
    return r.fail("cannot split dimension ", *axis, " of size ", size, " into ", parts,
                  " equal parts");
  SmallVector<int64_t> shape(input->getShape());
  shape[*axis] = size / parts;
  out.append(parts, RankedTensorType::get(shape, input->getElementType()));
  return success();
}

STEP_INFER(ConcatOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  if (adaptor.getInputs().empty()) return r.fail("expected at least one operand");
  auto first = ranked(r, adaptor.getInputs().front(), "every operand");
  if (!first) return failure();
  std::optional<int64_t> axis = normalizeAxis(adaptor.getAxis(), first->getRank());
  if (!axis)
    return r.fail("axis ", adaptor.getAxis(), " is out of range for rank-", first->getRank(),
                  " operands");
  SmallVector<int64_t> shape(first->getShape());
  for (mlir::Value v : adaptor.getInputs().drop_front()) {
    auto t = ranked(r, v, "every operand");
    if (!t || failed(sameElement(r, *first, *t, "all operands"))) return failure();
    if (t->getRank() != first->getRank())
      return r.fail("expected operands of equal rank, found ", first->getRank(), " and ",
                    t->getRank());
    for (int64_t i = 0; i < t->getRank(); ++i)
      if (i != *axis && t->getDimSize(i) != shape[i])
        return r.fail("operands differ in dimension ", i, " (not the concat axis): ", shape[i],
                      " and ", t->getDimSize(i));
    shape[*axis] += t->getDimSize(*axis);
  }
  out.push_back(RankedTensorType::get(shape, first->getElementType()));
  return success();
}

STEP_INFER(PadOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto input = ranked(r, adaptor.getInput(), "the operand");
  if (!input) return failure();
  SmallVector<int64_t> low = toI64Vector(adaptor.getLow()), high = toI64Vector(adaptor.getHigh());
  if (static_cast<int64_t>(low.size()) != input->getRank() || low.size() != high.size())
    return r.fail("expected low and high of length ", input->getRank(), " (the operand's rank)");
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < input->getRank(); ++i) {
    if (low[i] < 0 || high[i] < 0)
      return r.fail("dimension ", i, ": expected non-negative padding, found low = ", low[i],
                    ", high = ", high[i]);
    shape.push_back(input->getDimSize(i) + low[i] + high[i]);
  }
  out.push_back(RankedTensorType::get(shape, input->getElementType()));
  return success();
}

STEP_INFER(CastOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto input = ranked(r, adaptor.getInput(), "the operand");
  if (!input) return failure();
  out.push_back(RankedTensorType::get(input->getShape(), adaptor.getTo()));
  return success();
}

STEP_INFER(ExactScaleOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto input = ranked(r, adaptor.getInput(), "the operand");
  auto buffer = ranked(r, adaptor.getBuffer(), "the buffer");
  if (!input || !buffer) return failure();
  if (input->getShape() != buffer->getShape())
    return r.fail("expected the buffer to have the operand's shape ", shapeString(input->getShape()),
                  ", found ", shapeString(buffer->getShape()));
  out.push_back(*input);
  out.push_back(*buffer);
  return success();
}

STEP_INFER(ConstantOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto type = llvm::dyn_cast<RankedTensorType>(adaptor.getValue().getType());
  if (!type || !type.hasStaticShape())
    return r.fail("expected a static-shaped tensor value, found ", adaptor.getValue().getType());
  out.push_back(type);
  return success();
}

STEP_INFER(IotaOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  if (static_cast<bool>(adaptor.getLike()) == static_cast<bool>(adaptor.getShape()))
    return r.fail("expected either a shape attribute or a tensor operand to take the shape of");
  SmallVector<int64_t> shape;
  if (adaptor.getLike()) {
    auto like = ranked(r, adaptor.getLike(), "the operand");
    if (!like) return failure();
    shape.assign(like->getShape().begin(), like->getShape().end());
  } else {
    shape = toI64Vector(*adaptor.getShape());
  }
  if (!checkedNumElements(shape))
    return r.fail("expected positive sizes with at most 2^48 elements in all, found ",
                  shapeString(shape));
  if (!normalizeAxis(adaptor.getAxis(), shape.size()))
    return r.fail("axis ", adaptor.getAxis(), " is out of range for shape ", shapeString(shape));
  out.push_back(RankedTensorType::get(shape, adaptor.getDtype()));
  return success();
}

//===----------------------------------------------------------------------===//
// Routing
//===----------------------------------------------------------------------===//

STEP_INFER(TopKOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto input = ranked(r, adaptor.getInput(), "the operand");
  if (!input) return failure();
  if (input->getRank() == 0) return r.fail("expected an operand of rank ≥ 1, found a scalar");
  int64_t n = input->getShape().back(), k = adaptor.getK();
  if (k > n) return r.fail("k = ", k, " exceeds the last dimension's size ", n);
  SmallVector<int64_t> shape(input->getShape());
  shape.back() = k;
  out.push_back(RankedTensorType::get(shape, input->getElementType()));
  out.push_back(RankedTensorType::get(shape, mlir::IntegerType::get(ctx, 32)));
  return success();
}

namespace {

// C = ⌈capacity_factor · T · k / E⌉, at most T (an expert takes a token once).
std::optional<int64_t> routeCapacity(const Reporter &r, double factor, int64_t tokens, int64_t k,
                                     int64_t experts) {
  if (!(factor > 0.0) || factor > 1.0e6) {
    (void)r.fail("expected a capacity_factor in (0, 1e6], found ", factor);
    return std::nullopt;
  }
  double c = std::ceil(factor * static_cast<double>(tokens) * static_cast<double>(k) /
                       static_cast<double>(experts));
  return std::max<int64_t>(1, std::min<int64_t>(tokens, static_cast<int64_t>(c)));
}

void pushRoutes(MLIRContext *ctx, int64_t experts, int64_t capacity, int64_t tokens, int64_t k,
                SmallVectorImpl<Type> &out) {
  auto i32 = mlir::IntegerType::get(ctx, 32);
  out.push_back(RankedTensorType::get({experts, capacity}, i32));
  out.push_back(RankedTensorType::get({tokens, k}, i32));
}

}  // namespace

STEP_INFER(RouteTokensOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto experts = ranked(r, adaptor.getExperts(), "the experts");
  if (!experts) return failure();
  if (experts->getRank() != 2)
    return r.fail("expected experts of shape [T, k], found ", shapeString(experts->getShape()));
  int64_t t = experts->getDimSize(0), k = experts->getDimSize(1), e = adaptor.getNumExperts();
  if (k > e) return r.fail("each token chooses k = ", k, " experts but there are only ", e);
  std::optional<int64_t> c = routeCapacity(r, adaptor.getCapacityFactor().convertToDouble(), t, k, e);
  if (!c) return failure();
  pushRoutes(ctx, e, *c, t, k, out);
  return success();
}

STEP_INFER(RouteExpertsOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto scores = ranked(r, adaptor.getScores(), "the scores");
  if (!scores) return failure();
  if (scores->getRank() != 2)
    return r.fail("expected scores of shape [T, E], found ", shapeString(scores->getShape()));
  int64_t t = scores->getDimSize(0), e = scores->getDimSize(1), k = adaptor.getK();
  if (k > e) return r.fail("each token takes k = ", k, " experts but there are only ", e);
  std::optional<int64_t> c = routeCapacity(r, adaptor.getCapacityFactor().convertToDouble(), t, k, e);
  if (!c) return failure();
  pushRoutes(ctx, e, *c, t, k, out);
  out.push_back(RankedTensorType::get({t, k}, mlir::IntegerType::get(ctx, 32)));
  return success();
}

STEP_INFER(GatherRowsOp) {
  Reporter r{loc};
  if (failed(checkAttrs(ctx, r, adaptor))) return failure();
  auto source = ranked(r, adaptor.getSource(), "the source");
  auto ids = ranked(r, adaptor.getIds(), "the ids");
  auto inverse = ranked(r, adaptor.getInverse(), "the inverse");
  if (!source || !ids || !inverse) return failure();
  if (source->getRank() != 2)
    return r.fail("expected a rank-2 source [N, D], found ", shapeString(source->getShape()));
  int64_t virtualRows = source->getDimSize(0) * adaptor.getGroup();
  if (inverse->getNumElements() != virtualRows)
    return r.fail("expected an inverse of N · group = ", source->getDimSize(0), " · ",
                  adaptor.getGroup(), " = ", virtualRows, " elements, found ",
                  shapeString(inverse->getShape()));
  SmallVector<int64_t> shape(ids->getShape());
  shape.push_back(source->getDimSize(1));
  out.push_back(RankedTensorType::get(shape, source->getElementType()));
  return success();
}

}  // namespace stepc::step
