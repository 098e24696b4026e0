//===- RandomPatterns.cpp - step.dropout, step.jitter → linalg.generic ----===//
//
// The per-step random ops as all-parallel linalg.generics that draw each element's numbers with
// Philox4x32-10 from (seed, the op's stream of the step counter, row-major element index), the
// draws the reference interpreter makes (runtime/base/Philox.h), so the compiled masks and
// factors are the interpreter's. The element index comes from linalg.index, which tiling and
// fusion keep correct.
// - dropout keeps an element when uniform01(seed, stream, index) >= rate; the comparison is done
//   on the 53 random bits against ceil(rate · 2^53), which is exactly `uniform01 >= rate`
//   without floating point.
// - jitter multiplies by 1 - eps + 2 eps u, u = (word 0 >> 8) · 2^-24: exact in f32 (Philox.h:
//   jitterFactor).
//
//===----------------------------------------------------------------------===//
#include <cmath>

#include "compiler/Conversion/StepToLinalg/LoweringUtils.h"
#include "compiler/Conversion/StepToLinalg/Patterns.h"
#include "dialects/step/IR/StepDialect.h"
#include "runtime/base/Philox.h"

namespace stepc::lowering {
namespace {

using mlir::Location;
using mlir::OpBuilder;
using mlir::Value;
namespace ar = mlir::arith;

constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;

Value i32c(OpBuilder &b, Location loc, uint32_t v) {
  return b.create<ar::ConstantIntOp>(loc, static_cast<int32_t>(v), 32);
}
Value i64c(OpBuilder &b, Location loc, uint64_t v) {
  return b.create<ar::ConstantIntOp>(loc, static_cast<int64_t>(v), 64);
}

// Words 0 and 1 of philox4x32(key, hi, lo), as Philox.cpp computes them.
std::pair<Value, Value> philox(OpBuilder &b, Location loc, uint64_t key, Value hi, Value lo) {
  auto i32 = b.getI32Type(), i64 = b.getI64Type();
  Value c32 = i64c(b, loc, 32);
  auto low = [&](Value v) { return b.create<ar::TruncIOp>(loc, i32, v).getResult(); };
  auto high = [&](Value v) {
    return b.create<ar::TruncIOp>(loc, i32, b.create<ar::ShRUIOp>(loc, v, c32)).getResult();
  };
  Value c[4] = {low(lo), high(lo), low(hi), high(hi)};
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  Value m0 = i64c(b, loc, kM0), m1 = i64c(b, loc, kM1);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    Value p0 = b.create<ar::MulIOp>(loc, m0, b.create<ar::ExtUIOp>(loc, i64, c[0]));
    Value p1 = b.create<ar::MulIOp>(loc, m1, b.create<ar::ExtUIOp>(loc, i64, c[2]));
    Value n0 = b.create<ar::XOrIOp>(loc, b.create<ar::XOrIOp>(loc, high(p1), c[1]),
                                    i32c(b, loc, k0));
    Value n2 = b.create<ar::XOrIOp>(loc, b.create<ar::XOrIOp>(loc, high(p0), c[3]),
                                    i32c(b, loc, k1));
    c[0] = n0;
    c[1] = low(p1);
    c[2] = n2;
    c[3] = low(p0);
  }
  return {c[0], c[1]};
}

// The row-major index of the current element of a linalg.generic over `shape`.
Value elementIndex(OpBuilder &b, Location loc, llvm::ArrayRef<int64_t> shape) {
  auto i64 = b.getI64Type();
  Value index = i64c(b, loc, 0);
  for (size_t d = 0; d < shape.size(); ++d) {
    Value i = b.create<ar::IndexCastUIOp>(
        loc, i64, b.create<mlir::linalg::IndexOp>(loc, static_cast<uint64_t>(d)));
    index = b.create<ar::AddIOp>(loc, b.create<ar::MulIOp>(loc, index, i64c(b, loc, shape[d])), i);
  }
  return index;
}

// Words 0 and 1 of Philox for the current element: `purpose`'s stream of the step counter
// (runtime/base/Philox.h: rngStream), so the numbers never repeat another consumer's.
std::pair<Value, Value> draw(OpBuilder &b, Location loc, uint64_t seed, rt::RngPurpose purpose,
                             llvm::ArrayRef<int64_t> shape, mlir::ValueRange args) {
  Value step = args.size() > 1 ? args[1] : i64c(b, loc, 0);
  Value stream = b.create<ar::XOrIOp>(loc, step, i64c(b, loc, rt::rngStream(purpose, 0)));
  return philox(b, loc, seed, stream, elementIndex(b, loc, shape));
}

// The op's input and, where given, its step counter: the generic's operands.
llvm::SmallVector<Value> randomOperands(step::StochasticOpInterface op) {
  llvm::SmallVector<Value> inputs{op.getInput()};
  if (op.getStep()) inputs.push_back(op.getStep());
  return inputs;
}

// `op` as one all-parallel generic whose element is compute(b, loc, x, w0, w1), with w0 and w1
// the Philox words 0 and 1 of the element's draw for `purpose`.
template <typename OpT, typename Compute>
mlir::LogicalResult lowerRandom(OpT op, mlir::PatternRewriter &rw, rt::RngPurpose purpose,
                                Compute compute) {
  auto type = llvm::cast<mlir::RankedTensorType>(op.getType());
  if (!type.hasStaticShape()) return rw.notifyMatchFailure(op, "dynamic shape");
  uint64_t seed = static_cast<uint64_t>(op.getSeed());
  llvm::ArrayRef<int64_t> shape = type.getShape();
  Value result = elementwise(rw, op.getLoc(), type, randomOperands(op),
      [&](OpBuilder &b, Location loc, mlir::ValueRange args) -> Value {
        auto [w0, w1] = draw(b, loc, seed, purpose, shape, args);
        return compute(b, loc, args[0], w0, w1);
      });
  rw.replaceOp(op, result);
  return mlir::success();
}

struct DropoutLowering : mlir::OpRewritePattern<step::DropoutOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::DropoutOp op,
                                      mlir::PatternRewriter &rw) const override {
    double rate = op.getRate().convertToDouble();
    // uniform01 = bits · 2^-53 >= rate  <=>  bits >= ceil(rate · 2^53) (scaling is exact).
    double threshold = std::ceil(std::ldexp(rate, 53));
    uint64_t minBits = threshold <= 0 ? 0 : static_cast<uint64_t>(threshold);
    mlir::Type elem = op.getType().getElementType();
    return lowerRandom(op, rw, rt::RngPurpose::kDropout,
        [&](OpBuilder &b, Location loc, Value x, Value w0, Value w1) -> Value {
          auto i64 = b.getI64Type();
          Value bits = b.create<ar::ShRUIOp>(
              loc,
              b.create<ar::OrIOp>(loc,
                                  b.create<ar::ShLIOp>(loc, b.create<ar::ExtUIOp>(loc, i64, w0),
                                                       i64c(b, loc, 32)),
                                  b.create<ar::ExtUIOp>(loc, i64, w1)),
              i64c(b, loc, 11));
          Value keep = b.create<ar::CmpIOp>(loc, ar::CmpIPredicate::uge, bits,
                                            i64c(b, loc, minBits));
          Value scaled =
              b.create<ar::MulFOp>(loc, x, scalarConstant(b, loc, elem, 1.0 / (1.0 - rate)));
          return b.create<ar::SelectOp>(loc, keep, scaled, scalarConstant(b, loc, elem, 0.0));
        });
  }
};

struct JitterLowering : mlir::OpRewritePattern<step::JitterOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::JitterOp op,
                                      mlir::PatternRewriter &rw) const override {
    double eps = op.getEps().convertToDouble();
    mlir::Type elem = op.getType().getElementType();
    return lowerRandom(op, rw, rt::RngPurpose::kJitter,
        [&](OpBuilder &b, Location loc, Value x, Value w0, Value) -> Value {
          // The factor in f32 (in f64 for f64 tensors, as the interpreter's double), u exact
          // in both; bf16/f16 values are multiplied in f32 and rounded once.
          mlir::Type ft = elem.getIntOrFloatBitWidth() > 32 ? elem : b.getF32Type();
          Value u = b.create<ar::MulFOp>(
              loc, b.create<ar::UIToFPOp>(loc, ft, b.create<ar::ShRUIOp>(loc, w0, i32c(b, loc, 8))),
              scalarConstant(b, loc, ft, std::ldexp(1.0, -24)));
          Value factor = b.create<ar::AddFOp>(
              loc, scalarConstant(b, loc, ft, 1.0 - eps),
              b.create<ar::MulFOp>(loc, u, scalarConstant(b, loc, ft, 2.0 * eps)));
          Value wide = elem == ft ? x : b.create<ar::ExtFOp>(loc, ft, x).getResult();
          Value y = b.create<ar::MulFOp>(loc, wide, factor);
          return elem == ft ? y : b.create<ar::TruncFOp>(loc, elem, y).getResult();
        });
  }
};

}  // namespace

void populateRandomPatterns(mlir::RewritePatternSet &patterns) {
  patterns.add<DropoutLowering, JitterLowering>(patterns.getContext());
}

}  // namespace stepc::lowering
