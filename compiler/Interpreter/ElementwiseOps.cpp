//===- ElementwiseOps.cpp - elementwise kernels of the interpreter -------===//
//
// Unary and binary arithmetic with NumPy broadcasting, compare, select, cast, dropout and jitter.
// Float maximum and minimum propagate NaN (as jnp.maximum does), so a NaN is never hidden.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <functional>
#include <limits>

#include "compiler/Interpreter/Kernels.h"
#include "compiler/Interpreter/TensorUtils.h"
#include "llvm/ADT/TypeSwitch.h"
#include "runtime/base/Philox.h"

namespace stepc::interp {
namespace {

using UnaryFn = std::function<double(double)>;
using BinaryFn = std::function<double(double, double)>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double sigmoid(double x) {
  // Two forms so that exp never overflows.
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}

double gelu(double x, llvm::StringRef approximate) {
  if (approximate == "erf") return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  const double kSqrt2OverPi = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

std::optional<UnaryFn> unaryFunction(mlir::Operation *op) {
  return llvm::TypeSwitch<mlir::Operation *, std::optional<UnaryFn>>(op)
      .Case<step::NegOp>([](auto) { return UnaryFn([](double x) { return -x; }); })
      .Case<step::AbsOp>([](auto) { return UnaryFn([](double x) { return std::fabs(x); }); })
      .Case<step::ExpOp>([](auto) { return UnaryFn([](double x) { return std::exp(x); }); })
      .Case<step::LogOp>([](auto) { return UnaryFn([](double x) { return std::log(x); }); })
      .Case<step::SqrtOp>([](auto) { return UnaryFn([](double x) { return std::sqrt(x); }); })
      .Case<step::RsqrtOp>(
          [](auto) { return UnaryFn([](double x) { return 1.0 / std::sqrt(x); }); })
      .Case<step::TanhOp>([](auto) { return UnaryFn([](double x) { return std::tanh(x); }); })
      .Case<step::SigmoidOp>([](auto) { return UnaryFn(sigmoid); })
      .Case<step::ReluOp>([](auto) {
        return UnaryFn([](double x) { return std::isnan(x) ? x : std::max(x, 0.0); });
      })
      .Case<step::SiluOp>([](auto) { return UnaryFn([](double x) { return x * sigmoid(x); }); })
      .Case<step::ErfOp>([](auto) { return UnaryFn([](double x) { return std::erf(x); }); })
      .Case<step::SinOp>([](auto) { return UnaryFn([](double x) { return std::sin(x); }); })
      .Case<step::CosOp>([](auto) { return UnaryFn([](double x) { return std::cos(x); }); })
      .Case<step::GeluOp>([](step::GeluOp gelu_) {
        std::string approximate = gelu_.getApproximate().str();
        return UnaryFn([approximate](double x) { return gelu(x, approximate); });
      })
      .Case<step::LeakyReluOp>([](step::LeakyReluOp leaky) {
        double alpha = leaky.getAlpha().convertToDouble();
        return UnaryFn([alpha](double x) { return x > 0 ? x : alpha * x; });
      })
      .Case<step::QuantizeOp>([](step::QuantizeOp q) {
        int bits = static_cast<int>(q.getBits());
        return UnaryFn([bits](double x) { return std::ldexp(std::floor(std::ldexp(x, bits) + 0.5), -bits); });
      })
      .Case<step::PowOp>([](step::PowOp pow) {
        double exponent = pow.getExponent().convertToDouble();
        return UnaryFn([exponent](double x) { return std::pow(x, exponent); });
      })
      .Default([](mlir::Operation *) { return std::nullopt; });
}

double nanOr(double a, double b, double value) {
  return std::isnan(a) || std::isnan(b) ? kNaN : value;
}

std::optional<BinaryFn> binaryFunction(mlir::Operation *op) {
  return llvm::TypeSwitch<mlir::Operation *, std::optional<BinaryFn>>(op)
      .Case<step::AddOp>([](auto) { return BinaryFn(std::plus<double>()); })
      .Case<step::SubOp>([](auto) { return BinaryFn(std::minus<double>()); })
      .Case<step::MulOp>([](auto) { return BinaryFn(std::multiplies<double>()); })
      .Case<step::DivOp>([](auto) { return BinaryFn(std::divides<double>()); })
      .Case<step::MaxOp>([](auto) {
        return BinaryFn([](double a, double b) { return nanOr(a, b, std::max(a, b)); });
      })
      .Case<step::MinOp>([](auto) {
        return BinaryFn([](double a, double b) { return nanOr(a, b, std::min(a, b)); });
      })
      .Default([](mlir::Operation *) { return std::nullopt; });
}

// Applies `fn` to the operands broadcast to the result's shape.
void broadcastMap(Operands in, Tensor &out,
                  llvm::function_ref<double(llvm::ArrayRef<double>)> fn) {
  std::vector<std::vector<int64_t>> maps;
  for (const Tensor *t : in) maps.push_back(broadcastIndices(t->shape(), out.shape()));
  llvm::SmallVector<double, 3> args(in.size());
  for (int64_t i = 0; i < out.numElements(); ++i) {
    for (size_t k = 0; k < in.size(); ++k) args[k] = in[k]->data[maps[k][i]];
    out.data[i] = fn(args);
  }
}

mlir::LogicalResult runBinary(mlir::Operation *op, const BinaryFn &fn, Operands in,
                              Tensor &out) {
  bool integer = !isFloatElement(out.type.getElementType());
  bool divides = llvm::isa<step::DivOp>(op);
  bool divisionByZero = false;
  broadcastMap(in, out, [&](llvm::ArrayRef<double> x) {
    if (!integer || !divides) return fn(x[0], x[1]);
    // Integer division truncates toward zero, as in C and in compiled integer code.
    if (x[1] == 0) {
      divisionByZero = true;
      return 0.0;
    }
    return std::trunc(x[0] / x[1]);
  });
  if (divisionByZero) return mlir::emitError(op->getLoc()) << "integer division by zero";
  return mlir::success();
}

mlir::LogicalResult runCompare(step::CompareOp op, Operands in, Tensor &out) {
  llvm::StringRef p = op.getPredicate();
  broadcastMap(in, out, [&](llvm::ArrayRef<double> x) {
    double a = x[0], b = x[1];
    bool r = p == "lt" ? a < b : p == "le" ? a <= b : p == "gt" ? a > b
           : p == "ge" ? a >= b : p == "eq" ? a == b : a != b;
    return r ? 1.0 : 0.0;
  });
  return mlir::success();
}

// The range of an integer element type (i1 is handled by the caller).
std::pair<double, double> integerRange(mlir::Type type) {
  unsigned width = type.getIntOrFloatBitWidth();
  return {-std::ldexp(1.0, width - 1), std::ldexp(1.0, width - 1) - 1};
}

mlir::LogicalResult runCast(step::CastOp op, const Tensor &in, Tensor &out) {
  mlir::Type to = op.getTo();
  for (int64_t i = 0; i < in.numElements(); ++i) {
    double v = in.data[i];
    if (isFloatElement(to)) {
      // A cast rounds in every precision mode: the narrowing is what the op means.
      out.data[i] = roundToElementType(v, to);
    } else if (to.isInteger(1)) {
      out.data[i] = v != 0 ? 1.0 : 0.0;
    } else {
      double t = std::trunc(v);
      auto [lo, hi] = integerRange(to);
      if (!(t >= lo && t <= hi))
        return mlir::emitError(op.getLoc())
               << "cast of " << v << " (element " << i << ") to " << to << " is out of range";
      out.data[i] = t;
    }
  }
  return mlir::success();
}

// Element i is kept when uniform01(seed, step, i) >= rate; the stream is the step counter
// operand (0 without one).
void runDropout(step::DropoutOp op, Operands in, Tensor &out) {
  double rate = op.getRate().convertToDouble();
  uint64_t seed = op.getSeed();
  uint64_t stream = in.size() > 1 ? static_cast<uint64_t>(in[1]->data.at(0)) : 0;
  double scale = 1.0 / (1.0 - rate);
  const Tensor &x = *in[0];
  for (int64_t i = 0; i < x.numElements(); ++i)
    out.data[i] = rt::uniform01(seed, rt::rngStream(rt::RngPurpose::kDropout, stream), i) >= rate
                      ? x.data[i] * scale
                      : 0.0;
}

// Element i times jitterFactor(seed, the jitter stream of the step counter, i).
void runJitter(step::JitterOp op, Operands in, Tensor &out) {
  double eps = op.getEps().convertToDouble();
  uint64_t seed = op.getSeed();
  uint64_t stream = in.size() > 1 ? static_cast<uint64_t>(in[1]->data.at(0)) : 0;
  const Tensor &x = *in[0];
  for (int64_t i = 0; i < x.numElements(); ++i)
    out.data[i] =
        x.data[i] * rt::jitterFactor(seed, rt::rngStream(rt::RngPurpose::kJitter, stream), i, eps);
}

// step.exact_scale, element by element, as its description writes it: X = x * 2^bits is an
// integer held exactly in the double, the buffer a non-negative integer.
void runExactScale(step::ExactScaleOp op, Operands in, Results out) {
  int64_t num = op.getNum(), den = op.getDen();
  int bits = static_cast<int>(op.getBits());
  bool inverse = op.getInverse();
  // Forward: X -> (X div den) * num, low digits through the buffer; inverse: the other way.
  int64_t into = inverse ? num : den, outOf = inverse ? den : num;
  for (int64_t i = 0; i < in[0]->numElements(); ++i) {
    double x = std::ldexp(in[0]->data[i], bits);
    double q = std::floor(x / static_cast<double>(into));
    auto buffer = static_cast<int64_t>(in[1]->data[i]) * into +
                  static_cast<int64_t>(x - q * static_cast<double>(into));
    int64_t low = buffer % outOf;
    out[0].data[i] = std::ldexp(q * static_cast<double>(outOf) + static_cast<double>(low), -bits);
    out[1].data[i] = static_cast<double>(buffer / outOf);
  }
}

}  // namespace

KernelResult runElementwiseOp(mlir::Operation *op, Operands in, Results out) {
  if (std::optional<UnaryFn> fn = unaryFunction(op)) {
    for (int64_t i = 0; i < in[0]->numElements(); ++i) out[0].data[i] = (*fn)(in[0]->data[i]);
    return mlir::success();
  }
  if (std::optional<BinaryFn> fn = binaryFunction(op)) return runBinary(op, *fn, in, out[0]);
  return llvm::TypeSwitch<mlir::Operation *, KernelResult>(op)
      .Case<step::CompareOp>([&](auto compare) { return runCompare(compare, in, out[0]); })
      .Case<step::SelectOp>([&](auto) {
        broadcastMap(in, out[0], [](llvm::ArrayRef<double> x) { return x[0] ? x[1] : x[2]; });
        return mlir::success();
      })
      .Case<step::CastOp>([&](auto cast) { return runCast(cast, *in[0], out[0]); })
      .Case<step::ExactScaleOp>([&](auto scale) {
        runExactScale(scale, in, out);
        return mlir::success();
      })
      .Case<step::JitterOp>([&](auto jitter) {
        runJitter(jitter, in, out[0]);
        return mlir::success();
      })
      .Case<step::DropoutOp>([&](auto dropout) {
        runDropout(dropout, in, out[0]);
        return mlir::success();
      })
      .Default([](mlir::Operation *) { return std::nullopt; });
}

}  // namespace stepc::interp
