//===- ElementwisePatterns.cpp - elementwise step ops → linalg.generic ---===//
//
// Unary ops, broadcasting binary ops, compare, select and cast become one all-parallel
// linalg.generic each (operands read through broadcasting indexing maps); constants become
// arith.constant. Semantics follow the reference interpreter (compiler/Interpreter/
// ElementwiseOps.cpp): float max/min propagate NaN, integer division truncates toward zero.
//
//===----------------------------------------------------------------------===//
#include <cmath>

#include "compiler/Conversion/StepToLinalg/LoweringUtils.h"
#include "compiler/Conversion/StepToLinalg/Patterns.h"
#include "dialects/step/IR/StepDialect.h"
#include "llvm/ADT/TypeSwitch.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace stepc::lowering {
namespace {

using mlir::Location;
using mlir::OpBuilder;
using mlir::Value;

Value fconst(OpBuilder &b, Location loc, mlir::Type type, double v) {
  return scalarConstant(b, loc, type, v);
}

Value sigmoid(OpBuilder &b, Location loc, Value x) {
  mlir::Type t = x.getType();
  Value negated = b.create<mlir::arith::NegFOp>(loc, x);
  Value e = b.create<mlir::math::ExpOp>(loc, negated);
  Value denom = b.create<mlir::arith::AddFOp>(loc, fconst(b, loc, t, 1.0), e);
  return b.create<mlir::arith::DivFOp>(loc, fconst(b, loc, t, 1.0), denom);
}

Value gelu(OpBuilder &b, Location loc, Value x, llvm::StringRef approximate) {
  mlir::Type t = x.getType();
  Value inner;
  if (approximate == "erf") {
    Value scaled = b.create<mlir::arith::MulFOp>(loc, x, fconst(b, loc, t, M_SQRT1_2));
    inner = b.create<mlir::math::ErfOp>(loc, scaled);
  } else {
    Value x3 = b.create<mlir::arith::MulFOp>(loc, b.create<mlir::arith::MulFOp>(loc, x, x), x);
    Value sum = b.create<mlir::arith::AddFOp>(
        loc, x, b.create<mlir::arith::MulFOp>(loc, fconst(b, loc, t, 0.044715), x3));
    Value arg = b.create<mlir::arith::MulFOp>(loc, fconst(b, loc, t, std::sqrt(2.0 / M_PI)), sum);
    inner = b.create<mlir::math::TanhOp>(loc, arg);
  }
  Value onePlus = b.create<mlir::arith::AddFOp>(loc, fconst(b, loc, t, 1.0), inner);
  Value half = b.create<mlir::arith::MulFOp>(loc, fconst(b, loc, t, 0.5), x);
  return b.create<mlir::arith::MulFOp>(loc, half, onePlus);
}

// The scalar computation of a float unary op on `x` (already in the compute type).
Value floatUnary(mlir::Operation *op, OpBuilder &b, Location loc, Value x) {
  mlir::Type t = x.getType();
  return llvm::TypeSwitch<mlir::Operation *, Value>(op)
      .Case<step::NegOp>([&](auto) { return b.create<mlir::arith::NegFOp>(loc, x); })
      .Case<step::AbsOp>([&](auto) { return b.create<mlir::math::AbsFOp>(loc, x); })
      .Case<step::ExpOp>([&](auto) { return b.create<mlir::math::ExpOp>(loc, x); })
      .Case<step::LogOp>([&](auto) { return b.create<mlir::math::LogOp>(loc, x); })
      .Case<step::SqrtOp>([&](auto) { return b.create<mlir::math::SqrtOp>(loc, x); })
      .Case<step::RsqrtOp>([&](auto) { return b.create<mlir::math::RsqrtOp>(loc, x); })
      .Case<step::TanhOp>([&](auto) { return b.create<mlir::math::TanhOp>(loc, x); })
      .Case<step::ErfOp>([&](auto) { return b.create<mlir::math::ErfOp>(loc, x); })
      .Case<step::SinOp>([&](auto) { return b.create<mlir::math::SinOp>(loc, x); })
      .Case<step::CosOp>([&](auto) { return b.create<mlir::math::CosOp>(loc, x); })
      .Case<step::SigmoidOp>([&](auto) { return sigmoid(b, loc, x); })
      .Case<step::ReluOp>([&](auto) {
        // max(x, 0) that keeps a NaN.
        return b.create<mlir::arith::MaximumFOp>(loc, x, fconst(b, loc, t, 0.0));
      })
      .Case<step::SiluOp>(
          [&](auto) { return b.create<mlir::arith::MulFOp>(loc, x, sigmoid(b, loc, x)); })
      .Case<step::GeluOp>([&](step::GeluOp g) { return gelu(b, loc, x, g.getApproximate()); })
      .Case<step::LeakyReluOp>([&](step::LeakyReluOp l) {
        Value scaled = b.create<mlir::arith::MulFOp>(
            loc, x, fconst(b, loc, t, l.getAlpha().convertToDouble()));
        Value positive = b.create<mlir::arith::CmpFOp>(loc, mlir::arith::CmpFPredicate::OGT, x,
                                                       fconst(b, loc, t, 0.0));
        return b.create<mlir::arith::SelectOp>(loc, positive, x, scaled);
      })
      .Case<step::PowOp>([&](step::PowOp p) -> Value {
        double e = p.getExponent().convertToDouble();
        if (e == 1.0) return x;
        // Small integer exponents (TripleNorm's cube) are multiplications: exact for every
        // sign of x and far cheaper than a powf call per element.
        if (e == std::floor(e) && std::fabs(e) >= 2.0 && std::fabs(e) <= 4.0) {
          Value r = x;
          for (int i = 1; i < static_cast<int>(std::fabs(e)); ++i)
            r = b.create<mlir::arith::MulFOp>(loc, r, x);
          return e > 0 ? r : b.create<mlir::arith::DivFOp>(loc, fconst(b, loc, t, 1.0), r);
        }
        return b.create<mlir::math::PowFOp>(loc, x, fconst(b, loc, t, e));
      })
      .Case<step::QuantizeOp>([&](step::QuantizeOp q) -> Value {
        // Scaling by powers of two is exact: only the rounding to an integer changes x. Ties
        // round up, floor(x + 1/2) (exact below 2^52): math.floor lowers on every target,
        // math.roundeven not on NVVM.
        int bits = static_cast<int>(q.getBits());
        Value scaled = b.create<mlir::arith::MulFOp>(loc, x, fconst(b, loc, t, std::ldexp(1.0, bits)));
        Value rounded = b.create<mlir::math::FloorOp>(
            loc, b.create<mlir::arith::AddFOp>(loc, scaled, fconst(b, loc, t, 0.5)));
        return b.create<mlir::arith::MulFOp>(loc, rounded, fconst(b, loc, t, std::ldexp(1.0, -bits)));
      })
      .Default([](mlir::Operation *) { return Value(); });
}

template <typename OpTy>
struct UnaryLowering : mlir::OpRewritePattern<OpTy> {
  using mlir::OpRewritePattern<OpTy>::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(OpTy op, mlir::PatternRewriter &rw) const override {
    auto type = llvm::cast<mlir::RankedTensorType>(op.getType());
    mlir::Type element = type.getElementType();
    Value result = elementwise(rw, op.getLoc(), type, op->getOperands(),
        [&](OpBuilder &b, Location loc, mlir::ValueRange args) -> Value {
          Value x = args[0];
          if (!isFloat(element)) {
            // neg and abs are the only unary ops on integers.
            if (llvm::isa<step::AbsOp>(op.getOperation()))
              return b.create<mlir::math::AbsIOp>(loc, x);
            return b.create<mlir::arith::SubIOp>(loc, scalarConstant(b, loc, element, 0), x);
          }
          // bf16 and f16 compute in f32 and round once.
          bool widen = element.getIntOrFloatBitWidth() < 32;
          if (widen) x = b.create<mlir::arith::ExtFOp>(loc, b.getF32Type(), x);
          Value r = floatUnary(op.getOperation(), b, loc, x);
          if (widen) r = b.create<mlir::arith::TruncFOp>(loc, element, r);
          return r;
        });
    rw.replaceOp(op, result);
    return mlir::success();
  }
};

// The scalar computation of a binary op (float or signed integer).
Value binaryScalar(mlir::Operation *op, OpBuilder &b, Location loc, Value x, Value y) {
  namespace ar = mlir::arith;
  bool f = isFloat(x.getType());
  return llvm::TypeSwitch<mlir::Operation *, Value>(op)
      .Case<step::AddOp>([&](auto) -> Value {
        return f ? Value(b.create<ar::AddFOp>(loc, x, y)) : Value(b.create<ar::AddIOp>(loc, x, y));
      })
      .Case<step::SubOp>([&](auto) -> Value {
        return f ? Value(b.create<ar::SubFOp>(loc, x, y)) : Value(b.create<ar::SubIOp>(loc, x, y));
      })
      .Case<step::MulOp>([&](auto) -> Value {
        return f ? Value(b.create<ar::MulFOp>(loc, x, y)) : Value(b.create<ar::MulIOp>(loc, x, y));
      })
      .Case<step::DivOp>([&](auto) -> Value {
        return f ? Value(b.create<ar::DivFOp>(loc, x, y)) : Value(b.create<ar::DivSIOp>(loc, x, y));
      })
      .Case<step::MaxOp>([&](auto) -> Value {
        return f ? Value(b.create<ar::MaximumFOp>(loc, x, y))
                 : Value(b.create<ar::MaxSIOp>(loc, x, y));
      })
      .Case<step::MinOp>([&](auto) -> Value {
        return f ? Value(b.create<ar::MinimumFOp>(loc, x, y))
                 : Value(b.create<ar::MinSIOp>(loc, x, y));
      })
      .Default([](mlir::Operation *) { return Value(); });
}

template <typename OpTy>
struct BinaryLowering : mlir::OpRewritePattern<OpTy> {
  using mlir::OpRewritePattern<OpTy>::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(OpTy op, mlir::PatternRewriter &rw) const override {
    auto type = llvm::cast<mlir::RankedTensorType>(op.getType());
    Value result = elementwise(rw, op.getLoc(), type, op->getOperands(),
        [&](OpBuilder &b, Location loc, mlir::ValueRange args) {
          return binaryScalar(op.getOperation(), b, loc, args[0], args[1]);
        });
    rw.replaceOp(op, result);
    return mlir::success();
  }
};

struct CompareLowering : mlir::OpRewritePattern<step::CompareOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::CompareOp op,
                                      mlir::PatternRewriter &rw) const override {
    llvm::StringRef p = op.getPredicate();
    namespace ar = mlir::arith;
    Value result = elementwise(rw, op.getLoc(), op.getType(), op->getOperands(),
        [&](OpBuilder &b, Location loc, mlir::ValueRange args) -> Value {
          if (isFloat(args[0].getType())) {
            // Ordered comparisons are false on NaN; `ne` is true on NaN (as a != b in C).
            ar::CmpFPredicate pred = llvm::StringSwitch<ar::CmpFPredicate>(p)
                .Case("lt", ar::CmpFPredicate::OLT).Case("le", ar::CmpFPredicate::OLE)
                .Case("gt", ar::CmpFPredicate::OGT).Case("ge", ar::CmpFPredicate::OGE)
                .Case("eq", ar::CmpFPredicate::OEQ).Default(ar::CmpFPredicate::UNE);
            return b.create<ar::CmpFOp>(loc, pred, args[0], args[1]);
          }
          ar::CmpIPredicate pred = llvm::StringSwitch<ar::CmpIPredicate>(p)
              .Case("lt", ar::CmpIPredicate::slt).Case("le", ar::CmpIPredicate::sle)
              .Case("gt", ar::CmpIPredicate::sgt).Case("ge", ar::CmpIPredicate::sge)
              .Case("eq", ar::CmpIPredicate::eq).Default(ar::CmpIPredicate::ne);
          return b.create<ar::CmpIOp>(loc, pred, args[0], args[1]);
        });
    rw.replaceOp(op, result);
    return mlir::success();
  }
};

struct SelectLowering : mlir::OpRewritePattern<step::SelectOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::SelectOp op,
                                      mlir::PatternRewriter &rw) const override {
    Value result = elementwise(rw, op.getLoc(), op.getType(), op->getOperands(),
        [&](OpBuilder &b, Location loc, mlir::ValueRange args) -> Value {
          return b.create<mlir::arith::SelectOp>(loc, args[0], args[1], args[2]);
        });
    rw.replaceOp(op, result);
    return mlir::success();
  }
};

// Converts one scalar between step element types (floats, i32/i64, i1).
Value convertScalar(OpBuilder &b, Location loc, Value x, mlir::Type to) {
  namespace ar = mlir::arith;
  mlir::Type from = x.getType();
  if (from == to) return x;
  bool fromFloat = isFloat(from), toFloat = isFloat(to);
  unsigned fromWidth = from.getIntOrFloatBitWidth(), toWidth = to.getIntOrFloatBitWidth();
  if (fromFloat && toFloat) {
    if (fromWidth < toWidth) return b.create<ar::ExtFOp>(loc, to, x);
    if (fromWidth > toWidth) return b.create<ar::TruncFOp>(loc, to, x);
    // bf16 ↔ f16: through f32.
    Value wide = b.create<ar::ExtFOp>(loc, b.getF32Type(), x);
    return b.create<ar::TruncFOp>(loc, to, wide);
  }
  if (to.isInteger(1)) {
    if (fromFloat)
      return b.create<ar::CmpFOp>(loc, ar::CmpFPredicate::UNE, x, scalarConstant(b, loc, from, 0));
    return b.create<ar::CmpIOp>(loc, ar::CmpIPredicate::ne, x, scalarConstant(b, loc, from, 0));
  }
  if (from.isInteger(1)) {
    if (toFloat) return b.create<ar::UIToFPOp>(loc, to, x);
    return b.create<ar::ExtUIOp>(loc, to, x);
  }
  if (fromFloat) return b.create<ar::FPToSIOp>(loc, to, x);  // truncates toward zero
  if (toFloat) return b.create<ar::SIToFPOp>(loc, to, x);
  if (fromWidth < toWidth) return b.create<ar::ExtSIOp>(loc, to, x);
  return b.create<ar::TruncIOp>(loc, to, x);
}

struct CastLowering : mlir::OpRewritePattern<step::CastOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::CastOp op, mlir::PatternRewriter &rw) const override {
    auto type = llvm::cast<mlir::RankedTensorType>(op.getType());
    if (op.getInput().getType() == type) {
      rw.replaceOp(op, op.getInput());
      return mlir::success();
    }
    Value result = elementwise(rw, op.getLoc(), type, op->getOperands(),
        [&](OpBuilder &b, Location loc, mlir::ValueRange args) {
          return convertScalar(b, loc, args[0], type.getElementType());
        });
    rw.replaceOp(op, result);
    return mlir::success();
  }
};

// step.exact_scale as the interpreter computes it (ElementwiseOps.cpp runExactScale): X in
// f64 (an integer below 2^53, so X / into rounds to no integer boundary and floor is exact),
// the buffer stored in i64. One generic per result; both recompute the same few operations.
struct ExactScaleLowering : mlir::OpRewritePattern<step::ExactScaleOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::ExactScaleOp op,
                                      mlir::PatternRewriter &rw) const override {
    namespace ar = mlir::arith;
    int64_t num = op.getNum(), den = op.getDen();
    int bits = static_cast<int>(op.getBits());
    int64_t into = op.getInverse() ? num : den, outOf = op.getInverse() ? den : num;
    auto compute = [&](OpBuilder &b, Location loc, mlir::ValueRange args, bool wantBuffer) -> Value {
      mlir::Type f64 = b.getF64Type(), i64 = b.getI64Type();
      Value x = b.create<ar::MulFOp>(loc, args[0], fconst(b, loc, f64, std::ldexp(1.0, bits)));
      Value intoF = fconst(b, loc, f64, static_cast<double>(into));
      Value q = b.create<mlir::math::FloorOp>(loc, b.create<ar::DivFOp>(loc, x, intoF));
      Value rest = b.create<ar::SubFOp>(loc, x, b.create<ar::MulFOp>(loc, q, intoF));
      // The buffer's arithmetic runs in f64 too (exact below 2^53, which the verifier bounds):
      // 64-bit integer division has no vector instruction, f64 division does.
      Value buffer = b.create<ar::AddFOp>(
          loc, b.create<ar::MulFOp>(loc, b.create<ar::SIToFPOp>(loc, f64, args[1]), intoF), rest);
      Value outOfF = fconst(b, loc, f64, static_cast<double>(outOf));
      Value high = b.create<mlir::math::FloorOp>(loc, b.create<ar::DivFOp>(loc, buffer, outOfF));
      if (wantBuffer) return b.create<ar::FPToSIOp>(loc, i64, high);
      Value low = b.create<ar::SubFOp>(loc, buffer, b.create<ar::MulFOp>(loc, high, outOfF));
      Value y = b.create<ar::AddFOp>(
          loc, b.create<ar::MulFOp>(loc, q, fconst(b, loc, f64, static_cast<double>(outOf))), low);
      return b.create<ar::MulFOp>(loc, y, fconst(b, loc, f64, std::ldexp(1.0, -bits)));
    };
    llvm::SmallVector<Value> results;
    for (bool wantBuffer : {false, true}) {
      auto type = llvm::cast<mlir::RankedTensorType>(op->getResult(wantBuffer).getType());
      results.push_back(elementwise(rw, op.getLoc(), type, op->getOperands(),
          [&](OpBuilder &b, Location loc, mlir::ValueRange args) {
            return compute(b, loc, args, wantBuffer);
          }));
    }
    rw.replaceOp(op, results);
    return mlir::success();
  }
};

struct ConstantLowering : mlir::OpRewritePattern<step::ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::ConstantOp op,
                                      mlir::PatternRewriter &rw) const override {
    auto value = llvm::dyn_cast<mlir::TypedAttr>(op.getValue());
    if (!value || value.getType() != op.getType()) return mlir::failure();
    rw.replaceOpWithNewOp<mlir::arith::ConstantOp>(op, value);
    return mlir::success();
  }
};

}  // namespace

void populateElementwisePatterns(mlir::RewritePatternSet &patterns) {
  mlir::MLIRContext *ctx = patterns.getContext();
  patterns.add<UnaryLowering<step::NegOp>, UnaryLowering<step::AbsOp>, UnaryLowering<step::ExpOp>,
               UnaryLowering<step::LogOp>, UnaryLowering<step::SqrtOp>,
               UnaryLowering<step::RsqrtOp>, UnaryLowering<step::TanhOp>,
               UnaryLowering<step::SigmoidOp>, UnaryLowering<step::ReluOp>,
               UnaryLowering<step::SiluOp>, UnaryLowering<step::ErfOp>,
               UnaryLowering<step::SinOp>, UnaryLowering<step::CosOp>,
               UnaryLowering<step::GeluOp>, UnaryLowering<step::LeakyReluOp>,
               UnaryLowering<step::PowOp>, UnaryLowering<step::QuantizeOp>>(ctx);
  patterns.add<BinaryLowering<step::AddOp>, BinaryLowering<step::SubOp>,
               BinaryLowering<step::MulOp>, BinaryLowering<step::DivOp>,
               BinaryLowering<step::MaxOp>, BinaryLowering<step::MinOp>>(ctx);
  patterns.add<CompareLowering, SelectLowering, CastLowering, ExactScaleLowering,
               ConstantLowering>(ctx);
}

}  // namespace stepc::lowering
