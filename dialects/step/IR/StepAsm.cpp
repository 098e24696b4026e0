//===- StepAsm.cpp - the shared assembly form of `step` ops --------------===//
#include "dialects/step/IR/StepAsm.h"

#include <cmath>

#include <vector>

#include "dialects/step/IR/ShapeRules.h"
#include "dialects/step/IR/StepDialect.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"
#include "mlir/IR/BuiltinTypes.h"

namespace stepc::step {
namespace {

struct Scope {
  llvm::StringMap<mlir::Type> values;  // key: "name#number"
  std::vector<std::pair<std::string, int64_t>> dims;  // declaration order, for messages
  llvm::StringMap<mlir::FunctionType> functions;
};

// Parsing is single-threaded per context; a thread-local stack keeps concurrent parses apart.
thread_local std::vector<Scope> scopes;
thread_local std::map<std::string, int64_t> dimOverrides;
thread_local std::string modelConfig;

std::string key(llvm::StringRef name, unsigned number) {
  return (name + "#" + llvm::Twine(number)).str();
}

}  // namespace

ParseScope::ParseScope() { scopes.emplace_back(); }
ParseScope::~ParseScope() { scopes.pop_back(); }

void ParseScope::bind(llvm::StringRef name, unsigned number, mlir::Type type) {
  if (!scopes.empty()) scopes.back().values[key(name, number)] = type;
}

mlir::Type ParseScope::lookup(llvm::StringRef name, unsigned number) {
  name.consume_front("%");
  std::string k = key(name, number);
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    auto found = it->values.find(k);
    if (found != it->values.end()) return found->second;
  }
  return {};
}

void ParseScope::bindDim(llvm::StringRef name, int64_t value) {
  if (scopes.empty()) return;
  for (auto &[dimName, bound] : scopes.back().dims)
    if (dimName == name) {
      bound = value;  // rebinding: a configuration's or --dim's value replaces the declared one
      return;
    }
  scopes.back().dims.emplace_back(name.str(), value);
}

std::optional<int64_t> ParseScope::lookupDim(llvm::StringRef name) {
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it)
    for (const auto &[dimName, value] : it->dims)
      if (dimName == name) return value;
  return std::nullopt;
}

llvm::SmallVector<std::string> ParseScope::dimNameList() {
  llvm::SmallVector<std::string> out;
  for (const Scope &scope : scopes)
    for (const auto &entry : scope.dims) out.push_back(entry.first);
  return out;
}

std::string ParseScope::dimNames() {
  std::string out;
  for (const Scope &scope : scopes)
    for (const auto &entry : scope.dims) out += (out.empty() ? "" : ", ") + entry.first;
  return out.empty() ? "none" : out;
}

void ParseScope::bindFunction(llvm::StringRef name, mlir::FunctionType type) {
  if (!scopes.empty()) scopes.back().functions[name] = type;
}

mlir::FunctionType ParseScope::lookupFunction(llvm::StringRef name) {
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    auto found = it->functions.find(name);
    if (found != it->functions.end()) return found->second;
  }
  return {};
}

void setDimOverrides(std::map<std::string, int64_t> overrides) {
  dimOverrides = std::move(overrides);
}

const std::map<std::string, int64_t> &getDimOverrides() { return dimOverrides; }

void setModelConfig(std::string name) { modelConfig = std::move(name); }

const std::string &getModelConfig() { return modelConfig; }

void bindResults(mlir::OpAsmParser &parser, llvm::ArrayRef<mlir::Type> types) {
  for (unsigned i = 0, e = std::min<size_t>(parser.getNumResults(), types.size()); i < e; ++i) {
    auto [name, number] = parser.getResultName(i);
    ParseScope::bind(name, number, types[i]);
  }
}

namespace {

// `[e0, e1, ...]` where each entry is an integer (reshape's 0 and -1 included) or a dim
// expression that starts with a named dim (`NH`, `HS * 2`): an array of i64 integers, as
// MLIR's own parser gives for an integer list.
// A dim list after its '[': the entries, then ']'.
mlir::ParseResult parseDimListTail(mlir::OpAsmParser &parser, mlir::Attribute &value) {
  mlir::Builder &b = parser.getBuilder();
  llvm::SmallVector<mlir::Attribute> entries;
  if (failed(parser.parseOptionalRSquare())) {
    if (parser.parseCommaSeparatedList([&]() -> mlir::ParseResult {
          int64_t entry;
          mlir::OptionalParseResult integer = parser.parseOptionalInteger(entry);
          if (integer.has_value()) {
            if (mlir::failed(*integer)) return mlir::failure();
          } else if (parseDimExpr(parser, entry)) {
            return mlir::failure();
          }
          entries.push_back(b.getI64IntegerAttr(entry));
          return mlir::success();
        }) ||
        parser.parseRSquare())
      return mlir::failure();
  }
  value = b.getArrayAttr(entries);
  return mlir::success();
}

mlir::ParseResult parseDimList(mlir::OpAsmParser &parser, mlir::Attribute &value) {
  return mlir::failure(parser.parseLSquare() || parseDimListTail(parser, value));
}


// MLIR's attribute dictionary, where entries may also use the model's named dims:
//   shape = [0, 0, NH, -1]     an integer list of dim expressions (so are start, limit,
//                              strides, low, high, axes and perm)
//   value = rsqrt(HS)          an f32 scalar expression over the dims (attention's scale)
//   num_experts = E            any other entry: a bare named dim, an i64 integer
// Everything else is parsed, and printed, as MLIR writes it; a dump holds the values.
mlir::ParseResult parseAttrDictWithDims(mlir::OpAsmParser &parser, mlir::NamedAttrList &attrs) {
  if (failed(parser.parseOptionalLBrace())) return mlir::success();
  if (succeeded(parser.parseOptionalRBrace())) return mlir::success();
  mlir::Builder &b = parser.getBuilder();
  do {
    std::string name;
    llvm::SMLoc nameLoc = parser.getCurrentLocation();
    if (parser.parseKeywordOrString(&name)) return mlir::failure();
    if (attrs.get(name))
      return parser.emitError(nameLoc) << "attribute '" << name << "' given twice";
    if (failed(parser.parseOptionalEqual())) {
      attrs.append(name, b.getUnitAttr());
      continue;
    }
    mlir::Attribute value;
    if (name == "shape") {
      if (parseDimList(parser, value)) return mlir::failure();
    } else if (llvm::is_contained({"start", "limit", "strides", "low", "high", "axes", "perm"},
                                  name) &&
               succeeded(parser.parseOptionalLSquare())) {
      // The same list with its '[' taken; anything else (`axes = 1`) is MLIR's to parse and the
      // op's verifier's to refuse.
      if (parseDimListTail(parser, value)) return mlir::failure();
    } else if (name == "value") {
      // An attribute as MLIR writes it (`dense<...>`, `0.5`), or a scalar expression over the
      // dims (`rsqrt(HS)`, `0.5 * rsqrt(C)`), which becomes an f32 scalar.
      std::optional<double> scalar;
      if (parseOptionalScalarExpr(parser, value, scalar)) return mlir::failure();
      if (scalar) {
        auto type = mlir::RankedTensorType::get({}, b.getF32Type());
        value = mlir::DenseElementsAttr::get(type, static_cast<float>(*scalar));
      }
    } else {
      // A bare named dim is its value; only the names in scope are taken, so a keyword
      // attribute (`i32`, `true`) is parsed by MLIR as before.
      llvm::SmallVector<std::string> names = ParseScope::dimNameList();
      llvm::SmallVector<llvm::StringRef> allowed(names.begin(), names.end());
      llvm::StringRef dim;
      if (!allowed.empty() && succeeded(parser.parseOptionalKeyword(&dim, allowed)))
        value = b.getI64IntegerAttr(*ParseScope::lookupDim(dim));
      else if (parser.parseAttribute(value))
        return mlir::failure();
    }
    attrs.append(name, value);
  } while (succeeded(parser.parseOptionalComma()));
  return parser.parseRBrace();
}

}  // namespace

mlir::ParseResult parseOperandsAttrsTypes(mlir::OpAsmParser &parser, mlir::OperationState &result,
                                          llvm::SmallVectorImpl<mlir::Type> &resultTypes) {
  llvm::SmallVector<mlir::OpAsmParser::UnresolvedOperand> operands;
  if (parser.parseOperandList(operands) || parseAttrDictWithDims(parser, result.attributes))
    return mlir::failure();
  llvm::SmallVector<mlir::Type> operandTypes;
  llvm::SMLoc typesLoc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalColon())) {
    if (parser.parseTypeList(operandTypes)) return mlir::failure();
    if (succeeded(parser.parseOptionalArrow()) && parser.parseTypeList(resultTypes))
      return mlir::failure();
    if (operandTypes.size() != operands.size())
      return parser.emitError(typesLoc) << "expected " << operands.size()
                                        << " operand types, found " << operandTypes.size();
  } else {
    for (const auto &operand : operands) {
      mlir::Type type = ParseScope::lookup(operand.name, operand.number);
      if (!type)
        return parser.emitError(operand.location)
               << "use of undefined value '" << operand.name
               << "': in a model, values are used after the step op defining them; elsewhere "
                  "(or after an op in generic form) write the operand types after ':'";
      operandTypes.push_back(type);
    }
  }
  return parser.resolveOperands(operands, operandTypes, typesLoc, result.operands);
}

bool isInsideModel(mlir::Operation *op) { return op->getParentOfType<ModelOp>() != nullptr; }

void printOperandsAttrsTypes(mlir::OpAsmPrinter &printer, mlir::Operation *op,
                             llvm::ArrayRef<llvm::StringRef> elidedAttrs) {
  if (op->getNumOperands() != 0) {
    printer << ' ';
    printer.printOperands(op->getOperands());
  }
  // Attributes holding their default value are left out, as ODS-generated printers do.
  llvm::SmallVector<llvm::StringRef> elided(elidedAttrs);
  mlir::NamedAttrList defaults;
  op->getName().populateDefaultAttrs(defaults);
  for (mlir::NamedAttribute attr : op->getAttrs())
    if (defaults.get(attr.getName()) == attr.getValue()) elided.push_back(attr.getName());
  printer.printOptionalAttrDict(op->getAttrs(), elided);
  if (isInsideModel(op) || op->getNumOperands() == 0) return;
  printer << " : ";
  llvm::interleaveComma(op->getOperandTypes(), printer);
  if (op->getNumResults() == 0) return;
  printer << " -> ";
  llvm::interleaveComma(op->getResultTypes(), printer);
}

namespace {

// Recursive descent over `sum := product (+ product)*`, `product := term ((* | div) term)*`,
// `term := integer | dim | ( sum )`; each rule also appends itself to `program` (postfix) when
// one is given, so the expression can be evaluated again with other dim values.
mlir::ParseResult parseDimSum(mlir::OpAsmParser &parser, int64_t &value, DimProgram *program);

mlir::ParseResult parseDimTerm(mlir::OpAsmParser &parser, int64_t &value, DimProgram *program) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalLParen()))
    return mlir::failure(parseDimSum(parser, value, program) || parser.parseRParen());
  mlir::OptionalParseResult integer = parser.parseOptionalInteger(value);
  if (integer.has_value()) {
    if (failed(*integer)) return mlir::failure();
    if (value > kMaxElements) return parser.emitError(loc) << "dimension " << value << " exceeds 2^48";
    if (program) program->push_back({DimStep::kInteger, value, ""});
    return mlir::success();
  }
  llvm::StringRef name;
  if (failed(parser.parseOptionalKeyword(&name)))
    return parser.emitError(loc) << "expected a dimension: an integer or a named dim ("
                                 << ParseScope::dimNames() << ")";
  std::optional<int64_t> dim = ParseScope::lookupDim(name);
  if (!dim)
    return parser.emitError(loc) << "unknown dim '" << name << "'; the model declares "
                                 << ParseScope::dimNames();
  value = *dim;
  if (program) program->push_back({DimStep::kDim, 0, name.str()});
  return mlir::success();
}

mlir::ParseResult parseDimProduct(mlir::OpAsmParser &parser, int64_t &value, DimProgram *program) {
  llvm::SMLoc start = parser.getCurrentLocation();
  if (parseDimTerm(parser, value, program)) return mlir::failure();
  while (true) {
    bool divide;
    if (succeeded(parser.parseOptionalStar())) divide = false;
    else if (succeeded(parser.parseOptionalKeyword("div"))) divide = true;
    else return mlir::success();
    llvm::SMLoc loc = parser.getCurrentLocation();
    int64_t rhs;
    if (parseDimTerm(parser, rhs, program)) return mlir::failure();
    if (divide) {
      if (rhs <= 0 || value % rhs != 0)
        return parser.emitError(start) << "dimension expression divides " << value << " by " << rhs
                                       << ", which does not divide it evenly";
      value /= rhs;
    } else if (llvm::MulOverflow(value, rhs, value) || value > kMaxElements) {
      return parser.emitError(loc) << "dimension expression exceeds 2^48";
    }
    if (program) program->push_back({divide ? DimStep::kDivide : DimStep::kMultiply, 0, ""});
  }
}

mlir::ParseResult parseDimSum(mlir::OpAsmParser &parser, int64_t &value, DimProgram *program) {
  if (parseDimProduct(parser, value, program)) return mlir::failure();
  while (succeeded(parser.parseOptionalPlus())) {
    llvm::SMLoc loc = parser.getCurrentLocation();
    int64_t rhs;
    if (parseDimProduct(parser, rhs, program)) return mlir::failure();
    if (llvm::AddOverflow(value, rhs, value) || value > kMaxElements)
      return parser.emitError(loc) << "dimension expression exceeds 2^48";
    if (program) program->push_back({DimStep::kAdd, 0, ""});
  }
  return mlir::success();
}

}  // namespace

mlir::ParseResult parseDimExpr(mlir::OpAsmParser &parser, int64_t &value, DimProgram *program) {
  return parseDimSum(parser, value, program);
}

std::optional<int64_t> evaluateDimProgram(const DimProgram &program,
                                          const std::map<std::string, int64_t> &dims,
                                          std::string *why) {
  auto fail = [&](std::string reason) -> std::optional<int64_t> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  llvm::SmallVector<int64_t> stack;
  for (const DimStep &step : program) {
    if (step.kind == DimStep::kInteger || step.kind == DimStep::kDim) {
      auto it = dims.find(step.name);
      if (step.kind == DimStep::kDim && it == dims.end())
        return fail("it names dim '" + step.name + "', which is not declared before it");
      stack.push_back(step.kind == DimStep::kInteger ? step.value : it->second);
      continue;
    }
    if (stack.size() < 2) return fail("malformed expression");
    int64_t rhs = stack.pop_back_val(), &lhs = stack.back();
    if (step.kind == DimStep::kDivide) {
      if (rhs <= 0 || lhs % rhs != 0)
        return fail("it divides " + std::to_string(lhs) + " by " + std::to_string(rhs) +
                    ", which does not divide it evenly");
      lhs /= rhs;
      continue;
    }
    bool overflow = step.kind == DimStep::kMultiply ? llvm::MulOverflow(lhs, rhs, lhs)
                                                    : llvm::AddOverflow(lhs, rhs, lhs);
    if (overflow || lhs > kMaxElements) return fail("it exceeds 2^48");
  }
  if (stack.size() != 1) return fail("malformed expression");
  return stack.front();
}

namespace {

// `sum := product (+ product)*`, `product := term (* term)*`,
// `term := number | dim | sqrt(sum) | rsqrt(sum) | ( sum )`, evaluated as parsed (real scalars
// are never re-evaluated: they sit in ops of the body, parsed after the dims are final).
mlir::ParseResult parseScalarSum(mlir::OpAsmParser &parser, double &value);

mlir::ParseResult parseScalarTerm(mlir::OpAsmParser &parser, double &value) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalLParen()))
    return mlir::failure(parseScalarSum(parser, value) || parser.parseRParen());
  llvm::StringRef name;
  if (succeeded(parser.parseOptionalKeyword(&name))) {
    if (name == "sqrt" || name == "rsqrt") {
      llvm::SMLoc argLoc = parser.getCurrentLocation();
      double arg;
      if (parser.parseLParen() || parseScalarSum(parser, arg) || parser.parseRParen())
        return mlir::failure();
      if (!(arg > 0))
        return parser.emitError(argLoc) << name << " expects a positive value, found " << arg;
      value = name == "sqrt" ? std::sqrt(arg) : 1.0 / std::sqrt(arg);
      return mlir::success();
    }
    std::optional<int64_t> dim = ParseScope::lookupDim(name);
    if (!dim)
      return parser.emitError(loc) << "unknown name '" << name
                                   << "' in a number: expected sqrt(...), rsqrt(...) or a dim ("
                                   << ParseScope::dimNames() << ")";
    value = static_cast<double>(*dim);
    return mlir::success();
  }
  int64_t integer;
  mlir::OptionalParseResult isInteger = parser.parseOptionalInteger(integer);
  if (isInteger.has_value()) {
    value = static_cast<double>(integer);
    return mlir::failure(failed(*isInteger));
  }
  return mlir::failure(failed(parser.parseFloat(value)));
}

// The rest of a product whose first term is already in `value`.
mlir::ParseResult parseScalarProductRest(mlir::OpAsmParser &parser, double &value) {
  while (succeeded(parser.parseOptionalStar())) {
    double rhs;
    if (parseScalarTerm(parser, rhs)) return mlir::failure();
    value *= rhs;
  }
  return mlir::success();
}

mlir::ParseResult parseScalarProduct(mlir::OpAsmParser &parser, double &value) {
  return mlir::failure(parseScalarTerm(parser, value) || parseScalarProductRest(parser, value));
}

// The rest of a sum whose first term is already in `value`.
mlir::ParseResult parseScalarSumRest(mlir::OpAsmParser &parser, double &value) {
  if (parseScalarProductRest(parser, value)) return mlir::failure();
  while (succeeded(parser.parseOptionalPlus())) {
    double rhs;
    if (parseScalarProduct(parser, rhs)) return mlir::failure();
    value += rhs;
  }
  return mlir::success();
}

mlir::ParseResult parseScalarSum(mlir::OpAsmParser &parser, double &value) {
  return mlir::failure(parseScalarTerm(parser, value) || parseScalarSumRest(parser, value));
}

}  // namespace

mlir::ParseResult parseOptionalScalarExpr(mlir::OpAsmParser &parser, mlir::Attribute &attr,
                                          std::optional<double> &scalar) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  scalar.reset();
  mlir::OptionalParseResult literal = parser.parseOptionalAttribute(attr);
  double value;
  if (literal.has_value()) {
    if (failed(*literal)) return mlir::failure();
    // A number followed by an operator starts an expression (`0.02 * rsqrt(2 * L)`).
    auto number = llvm::dyn_cast<mlir::FloatAttr>(attr);
    auto integer = llvm::dyn_cast<mlir::IntegerAttr>(attr);
    if (!number && (!integer || llvm::isa<mlir::BoolAttr>(attr))) return mlir::success();
    value = number ? number.getValueAsDouble() : static_cast<double>(integer.getInt());
    bool star = succeeded(parser.parseOptionalStar());
    bool plus = !star && succeeded(parser.parseOptionalPlus());
    if (!star && !plus) return mlir::success();
    double rhs;
    if (star) {
      if (parseScalarTerm(parser, rhs)) return mlir::failure();
      value *= rhs;
      if (parseScalarSumRest(parser, value)) return mlir::failure();
    } else {
      if (parseScalarSum(parser, rhs)) return mlir::failure();
      value += rhs;
    }
  } else if (parseScalarSum(parser, value)) {
    return mlir::failure();
  }
  if (!std::isfinite(value)) return parser.emitError(loc) << "the expression is not finite";
  scalar = value;
  return mlir::success();
}


mlir::ParseResult parseShapeAndDtype(mlir::OpAsmParser &parser, mlir::RankedTensorType &type) {
  llvm::SmallVector<int64_t> shape;
  if (parser.parseCommaSeparatedList(mlir::AsmParser::Delimiter::Square, [&]() -> mlir::ParseResult {
        llvm::SMLoc loc = parser.getCurrentLocation();
        int64_t dim;
        if (parseDimExpr(parser, dim)) return mlir::failure();
        if (dim <= 0)
          return parser.emitError(loc) << "expected a positive dimension size, found " << dim;
        shape.push_back(dim);
        return mlir::success();
      }))
    return mlir::failure();
  if (!checkedNumElements(shape))
    return parser.emitError(parser.getCurrentLocation())
           << "the shape has more than 2^48 elements";
  llvm::SMLoc dtypeLoc = parser.getCurrentLocation();
  mlir::Type dtype;
  if (parser.parseType(dtype)) return mlir::failure();
  if (!dtype.isF32() && !dtype.isBF16() && !dtype.isF16() && !dtype.isF64() &&
      !dtype.isSignlessInteger(32) && !dtype.isSignlessInteger(64))
    return parser.emitError(dtypeLoc)
           << "expected a dtype (f32, bf16, f16, f64, i32 or i64), found " << dtype;
  type = mlir::RankedTensorType::get(shape, dtype);
  return mlir::success();
}

void printShapeAndDtype(mlir::OpAsmPrinter &printer, mlir::RankedTensorType type) {
  printer << "[";
  llvm::interleaveComma(type.getShape(), printer);
  printer << "] " << type.getElementType();
}

}  // namespace stepc::step
