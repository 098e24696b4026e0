// Helpers of the interpreter tests: build tensors, parse a small typed func.func, run it.
// Expected values in the tests are always computed in the test itself (by hand or by a direct
// loop over the op's definition), never by interpreter code.
#ifndef STEPC_TESTS_UNIT_INTERPRETER_TEST_UTIL_H
#define STEPC_TESTS_UNIT_INTERPRETER_TEST_UTIL_H

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/Interpreter/Interpreter.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

namespace stepc::interp::testing {

// Public helpers: free functions of a test (conv and scan checks) call them too.
class InterpreterTest : public ::testing::Test {
 public:
  InterpreterTest() {
    context_.loadDialect<step::StepDialect, mlir::func::FuncDialect>();
    context_.allowUnregisteredDialects();
  }

  mlir::MLIRContext *context() { return &context_; }

  mlir::RankedTensorType type(const std::string &text) {
    auto t = llvm::dyn_cast_or_null<mlir::RankedTensorType>(mlir::parseType(text, &context_));
    EXPECT_TRUE(t) << "not a tensor type: " << text;
    return t;
  }

  Tensor tensor(const std::string &typeText, std::vector<double> data) {
    return Tensor{type(typeText), std::move(data)};
  }

  /// Parses `source` (verified), failing the test with the parser's messages on error.
  mlir::ModuleOp parse(const std::string &source) {
    std::string messages;
    mlir::ScopedDiagnosticHandler capture(&context_, [&](mlir::Diagnostic &d) {
      messages += d.str() + "\n";
      return mlir::success();
    });
    auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &context_);
    EXPECT_TRUE(module) << "parse failed:\n" << messages << "in:\n" << source;
    if (!module) return {};
    modules_.push_back(std::move(module));
    return *modules_.back();
  }

  /// Runs @f of `source`; on failure returns nullopt with the diagnostics in `errors_`.
  std::optional<std::vector<Tensor>> tryRun(const std::string &source, std::vector<Tensor> args,
                                            Options options = {}) {
    mlir::ModuleOp module = parse(source);
    if (!module) return std::nullopt;
    auto fn = module.lookupSymbol<mlir::func::FuncOp>("f");
    EXPECT_TRUE(fn) << "no @f in:\n" << source;
    if (!fn) return std::nullopt;
    errors_.clear();
    mlir::ScopedDiagnosticHandler capture(&context_, [&](mlir::Diagnostic &d) {
      return recordError(d);
    });
    mlir::FailureOr<std::vector<Tensor>> results = Interpreter(options).run(fn, args);
    if (failed(results)) return std::nullopt;
    return *results;
  }

  /// Runs @f of `source`, failing the test on an error.
  std::vector<Tensor> run(const std::string &source, std::vector<Tensor> args,
                          Options options = {}) {
    std::optional<std::vector<Tensor>> results = tryRun(source, std::move(args), options);
    EXPECT_TRUE(results.has_value()) << "run failed:\n" << errors_ << "in:\n" << source;
    return results ? *results : std::vector<Tensor>{};
  }

  /// A function of one op: `op` names the arguments %a0, %a1, ... and is followed by the
  /// operand types; `results` are the result types.
  static std::string oneOpFunction(const std::string &op, const std::vector<Tensor> &args,
                                   const std::vector<std::string> &results) {
    std::string params, operandTypes, resultList, returned;
    for (size_t i = 0; i < args.size(); ++i) {
      std::string t = typeString(args[i].type);
      params += (i ? ", " : "") + ("%a" + std::to_string(i)) + ": " + t;
      operandTypes += (i ? ", " : "") + t;
    }
    for (size_t i = 0; i < results.size(); ++i) {
      resultList += (i ? ", " : "") + results[i];
      returned += (i ? ", " : "") +
                  (results.size() > 1 ? "%r#" + std::to_string(i) : std::string("%r"));
    }
    std::string lhs = results.size() > 1 ? "%r:" + std::to_string(results.size()) : "%r";
    return "func.func @f(" + params + ") -> (" + resultList + ") {\n  " + lhs + " = " + op +
           (args.empty() ? "" : " : " + operandTypes) + "\n  return " + returned + " : " +
           resultList + "\n}\n";
  }

  /// Runs one op with one result.
  Tensor runOp(const std::string &op, std::vector<Tensor> args, const std::string &result,
               Options options = {}) {
    std::string source = oneOpFunction(op, args, {result});
    std::vector<Tensor> out = run(source, std::move(args), options);
    return out.empty() ? Tensor{} : out[0];
  }

  /// Runs one op expecting an error; returns the diagnostics.
  std::string runOpError(const std::string &op, std::vector<Tensor> args,
                         const std::string &result) {
    std::string source = oneOpFunction(op, args, {result});
    std::optional<std::vector<Tensor>> out = tryRun(source, std::move(args));
    EXPECT_FALSE(out.has_value()) << "expected an error from " << op;
    return errors_;
  }

  /// Appends `location: message` of a diagnostic to errors_.
  mlir::LogicalResult recordError(mlir::Diagnostic &d) {
    llvm::raw_string_ostream os(errors_);
    os << d.getLocation() << ": " << d.str() << "\n";
    return mlir::success();
  }

  static std::string typeString(mlir::Type t) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << t;
    return os.str();
  }

  std::string errors_;

 private:
  mlir::MLIRContext context_;
  std::vector<mlir::OwningOpRef<mlir::ModuleOp>> modules_;
};

/// Expects `actual` to hold `expected` (same count, each within `tolerance`, relative to the
/// magnitude for large values).
inline void expectValues(const Tensor &actual, const std::vector<double> &expected,
                         double tolerance = 1e-12) {
  ASSERT_EQ(actual.data.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(actual.data[i], expected[i], tolerance * std::max(1.0, std::abs(expected[i])))
        << "element " << i;
}

inline std::vector<int64_t> shapeOf(const Tensor &t) {
  return std::vector<int64_t>(t.shape().begin(), t.shape().end());
}

}  // namespace stepc::interp::testing

#endif  // STEPC_TESTS_UNIT_INTERPRETER_TEST_UTIL_H
