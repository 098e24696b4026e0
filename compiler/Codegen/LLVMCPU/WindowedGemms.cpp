//===- WindowedGemms.cpp - --step-windowed-gemms ---------------------------===//
//
// A convolution over the sequence lowers to K GEMMs over time-shifted row windows
// (StepToLinalg's ConvolutionPatterns): with the padded sequence flattened to rows [B·P, C],
// tap k reads rows [r0 + k, r0 + k + R). Each such GEMM has a C-deep reduction (32 in
// byte_lm_small), so it streams its output through memory K times and runs far below the
// machine's peak. The K windows side by side are one matrix with overlapping rows: row r is
// the K·C elements that start at row r0 + r, a view of strides [C, 1] over the same buffer.
// This pass turns each such run of K calls into one GEMM over that window, a reduction K·C
// deep, with no im2col copy (the runtime packs the overlapping operand a cache-sized panel at a
// time, as a GEMM packs its operands anyway; runtime/hal/cpu/Gemm.cpp):
//
//   y  += Σ_k X[r0+k : r0+k+R] · W[t0+k]   →  y  += Xwin · W[t0 : t0+K] as [K·C, N]
//   dw[t0+k] = X[r0+k : r0+k+R]ᵀ · G        →  dw[t0 : t0+K] as [K·C, N] = Xwinᵀ · G
//
// (the input gradient has the first form: its weight is flipped once before). The first
// call's accumulate flag is kept; the forward form's others must accumulate, the weight
// gradient's must all overwrite. Only pure view ops may sit between the calls.
//
// CPU only: cuBLASLt takes no overlapping leading dimension, so the CUDA step keeps K GEMMs.
// Runs on bufferized host code after --step-contractions-to-library.
//
//===----------------------------------------------------------------------===//
#include <optional>

#include "compiler/Codegen/LLVMCPU/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_WINDOWEDGEMMS
#include "compiler/Codegen/LLVMCPU/Passes.h.inc"

namespace {

using mlir::Value;

Value uncast(Value v) {
  while (auto cast = v.getDefiningOp<mlir::memref::CastOp>()) v = cast.getSource();
  return v;
}

// Static strides and offset of a memref type (offset may be dynamic), or nothing.
std::optional<std::pair<llvm::SmallVector<int64_t>, int64_t>> layout(mlir::MemRefType type) {
  llvm::SmallVector<int64_t> strides;
  int64_t offset;
  if (mlir::failed(mlir::getStridesAndOffset(type, strides, offset))) return std::nullopt;
  if (llvm::any_of(strides, mlir::ShapedType::isDynamic)) return std::nullopt;
  return std::make_pair(strides, offset);
}

bool unitStrides(mlir::memref::SubViewOp view) {
  return llvm::all_of(view.getStaticStrides(), [](int64_t s) { return s == 1; });
}

// Rows [row, row + rows) of a 2-D buffer whose rows are contiguous (strides [cols, 1]), all
// its columns.
struct Window {
  Value base;
  int64_t row, rows, cols;
};
std::optional<Window> windowOf(Value v) {
  auto view = v.getDefiningOp<mlir::memref::SubViewOp>();
  if (!view || view.getSourceType().getRank() != 2 || view.getType().getRank() != 2 ||
      !unitStrides(view) || !view.getSourceType().hasStaticShape())
    return std::nullopt;
  auto offsets = view.getStaticOffsets();
  auto sizes = view.getStaticSizes();
  if (mlir::ShapedType::isDynamic(offsets[0]) || offsets[1] != 0 ||
      mlir::ShapedType::isDynamic(sizes[0]) || sizes[1] != view.getSourceType().getDimSize(1))
    return std::nullopt;
  auto l = layout(view.getSourceType());
  int64_t cols = sizes[1];
  if (!l || l->first[0] != cols || l->first[1] != 1) return std::nullopt;
  return Window{view.getSource(), offsets[0], sizes[0], cols};
}

// Tap `index` of a 3-D buffer [K, rows, cols] whose taps are contiguous matrices, as a 2-D
// view [rows, cols].
struct Tap {
  Value base;
  int64_t index, rows, cols;
};
std::optional<Tap> tapOf(Value v) {
  auto view = v.getDefiningOp<mlir::memref::SubViewOp>();
  if (!view || view.getSourceType().getRank() != 3 || view.getType().getRank() != 2 ||
      !unitStrides(view) || !view.getSourceType().hasStaticShape())
    return std::nullopt;
  auto offsets = view.getStaticOffsets();
  auto sizes = view.getStaticSizes();
  mlir::MemRefType source = view.getSourceType();
  if (mlir::ShapedType::isDynamic(offsets[0]) || offsets[1] != 0 || offsets[2] != 0 ||
      sizes[0] != 1 || sizes[1] != source.getDimSize(1) || sizes[2] != source.getDimSize(2))
    return std::nullopt;
  auto l = layout(source);
  if (!l || l->first[2] != 1 || l->first[1] != sizes[2] || l->first[0] != sizes[1] * sizes[2])
    return std::nullopt;
  return Tap{view.getSource(), offsets[0], sizes[1], sizes[2]};
}

std::optional<int64_t> constantFlag(Value v) {
  llvm::APInt value;
  if (!mlir::matchPattern(v, mlir::m_ConstantInt(&value))) return std::nullopt;
  return value.getSExtValue();
}

// One call C (+)= op(A) · op(B), its views without their casts to the interface's type.
struct Gemm {
  mlir::func::CallOp call;
  Value a, b, c;
  int64_t transA, transB, acc;
};
std::optional<Gemm> gemmOf(mlir::Operation *op) {
  auto call = llvm::dyn_cast<mlir::func::CallOp>(op);
  if (!call || call.getCallee() != "stepc_matmul_f32" || call.getNumOperands() != 6)
    return std::nullopt;
  auto ta = constantFlag(call.getOperand(3)), tb = constantFlag(call.getOperand(4)),
       acc = constantFlag(call.getOperand(5));
  if (!ta || !tb || !acc) return std::nullopt;
  return Gemm{call, uncast(call.getOperand(0)), uncast(call.getOperand(1)),
              uncast(call.getOperand(2)), *ta, *tb, *acc};
}

enum class Form { kForward, kWeightGrad };

// A run of calls that is one windowed GEMM.
struct Run {
  Form form;
  llvm::SmallVector<Gemm> gemms;
  Window window;
  Tap firstTap;
};

// Whether `g` continues `run` as its next tap.
bool continues(const Run &run, const Gemm &g) {
  int64_t i = run.gemms.size();
  const Gemm &first = run.gemms.front();
  auto w = windowOf(g.a);
  if (!w || w->base != run.window.base || w->rows != run.window.rows ||
      w->row != run.window.row + i || g.transA != first.transA || g.transB != first.transB)
    return false;
  if (run.form == Form::kForward) {
    auto t = tapOf(g.b);
    return g.c == first.c && g.acc == 1 && t && t->base == run.firstTap.base &&
           t->index == run.firstTap.index + i;
  }
  auto t = tapOf(g.c);
  return g.b == first.b && g.acc == first.acc && t && t->base == run.firstTap.base &&
         t->index == run.firstTap.index + i;
}

// A run that `g` starts, if it can start one.
std::optional<Run> start(const Gemm &g) {
  auto w = windowOf(g.a);
  if (!w) return std::nullopt;
  if (g.transA == 0 && g.transB == 0) {
    auto t = tapOf(g.b);
    if (t && t->rows == w->cols) return Run{Form::kForward, {g}, *w, *t};
  }
  if (g.transA == 1 && g.transB == 0) {
    auto t = tapOf(g.c);
    if (t && t->rows == w->cols) return Run{Form::kWeightGrad, {g}, *w, *t};
  }
  return std::nullopt;
}

bool isPureView(mlir::Operation *op) {
  return llvm::isa<mlir::memref::SubViewOp, mlir::memref::CastOp, mlir::memref::CollapseShapeOp,
                   mlir::memref::ExpandShapeOp, mlir::memref::ViewOp,
                   mlir::memref::ReinterpretCastOp, mlir::arith::ConstantOp>(op);
}

mlir::MemRefType dynamicView(mlir::MLIRContext *ctx) {
  int64_t dyn = mlir::ShapedType::kDynamic;
  return mlir::MemRefType::get({dyn, dyn}, mlir::Float32Type::get(ctx),
                               mlir::StridedLayoutAttr::get(ctx, dyn, {dyn, dyn}));
}

// The K windows as one [R, K·C] view with strides [C, 1] (rows overlap).
Value windowView(mlir::OpBuilder &b, mlir::Location loc, const Window &w, int64_t taps) {
  auto type = llvm::cast<mlir::MemRefType>(w.base.getType());
  auto l = layout(type);
  mlir::OpFoldResult offset;
  int64_t shift = w.row * w.cols;
  if (!mlir::ShapedType::isDynamic(l->second)) {
    offset = b.getIndexAttr(l->second + shift);
  } else {
    auto meta = b.create<mlir::memref::ExtractStridedMetadataOp>(loc, w.base);
    Value c = b.create<mlir::arith::ConstantIndexOp>(loc, shift);
    offset = b.create<mlir::arith::AddIOp>(loc, meta.getOffset(), c).getResult();
  }
  int64_t dyn = mlir::ShapedType::kDynamic;
  auto result = mlir::MemRefType::get(
      {w.rows, taps * w.cols}, type.getElementType(),
      mlir::StridedLayoutAttr::get(b.getContext(),
                                   llvm::isa<mlir::Attribute>(offset)
                                       ? llvm::cast<mlir::IntegerAttr>(
                                             llvm::cast<mlir::Attribute>(offset))
                                             .getInt()
                                       : dyn,
                                   {w.cols, 1}));
  return b.create<mlir::memref::ReinterpretCastOp>(
      loc, result, w.base, offset,
      llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(w.rows), b.getIndexAttr(taps * w.cols)},
      llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(w.cols), b.getIndexAttr(1)});
}

// Taps [t, t + K) of a [*, rows, cols] buffer as one [K·rows, cols] matrix.
Value tapsView(mlir::OpBuilder &b, mlir::Location loc, const Tap &t, int64_t taps) {
  auto view = b.create<mlir::memref::SubViewOp>(
      loc, t.base,
      llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(t.index), b.getIndexAttr(0),
                                         b.getIndexAttr(0)},
      llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(taps), b.getIndexAttr(t.rows),
                                         b.getIndexAttr(t.cols)},
      llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                                         b.getIndexAttr(1)});
  return b.create<mlir::memref::CollapseShapeOp>(
      loc, view, llvm::SmallVector<mlir::ReassociationIndices>{{0, 1}, {2}});
}

void rewrite(Run &run) {
  Gemm &first = run.gemms.front();
  mlir::func::CallOp last = run.gemms.back().call;
  mlir::OpBuilder b(last);
  mlir::Location loc = first.call.getLoc();
  int64_t taps = run.gemms.size();
  mlir::MemRefType dyn = dynamicView(b.getContext());
  auto cast = [&](Value v) { return b.create<mlir::memref::CastOp>(loc, dyn, v).getResult(); };
  Value a = cast(windowView(b, loc, run.window, taps));
  Value bv, cv;
  if (run.form == Form::kForward) {
    bv = cast(tapsView(b, loc, run.firstTap, taps));
    cv = cast(first.c);
  } else {
    bv = cast(first.b);
    cv = cast(tapsView(b, loc, run.firstTap, taps));
  }
  auto call = b.create<mlir::func::CallOp>(
      loc, first.call.getCallee(), mlir::TypeRange{},
      mlir::ValueRange{a, bv, cv, first.call.getOperand(3), first.call.getOperand(4),
                       first.call.getOperand(5)});
  // Attributes the calls carry (the model op they came from) go with the one call.
  for (mlir::NamedAttribute attr : first.call->getDiscardableAttrs())
    call->setAttr(attr.getName(), attr.getValue());
  for (Gemm &g : run.gemms) g.call.erase();
}

struct WindowedGemmsPass : impl::WindowedGemmsBase<WindowedGemmsPass> {
  void runOnOperation() override {
    llvm::SmallVector<Run> runs;
    getOperation().walk([&](mlir::Block *block) {
      // A std::optional<Run> here trips GCC 12's -Wmaybe-uninitialized.
      Run run{};
      bool open = false;
      auto finish = [&] {
        if (open && run.gemms.size() >= 2) runs.push_back(run);
        open = false;
      };
      for (mlir::Operation &op : *block) {
        if (auto g = gemmOf(&op)) {
          if (open && continues(run, *g)) {
            run.gemms.push_back(*g);
            continue;
          }
          finish();
          if (auto started = start(*g)) {
            run = *started;
            open = true;
          }
          continue;
        }
        if (!isPureView(&op)) finish();
      }
      finish();
    });
    for (Run &run : runs) rewrite(run);
  }
};

}  // namespace

}  // namespace stepc::codegen
