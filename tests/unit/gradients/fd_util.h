// Helpers of the gradient tests: a context with the VJP models, parsing with captured
// diagnostics, running --step-differentiate and the reference interpreter (float64), and
// comparing analytic gradients with central finite differences element by element.
//
// Finite differences: g_i ~ (L(x + h e_i) - L(x - h e_i)) / ((x + h) - (x - h)) with
// h = step * max(1, |x_i|), evaluated with the ORIGINAL (un-differentiated) function. The
// denominator is the difference actually represented in float64, not 2h.
#ifndef STEPC_TESTS_UNIT_GRADIENTS_FD_UTIL_H
#define STEPC_TESTS_UNIT_GRADIENTS_FD_UTIL_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/Autodiff/Passes.h"
#include "compiler/Autodiff/Vjp.h"
#include "compiler/Interpreter/Interpreter.h"
#include "dialects/step/IR/StepDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

namespace stepc::gradtest {

using interp::Tensor;

/// A context with the step and func dialects loaded and every VJP model attached.
inline std::unique_ptr<mlir::MLIRContext> makeContext() {
  mlir::DialectRegistry registry;
  registry.insert<step::StepDialect, mlir::func::FuncDialect>();
  ad::registerVjpModels(registry);
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

/// Collects the diagnostics emitted while it lives (as `location: message` lines).
class DiagnosticLog {
 public:
  explicit DiagnosticLog(mlir::MLIRContext *ctx)
      : handler_(ctx, [this](mlir::Diagnostic &d) {
          llvm::raw_string_ostream os(text_);
          os << d.getLocation() << ": " << d.str() << "\n";
          for (const mlir::Diagnostic &note : d.getNotes())
            os << "  note: " << note.str() << "\n";
          return mlir::success();
        }) {}
  const std::string &text() const { return text_; }

 private:
  std::string text_;
  mlir::ScopedDiagnosticHandler handler_;
};

inline mlir::OwningOpRef<mlir::ModuleOp> parseModule(const std::string &source,
                                                    mlir::MLIRContext *ctx) {
  return mlir::parseSourceString<mlir::ModuleOp>(source, ctx);
}

/// Runs --step-differentiate on `module`.
inline mlir::LogicalResult differentiate(mlir::ModuleOp module) {
  mlir::PassManager pm(module.getContext());
  pm.addPass(ad::createDifferentiate());
  return pm.run(module);
}

/// Runs `fn` in the reference interpreter with every op in float64.
inline mlir::FailureOr<std::vector<Tensor>> runF64(mlir::func::FuncOp fn,
                                                  const std::vector<Tensor> &args) {
  interp::Options options;
  options.precision = interp::Precision::F64;
  return interp::Interpreter(options).run(fn, args);
}

inline std::string printOp(mlir::Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  op->print(os);
  return os.str();
}

inline std::string typeString(mlir::Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return os.str();
}

inline bool isFloatTensor(mlir::Type t) {
  auto ranked = llvm::dyn_cast<mlir::RankedTensorType>(t);
  return ranked && llvm::isa<mlir::FloatType>(ranked.getElementType());
}

/// SplitMix64: a small, portable, deterministic generator (same values on every platform).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// Uniform integer in [0, n).
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }

 private:
  uint64_t state_;
};

/// FNV-1a: a stable seed from a name.
inline uint64_t hashName(const std::string &s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

/// Accept |analytic - fd| <= atol + rtol * |fd|.
struct Tolerance {
  double rtol;
  double atol;
};

/// Element-wise comparison of analytic gradients with finite differences, with a report of the
/// worst errors per argument.
class GradientComparison {
 public:
  explicit GradientComparison(Tolerance tol) : tol_(tol) {}

  void add(const std::string &arg, int64_t index, double analytic, double fd) {
    ++checked_;
    double err = std::fabs(analytic - fd);
    double scale = std::max(std::fabs(analytic), std::fabs(fd));
    double rel = scale > 0 ? err / scale : 0.0;
    bool ok = err <= tol_.atol + tol_.rtol * std::fabs(fd);  // NaN fails too
    if (!(err == err)) ok = false;
    Stats &s = stats_[arg];
    ++s.count;
    if (err > s.maxAbs || !(err == err)) {
      s.maxAbs = err;
      s.worstAbsIndex = index;
    }
    s.maxRel = std::max(s.maxRel, rel);
    if (!ok) {
      ++s.failures;
      ++failures_;
      if (s.examples.size() < 8) {
        std::ostringstream os;
        os.precision(17);
        os << "    " << arg << "[" << index << "]: analytic " << analytic << ", finite diff "
           << fd << ", |err| " << err;
        s.examples.push_back(os.str());
      }
    }
  }

  int64_t failures() const { return failures_; }
  int64_t checked() const { return checked_; }

  double maxAbs() const {
    double m = 0;
    for (const auto &[name, s] : stats_) m = std::max(m, s.maxAbs);
    return m;
  }
  double maxRel() const {
    double m = 0;
    for (const auto &[name, s] : stats_) m = std::max(m, s.maxRel);
    return m;
  }

  std::string report() const {
    std::ostringstream os;
    os.precision(3);
    os << "tolerance rtol " << tol_.rtol << ", atol " << tol_.atol << "; " << checked_
       << " elements checked, " << failures_ << " outside tolerance\n";
    for (const auto &[name, s] : stats_) {
      os << "  " << name << ": " << s.count << " elements, max abs err " << s.maxAbs
         << " (element " << s.worstAbsIndex << "), max rel err " << s.maxRel << ", "
         << s.failures << " failing\n";
      for (const std::string &e : s.examples) os << e << "\n";
    }
    return os.str();
  }

 private:
  struct Stats {
    int64_t count = 0, failures = 0, worstAbsIndex = -1;
    double maxAbs = 0, maxRel = 0;
    std::vector<std::string> examples;
  };
  Tolerance tol_;
  std::map<std::string, Stats> stats_;
  int64_t failures_ = 0, checked_ = 0;
};

/// The central finite difference of `loss` in element `index` of `args[arg]`.
/// `loss` evaluates the original function; it returns NaN on a failed run.
inline double centralDifference(std::vector<Tensor> &args, size_t arg, int64_t index,
                                double step,
                                const std::function<double(const std::vector<Tensor> &)> &loss) {
  double x = args[arg].data[index];
  double h = step * std::max(1.0, std::fabs(x));
  double xp = x + h, xm = x - h;
  args[arg].data[index] = xp;
  double fp = loss(args);
  args[arg].data[index] = xm;
  double fm = loss(args);
  args[arg].data[index] = x;
  return (fp - fm) / (xp - xm);
}

}  // namespace stepc::gradtest

#endif  // STEPC_TESTS_UNIT_GRADIENTS_FD_UTIL_H
