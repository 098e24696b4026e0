//===- DropoutPattern.cpp - step.dropout → linalg.generic with Philox -----===//
//
// Inverted dropout as one all-parallel linalg.generic: each element's mask bit is drawn by
// Philox4x32-10 from (seed, step counter, row-major element index), the draw the reference
// interpreter makes (runtime/base/Philox.h: uniform01(seed, step, index) >= rate keeps the element),
// so the compiled mask is the interpreter's bit for bit. The element index comes from
// linalg.index, which tiling and fusion keep correct. The comparison is done on the 53 random
// bits against ceil(rate · 2^53), which is exactly `uniform01 >= rate` without floating point.
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

struct DropoutLowering : mlir::OpRewritePattern<step::DropoutOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::DropoutOp op,
                                      mlir::PatternRewriter &rw) const override {
    auto type = llvm::cast<mlir::RankedTensorType>(op.getType());
    if (!type.hasStaticShape()) return rw.notifyMatchFailure(op, "dynamic shape");
    double rate = op.getRate().convertToDouble();
    uint64_t seed = static_cast<uint64_t>(op.getSeed());
    // uniform01 = bits · 2^-53 >= rate  <=>  bits >= ceil(rate · 2^53) (scaling is exact).
    double threshold = std::ceil(std::ldexp(rate, 53));
    uint64_t minBits = threshold <= 0 ? 0 : static_cast<uint64_t>(threshold);
    mlir::Type elem = type.getElementType();
    llvm::SmallVector<Value> inputs{op.getInput()};
    if (op.getStep()) inputs.push_back(op.getStep());
    llvm::ArrayRef<int64_t> shape = type.getShape();
    Value result = elementwise(rw, op.getLoc(), type, inputs,
        [&](OpBuilder &b, Location loc, mlir::ValueRange args) -> Value {
          auto i64 = b.getI64Type();
          Value index = i64c(b, loc, 0);
          for (size_t d = 0; d < shape.size(); ++d) {
            Value i = b.create<ar::IndexCastUIOp>(
                loc, i64, b.create<mlir::linalg::IndexOp>(loc, static_cast<uint64_t>(d)));
            index = b.create<ar::AddIOp>(
                loc, b.create<ar::MulIOp>(loc, index, i64c(b, loc, shape[d])), i);
          }
          // The dropout purpose's streams (runtime/base/Philox.h: rngStream), so masks never
          // repeat the numbers that drew the batch.
          Value step = args.size() > 1 ? args[1] : i64c(b, loc, 0);
          Value stream = b.create<ar::XOrIOp>(
              loc, step,
              i64c(b, loc,
                   rt::rngStream(rt::RngPurpose::kDropout, 0)));
          auto [w0, w1] = philox(b, loc, seed, stream, index);
          Value bits = b.create<ar::ShRUIOp>(
              loc,
              b.create<ar::OrIOp>(loc,
                                  b.create<ar::ShLIOp>(loc, b.create<ar::ExtUIOp>(loc, i64, w0),
                                                       i64c(b, loc, 32)),
                                  b.create<ar::ExtUIOp>(loc, i64, w1)),
              i64c(b, loc, 11));
          Value keep = b.create<ar::CmpIOp>(loc, ar::CmpIPredicate::uge, bits,
                                            i64c(b, loc, minBits));
          Value scaled = b.create<ar::MulFOp>(loc, args[0],
                                              scalarConstant(b, loc, elem, 1.0 / (1.0 - rate)));
          return b.create<ar::SelectOp>(loc, keep, scaled, scalarConstant(b, loc, elem, 0.0));
        });
    rw.replaceOp(op, result);
    return mlir::success();
  }
};

}  // namespace

void populateDropoutPatterns(mlir::RewritePatternSet &patterns) {
  patterns.add<DropoutLowering>(patterns.getContext());
}

}  // namespace stepc::lowering
