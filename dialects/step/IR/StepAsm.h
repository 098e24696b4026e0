//===- StepAsm.h - the shared assembly form of `step` ops -------*- C++ -*-===//
//
// MLIR's textual format names a type at every use of a value. `step` model files do not: they
// write shapes only on declarations. The parser therefore keeps, per isolated scope, the type of
// every value a `step` op defined (a ParseScope), looks operand types up there, and infers result
// types as it goes. Outside a `step.model` ops print their types, so any IR parses without it.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_DIALECTS_STEP_IR_STEPASM_H
#define STEPC_DIALECTS_STEP_IR_STEPASM_H

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mlir/IR/OpImplementation.h"

namespace stepc::step {

/// RAII: opens a scope of SSA-name → type bindings (and named dims) for the parser. Nested
/// scopes see the bindings of the enclosing ones.
class ParseScope {
 public:
  ParseScope();
  ~ParseScope();
  ParseScope(const ParseScope &) = delete;
  ParseScope &operator=(const ParseScope &) = delete;

  /// Binds `%name#number` (name without '%') in the innermost scope.
  static void bind(llvm::StringRef name, unsigned number, mlir::Type type);
  /// The type of `%name#number` (name as written, with '%'), or null.
  static mlir::Type lookup(llvm::StringRef name, unsigned number);
  static void bindDim(llvm::StringRef name, int64_t value);
  static std::optional<int64_t> lookupDim(llvm::StringRef name);
  static std::string dimNames();
  /// The names of the dims in scope, innermost scope last.
  static llvm::SmallVector<std::string> dimNameList();
  /// Function signatures, so calls can be typed while parsing (functions precede their calls).
  static void bindFunction(llvm::StringRef name, mlir::FunctionType type);
  static mlir::FunctionType lookupFunction(llvm::StringRef name);
};

/// Named-dim overrides applied while parsing `step.model ... dims(...)` (`stepc --dim N=V`).
/// Each must name a dim the model declares.
void setDimOverrides(std::map<std::string, int64_t> overrides);

/// The configuration `step.model ... configs(NAME = (...))` to apply while parsing (`stepc
/// --config NAME`); empty for none. The model must declare it.
void setModelConfig(std::string name);

/// Binds the results of the op being parsed (by their written names) to `types`.
void bindResults(mlir::OpAsmParser &parser, llvm::ArrayRef<mlir::Type> types);

/// Parses `%a, %b` operands, then `{attrs}`, then optionally `: types [-> types]`, resolving
/// operand types from the ParseScope when none are written. Fills `resultTypes` when written.
mlir::ParseResult parseOperandsAttrsTypes(mlir::OpAsmParser &parser, mlir::OperationState &result,
                                          llvm::SmallVectorImpl<mlir::Type> &resultTypes);

/// The inverse of parseOperandsAttrsTypes. Types are omitted inside a `step.model`.
void printOperandsAttrsTypes(mlir::OpAsmPrinter &printer, mlir::Operation *op,
                             llvm::ArrayRef<llvm::StringRef> elidedAttrs = {});

/// True when `op` is nested in a `step.model` (where the printer leaves types out).
bool isInsideModel(mlir::Operation *op);

/// A parsed dimension expression in postfix form, to evaluate again with other dim values (a dim
/// declared from others follows a configuration or --dim that changes them).
struct DimStep {
  enum Kind { kInteger, kDim, kMultiply, kAdd, kDivide } kind;
  int64_t value;     // kInteger
  std::string name;  // kDim
};
using DimProgram = std::vector<DimStep>;

/// Parses a dimension expression: integers and named dims combined with `*`, `+`, `div` (exact
/// division: a remainder is an error, since a head size that does not divide the width is a
/// wrong model, not a rounding) and parens. MLIR's lexer has no `/` token, hence the keyword, as
/// affine maps spell `floordiv`. With `program`, also appends the expression to it.
mlir::ParseResult parseDimExpr(mlir::OpAsmParser &parser, int64_t &value,
                               DimProgram *program = nullptr);

/// The value of `program` with `dims`; nullopt, with the reason in `why`, when it names a dim
/// `dims` lacks, overflows, or divides with a remainder.
std::optional<int64_t> evaluateDimProgram(const DimProgram &program,
                                          const std::map<std::string, int64_t> &dims,
                                          std::string *why = nullptr);

/// Parses an attribute as MLIR writes it into `attr`, or a real-valued scalar expression over the
/// model's dims into `scalar`: numbers, named dims, `sqrt(e)`, `rsqrt(e)`, `*`, `+` and parens
/// (`0.02 * rsqrt(2 * L)`, GPT-2's residual-projection scale). A bare number stays an attribute.
/// The value is computed in double; a dump holds the number, so it parses back without dims.
mlir::ParseResult parseOptionalScalarExpr(mlir::OpAsmParser &parser, mlir::Attribute &attr,
                                          std::optional<double> &scalar);

/// Parses `[d0, d1, ...] dtype` into a ranked tensor type.
mlir::ParseResult parseShapeAndDtype(mlir::OpAsmParser &parser, mlir::RankedTensorType &type);
void printShapeAndDtype(mlir::OpAsmPrinter &printer, mlir::RankedTensorType type);

}  // namespace stepc::step

#endif  // STEPC_DIALECTS_STEP_IR_STEPASM_H
