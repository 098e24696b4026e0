//===- StepOps.cpp - assembly and verifiers of `step` ops ----------------===//
//
// Structure ops (model, param, input, config, repeat) have their own syntax; every tensor op uses
// the shared form from StepAsm.cpp. Shape rules live in ShapeRules.cpp.
//
//===----------------------------------------------------------------------===//
#include "dialects/step/IR/ReversibleCoupling.h"
#include "dialects/step/IR/StepAsm.h"
#include "dialects/step/IR/StepDialect.h"
#include "dialects/step/IR/StepSpecs.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include "mlir/IR/Builders.h"

#define GET_OP_CLASSES
#include "dialects/step/IR/StepOps.cpp.inc"

namespace stepc::step {

const std::map<std::string, int64_t> &getDimOverrides();
const std::string &getModelConfig();

namespace {

// Inference reads operands by position: check their number first (ODS's verifier runs only
// once the op exists).
template <typename OpTy>
mlir::LogicalResult checkOperandCount(mlir::OpAsmParser &parser, llvm::SMLoc loc, size_t found) {
  using namespace mlir::OpTrait;
  auto expect = [&](size_t want, bool atLeast) -> mlir::LogicalResult {
    if (found == want || (atLeast && found > want)) return mlir::success();
    return parser.emitError(loc) << "expects "
                                 << (atLeast ? "at least " : "") << want << " operand"
                                 << (want == 1 ? "" : "s") << ", found " << found;
  };
  if constexpr (OpTy::template hasTrait<ZeroOperands>()) return expect(0, false);
  if constexpr (OpTy::template hasTrait<OneOperand>()) return expect(1, false);
  if constexpr (OpTy::template hasTrait<NOperands<2>::Impl>()) return expect(2, false);
  if constexpr (OpTy::template hasTrait<NOperands<3>::Impl>()) return expect(3, false);
  if constexpr (OpTy::template hasTrait<AtLeastNOperands<1>::Impl>()) return expect(1, true);
  if constexpr (OpTy::template hasTrait<AtLeastNOperands<2>::Impl>()) return expect(2, true);
  return mlir::success();
}

template <typename OpTy>
mlir::ParseResult parseTensorOp(mlir::OpAsmParser &parser, mlir::OperationState &result) {
  llvm::SmallVector<mlir::Type> resultTypes;
  if (parseOperandsAttrsTypes(parser, result, resultTypes) ||
      failed(checkOperandCount<OpTy>(parser, parser.getNameLoc(), result.operands.size())))
    return mlir::failure();
  if (resultTypes.empty()) {
    // Inference reads default-valued attributes, which are only filled in at op creation.
    result.name.populateDefaultAttrs(result.attributes);
    typename OpTy::Adaptor adaptor(result.operands,
                                   result.attributes.getDictionary(parser.getContext()));
    if (failed(OpTy::inferReturnTypes(parser.getContext(), result.location, adaptor,
                                      resultTypes)))
      return mlir::failure();
  }
  result.addTypes(resultTypes);
  bindResults(parser, resultTypes);
  return mlir::success();
}

}  // namespace

// Every tensor op shares one syntax.
#define STEP_TENSOR_OP_ASM(OP)                                                              \
  mlir::ParseResult OP::parse(mlir::OpAsmParser &parser, mlir::OperationState &result) {   \
    return parseTensorOp<OP>(parser, result);                                               \
  }                                                                                         \
  void OP::print(mlir::OpAsmPrinter &printer) { printOperandsAttrsTypes(printer, *this); }

STEP_TENSOR_OP_ASM(NegOp)
STEP_TENSOR_OP_ASM(AbsOp)
STEP_TENSOR_OP_ASM(ExpOp)
STEP_TENSOR_OP_ASM(LogOp)
STEP_TENSOR_OP_ASM(SqrtOp)
STEP_TENSOR_OP_ASM(RsqrtOp)
STEP_TENSOR_OP_ASM(TanhOp)
STEP_TENSOR_OP_ASM(SigmoidOp)
STEP_TENSOR_OP_ASM(ReluOp)
STEP_TENSOR_OP_ASM(SiluOp)
STEP_TENSOR_OP_ASM(ErfOp)
STEP_TENSOR_OP_ASM(SinOp)
STEP_TENSOR_OP_ASM(CosOp)
STEP_TENSOR_OP_ASM(EmbeddingGradOp)
STEP_TENSOR_OP_ASM(Conv1dGradInputOp)
STEP_TENSOR_OP_ASM(Conv1dGradWeightOp)
STEP_TENSOR_OP_ASM(GeluOp)
STEP_TENSOR_OP_ASM(LeakyReluOp)
STEP_TENSOR_OP_ASM(PowOp)
STEP_TENSOR_OP_ASM(AddOp)
STEP_TENSOR_OP_ASM(SubOp)
STEP_TENSOR_OP_ASM(MulOp)
STEP_TENSOR_OP_ASM(DivOp)
STEP_TENSOR_OP_ASM(MaxOp)
STEP_TENSOR_OP_ASM(MinOp)
STEP_TENSOR_OP_ASM(CompareOp)
STEP_TENSOR_OP_ASM(SelectOp)
STEP_TENSOR_OP_ASM(SumOp)
STEP_TENSOR_OP_ASM(MeanOp)
STEP_TENSOR_OP_ASM(ReduceMaxOp)
STEP_TENSOR_OP_ASM(MatmulOp)
STEP_TENSOR_OP_ASM(BatchMatmulOp)
STEP_TENSOR_OP_ASM(EmbeddingOp)
STEP_TENSOR_OP_ASM(Conv1dOp)
STEP_TENSOR_OP_ASM(CumsumOp)
STEP_TENSOR_OP_ASM(SoftmaxOp)
STEP_TENSOR_OP_ASM(LogSoftmaxOp)
STEP_TENSOR_OP_ASM(LayerNormOp)
STEP_TENSOR_OP_ASM(RmsNormOp)
STEP_TENSOR_OP_ASM(CrossEntropyOp)
STEP_TENSOR_OP_ASM(ReshapeOp)
STEP_TENSOR_OP_ASM(TransposeOp)
STEP_TENSOR_OP_ASM(BroadcastOp)
STEP_TENSOR_OP_ASM(SliceOp)
STEP_TENSOR_OP_ASM(SplitOp)
STEP_TENSOR_OP_ASM(ConcatOp)
STEP_TENSOR_OP_ASM(PadOp)
STEP_TENSOR_OP_ASM(CastOp)
STEP_TENSOR_OP_ASM(QuantizeOp)
STEP_TENSOR_OP_ASM(ExactScaleOp)
STEP_TENSOR_OP_ASM(ConstantOp)
STEP_TENSOR_OP_ASM(IotaOp)
STEP_TENSOR_OP_ASM(DropoutOp)
STEP_TENSOR_OP_ASM(JitterOp)
STEP_TENSOR_OP_ASM(TopKOp)
STEP_TENSOR_OP_ASM(RouteTokensOp)
STEP_TENSOR_OP_ASM(RouteExpertsOp)
STEP_TENSOR_OP_ASM(GatherRowsOp)
STEP_TENSOR_OP_ASM(AllReduceOp)
STEP_TENSOR_OP_ASM(RankShardOp)
STEP_TENSOR_OP_ASM(AllGatherOp)
STEP_TENSOR_OP_ASM(AllReduceStartOp)
STEP_TENSOR_OP_ASM(AllReduceWaitOp)
STEP_TENSOR_OP_ASM(LastMicroBatchOp)
STEP_TENSOR_OP_ASM(ReduceScatterStartOp)
STEP_TENSOR_OP_ASM(ReduceScatterWaitOp)
#undef STEP_TENSOR_OP_ASM

//===----------------------------------------------------------------------===//
// step.model
//===----------------------------------------------------------------------===//

mlir::ParseResult ModelOp::parse(mlir::OpAsmParser &parser, mlir::OperationState &result) {
  mlir::StringAttr name;
  if (parser.parseSymbolName(name, mlir::SymbolTable::getSymbolAttrName(), result.attributes))
    return mlir::failure();
  ParseScope scope;
  mlir::Builder &b = parser.getBuilder();
  llvm::SMLoc dimsLoc = parser.getCurrentLocation();
  // dims(NAME = VALUE, ...), then optionally configs(CONFIG = (NAME = VALUE, ...), ...): named
  // sets of dim values that make the same graph another size (the tests' tiny models). The
  // selected configuration (--config) replaces its dims' values, then --dim replaces any; the
  // parsed model holds the resulting dims and no configs, so a dump is that model alone. A
  // dim is bound as soon as it is declared (later dims may use it); once the configuration is
  // known, every dim is evaluated again in order from its parsed expression, so a dim declared
  // from others follows what the configuration or --dim set them to.
  struct DeclaredDim {
    std::string name;
    int64_t value;
    llvm::SMLoc loc;
    DimProgram expression;  // its value's expression, evaluated again once the overrides are known
  };
  llvm::SmallVector<DeclaredDim> declared;
  if (succeeded(parser.parseOptionalKeyword("dims"))) {
    if (parser.parseCommaSeparatedList(mlir::AsmParser::Delimiter::Paren, [&]() -> mlir::ParseResult {
          llvm::SMLoc loc = parser.getCurrentLocation();
          llvm::StringRef dimName;
          int64_t value;
          if (failed(parser.parseOptionalKeyword(&dimName)))
            return parser.emitError(loc) << "expected a dim name (an identifier such as B or depth)";
          DimProgram expression;
          if (parser.parseEqual() || parseDimExpr(parser, value, &expression))
            return mlir::failure();
          if (ParseScope::lookupDim(dimName))
            return parser.emitError(loc) << "dim '" << dimName << "' is declared twice";
          ParseScope::bindDim(dimName, value);
          declared.push_back({dimName.str(), value, loc, std::move(expression)});
          return mlir::success();
        }))
      return mlir::failure();
  }
  std::vector<std::string> configNames;
  std::map<std::string, std::pair<int64_t, llvm::SMLoc>> configValues;  // the selected one's
  if (succeeded(parser.parseOptionalKeyword("configs"))) {
    if (parser.parseCommaSeparatedList(mlir::AsmParser::Delimiter::Paren, [&]() -> mlir::ParseResult {
          llvm::SMLoc loc = parser.getCurrentLocation();
          llvm::StringRef configName;
          if (failed(parser.parseOptionalKeyword(&configName)))
            return parser.emitError(loc) << "expected a configuration name (such as tiny)";
          if (llvm::is_contained(configNames, configName))
            return parser.emitError(loc) << "configuration '" << configName
                                         << "' is declared twice";
          configNames.push_back(configName.str());
          bool selected = configName == getModelConfig();
          if (parser.parseEqual()) return mlir::failure();
          return parser.parseCommaSeparatedList(
              mlir::AsmParser::Delimiter::Paren, [&]() -> mlir::ParseResult {
                llvm::SMLoc dimLoc = parser.getCurrentLocation();
                llvm::StringRef dimName;
                int64_t value;
                if (failed(parser.parseOptionalKeyword(&dimName)))
                  return parser.emitError(dimLoc) << "expected a dim name";
                if (!llvm::any_of(declared, [&](const DeclaredDim &d) { return d.name == dimName; }))
                  return parser.emitError(dimLoc)
                         << "configuration '" << configName << "' sets dim '" << dimName
                         << "', which the model does not declare; it declares "
                         << ParseScope::dimNames();
                if (parser.parseEqual() || parseDimExpr(parser, value)) return mlir::failure();
                if (!selected) return mlir::success();
                if (!configValues.emplace(dimName.str(), std::make_pair(value, dimLoc)).second)
                  return parser.emitError(dimLoc) << "configuration '" << configName
                                                  << "' sets dim '" << dimName << "' twice";
                if (value <= 0)
                  return parser.emitError(dimLoc) << "configuration '" << configName << "' sets dim '"
                                                  << dimName << "' to " << value
                                                  << "; dims must be positive";
                return mlir::success();
              });
        }))
      return mlir::failure();
  }
  if (!getModelConfig().empty() && !llvm::is_contained(configNames, getModelConfig())) {
    std::string known;
    for (const std::string &c : configNames) known += (known.empty() ? "" : ", ") + c;
    return parser.emitError(dimsLoc) << "--config " << getModelConfig()
                                     << " names no configuration of this model; it declares "
                                     << (known.empty() ? std::string("none") : known);
  }
  llvm::SmallVector<mlir::NamedAttribute> dims;
  std::map<std::string, int64_t> finalValues;
  std::string why;
  auto overridesText = [&] {
    std::string text;
    if (!getModelConfig().empty()) text = "--config=" + getModelConfig();
    for (const auto &[name, value] : getDimOverrides())
      text += (text.empty() ? "--dim=" : " --dim=") + name + "=" + std::to_string(value);
    return text.empty() ? std::string("none") : text;
  };
  for (DeclaredDim &dim : declared) {
    if (auto it = getDimOverrides().find(dim.name); it != getDimOverrides().end())
      dim.value = it->second;
    else if (auto it = configValues.find(dim.name); it != configValues.end())
      dim.value = it->second.first;
    else if (std::optional<int64_t> v = evaluateDimProgram(dim.expression, finalValues, &why))
      dim.value = *v;
    else
      return parser.emitError(dim.loc) << "dim '" << dim.name << "' cannot follow the overrides ("
                                       << overridesText() << "): " << why;
    finalValues[dim.name] = dim.value;
    if (dim.value <= 0)
      return parser.emitError(dim.loc) << "dim '" << dim.name << "' must be positive, found "
                                       << dim.value;
    ParseScope::bindDim(dim.name, dim.value);
    dims.push_back(b.getNamedAttr(dim.name, b.getI64IntegerAttr(dim.value)));
  }
  if (!declared.empty()) result.addAttribute("dims", b.getDictionaryAttr(dims));
  // A configuration names the model it makes: @byte_lm_residual with --config=tiny is @byte_lm_residual_tiny (the
  // executable's default name, the checkpoints' fingerprint).
  if (!getModelConfig().empty())
    result.attributes.set(mlir::SymbolTable::getSymbolAttrName(),
                          b.getStringAttr(name.getValue() + "_" + getModelConfig()));
  for (const auto &[dimName, value] : getDimOverrides())
    if (!ParseScope::lookupDim(dimName))
      return parser.emitError(dimsLoc) << "--dim " << dimName << "=" << value
                                       << " names no dim of this model; it declares "
                                       << ParseScope::dimNames();
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes)) return mlir::failure();
  mlir::Region *body = result.addRegion();
  if (parser.parseRegion(*body, /*arguments=*/{})) return mlir::failure();
  if (body->empty()) body->emplaceBlock();
  return mlir::success();
}

void ModelOp::print(mlir::OpAsmPrinter &printer) {
  printer << ' ';
  printer.printSymbolName(getSymName());
  if (auto dims = getDimsAttr()) {
    printer << " dims(";
    llvm::interleaveComma(dims, printer, [&](mlir::NamedAttribute dim) {
      printer << dim.getName().getValue() << " = "
              << llvm::cast<mlir::IntegerAttr>(dim.getValue()).getInt();
    });
    printer << ")";
  }
  printer.printOptionalAttrDictWithKeyword((*this)->getAttrs(),
                                           {mlir::SymbolTable::getSymbolAttrName(), "dims"});
  printer << ' ';
  printer.printRegion(getBody(), /*printEntryBlockArgs=*/false, /*printBlockTerminators=*/false);
}

LossOp ModelOp::getLossOp() {
  for (mlir::Operation &op : getBody().front())
    if (auto loss = llvm::dyn_cast<LossOp>(op)) return loss;
  return {};
}

ConfigOp ModelOp::getConfigOp() {
  for (mlir::Operation &op : getBody().front())
    if (auto config = llvm::dyn_cast<ConfigOp>(op)) return config;
  return {};
}

mlir::LogicalResult ModelOp::verifyRegions() {
  LossOp loss;
  ConfigOp config;
  llvm::StringMap<mlir::Operation *> params, inputs;
  mlir::WalkResult walk = getBody().walk([&](mlir::Operation *op) -> mlir::WalkResult {
    if (!llvm::isa<StepDialect>(op->getDialect())) {
      op->emitOpError() << "is not a step op; a model body holds only step ops";
      return mlir::WalkResult::interrupt();
    }
    if (auto l = llvm::dyn_cast<LossOp>(op)) {
      if (loss) {
        (op->emitOpError() << "marks a second loss; a model has exactly one")
                .attachNote(loss.getLoc())
            << "the first step.loss is here";
        return mlir::WalkResult::interrupt();
      }
      loss = l;
    }
    if (auto c = llvm::dyn_cast<ConfigOp>(op)) {
      if (config) {
        (op->emitOpError() << "is a second training config; a model has at most one")
                .attachNote(config.getLoc())
            << "the first step.config is here";
        return mlir::WalkResult::interrupt();
      }
      config = c;
    }
    if (auto decl = llvm::dyn_cast<DeclOpInterface>(op)) {
      auto &seen = llvm::isa<ParamOp>(op) ? params : inputs;
      std::string name = decl.getDeclName();
      auto [it, inserted] = seen.try_emplace(name, op);
      if (!inserted) {
        (op->emitOpError() << "declares '" << name << "' again; names must be unique")
                .attachNote(it->second->getLoc())
            << "the first declaration of '" << name << "' is here";
        return mlir::WalkResult::interrupt();
      }
    }
    return mlir::WalkResult::advance();
  });
  if (walk.wasInterrupted()) return mlir::failure();
  if (!loss)
    return emitOpError() << "has no loss; mark the scalar training loss with `step.loss %value`";
  // Calls are inlined when the step is built: a call cycle would never end.
  llvm::DenseMap<mlir::Operation *, int> state;  // 1: on the DFS stack, 2: done
  std::function<mlir::LogicalResult(FuncOp)> visit = [&](FuncOp fn) -> mlir::LogicalResult {
    state[fn] = 1;
    mlir::WalkResult result = fn.walk([&](CallOp call) -> mlir::WalkResult {
      auto callee = mlir::SymbolTable::lookupNearestSymbolFrom<FuncOp>(call, call.getCalleeAttr());
      if (!callee) return mlir::WalkResult::advance();
      if (state.lookup(callee) == 1) {
        call.emitOpError() << "makes the call cycle through @" << callee.getSymName()
                           << " recursive; step functions cannot recurse";
        return mlir::WalkResult::interrupt();
      }
      if (state.lookup(callee) == 0 && failed(visit(callee))) return mlir::WalkResult::interrupt();
      return mlir::WalkResult::advance();
    });
    state[fn] = 2;
    return mlir::failure(result.wasInterrupted());
  };
  for (FuncOp fn : getBody().getOps<FuncOp>())
    if (state.lookup(fn) == 0 && failed(visit(fn))) return mlir::failure();
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// step.param
//===----------------------------------------------------------------------===//

mlir::ParseResult ParamOp::parse(mlir::OpAsmParser &parser, mlir::OperationState &result) {
  mlir::StringAttr name;
  mlir::RankedTensorType type;
  mlir::DictionaryAttr init;
  if (parser.parseAttribute(name, "name", result.attributes) ||
      parseShapeAndDtype(parser, type) || parser.parseEqual() ||
      parseSpec(parser, SpecFamily::Init, init) ||
      parser.parseOptionalAttrDict(result.attributes))
    return mlir::failure();
  result.addAttribute("type", mlir::TypeAttr::get(type));
  result.addAttribute("init", init);
  result.addTypes(type);
  bindResults(parser, {type});
  return mlir::success();
}

void ParamOp::print(mlir::OpAsmPrinter &printer) {
  printer << ' ';
  printer.printAttribute(getNameAttr());
  printer << ' ';
  printShapeAndDtype(printer, llvm::cast<mlir::RankedTensorType>(getType()));
  printer << " = ";
  printSpec(printer, getInit());
  printer.printOptionalAttrDict((*this)->getAttrs(), {"name", "type", "init"});
}

// The repeats around `op`, outermost first.
static llvm::SmallVector<RepeatOp> enclosingRepeats(mlir::Operation *op) {
  llvm::SmallVector<RepeatOp> repeats;
  for (auto r = op->getParentOfType<RepeatOp>(); r; r = r->getParentOfType<RepeatOp>())
    repeats.insert(repeats.begin(), r);
  return repeats;
}

mlir::RankedTensorType ParamOp::getStoredType() {
  auto declared = llvm::cast<mlir::RankedTensorType>(getType());
  llvm::SmallVector<int64_t> shape;
  for (RepeatOp r : enclosingRepeats(*this)) shape.push_back(r.getCount());
  shape.append(declared.getShape().begin(), declared.getShape().end());
  return mlir::RankedTensorType::get(shape, declared.getElementType());
}

std::string ParamOp::getDeclName() {
  std::string name;
  for (RepeatOp r : enclosingRepeats(*this)) name += (r.getName() + ".").str();
  return name + getName().str();
}

// Dumps name values after their declarations (`%w0`, `%bytes_targets`), for readability.
void ParamOp::getAsmResultNames(mlir::OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), getName());
}

void InputOp::getAsmResultNames(mlir::OpAsmSetValueNameFn setNameFn) {
  bool tokens = specKind(getSource()) == "token_stream";
  setNameFn(getResult(0), getName());
  if (getNumResults() > 1)
    setNameFn(getResult(1), (getName() + (tokens ? "_targets" : "_labels")).str());
}

mlir::RankedTensorType ParamOp::getDeclaredType() {
  return llvm::cast<mlir::RankedTensorType>(getType());
}

mlir::LogicalResult ParamOp::verify() {
  mlir::Operation *parent = (*this)->getParentOp();
  while (llvm::isa<RepeatOp>(parent)) parent = parent->getParentOp();
  if (!llvm::isa<ModelOp>(parent))
    return emitOpError() << "must be in a step.model or step.repeat body";
  if (getResult().getType() != getType())
    return emitOpError() << "result type " << getResult().getType()
                         << " differs from the declared type " << getType();
  if (failed(verifySpec(getInit(), SpecFamily::Init, [&] { return emitOpError(); })))
    return mlir::failure();
  if (specKind(getInit()) == "orthogonal" && getDeclaredType().getRank() < 2)
    return emitOpError() << "orthogonal initialisation needs a parameter of rank >= 2, found "
                         << getType();
  if (!llvm::isa<mlir::FloatType>(getDeclaredType().getElementType()))
    return emitOpError() << "expected a float parameter, found " << getType();
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// step.input
//===----------------------------------------------------------------------===//

namespace {

// The results an input source produces for a declared type.
mlir::FailureOr<llvm::SmallVector<mlir::Type>> inputResultTypes(
    mlir::RankedTensorType declared, mlir::DictionaryAttr source,
    llvm::function_ref<mlir::InFlightDiagnostic()> emitError) {
  llvm::StringRef kind = specKind(source);
  mlir::Type element = declared.getElementType();
  if (kind == "token_stream") {
    if (!element.isSignlessInteger(32) && !element.isSignlessInteger(64))
      return emitError() << "token_stream gives integer tokens: declare i32 or i64, found "
                         << element;
    if (declared.getRank() != 2)
      return emitError() << "token_stream gives windows [B, S]: declare rank 2, found rank "
                         << declared.getRank();
    return llvm::SmallVector<mlir::Type>{declared, declared};
  }
  if (!llvm::isa<mlir::FloatType>(element))
    return emitError() << "classification gives float features: declare a float dtype, found "
                       << element;
  if (declared.getRank() < 2)
    return emitError() << "classification gives features [B, ...]: declare rank >= 2, found rank "
                       << declared.getRank();
  auto labels = mlir::RankedTensorType::get({declared.getDimSize(0)},
                                            mlir::IntegerType::get(declared.getContext(), 32));
  return llvm::SmallVector<mlir::Type>{declared, labels};
}

}  // namespace

mlir::ParseResult InputOp::parse(mlir::OpAsmParser &parser, mlir::OperationState &result) {
  mlir::StringAttr name;
  mlir::RankedTensorType type;
  mlir::DictionaryAttr source;
  llvm::SMLoc loc = parser.getCurrentLocation();
  if (parser.parseAttribute(name, "name", result.attributes) ||
      parseShapeAndDtype(parser, type) || parser.parseEqual() ||
      parseSpec(parser, SpecFamily::Source, source) ||
      parser.parseOptionalAttrDict(result.attributes))
    return mlir::failure();
  auto types = inputResultTypes(type, source, [&] { return parser.emitError(loc); });
  if (failed(types)) return mlir::failure();
  if (parser.getNumResults() != types->size())
    return parser.emitError(loc) << "'" << specKind(source) << "' gives " << types->size()
                                 << " results (" << (specKind(source) == "token_stream"
                                                         ? "tokens, targets"
                                                         : "features, labels")
                                 << "), found " << parser.getNumResults() << " result names";
  result.addAttribute("type", mlir::TypeAttr::get(type));
  result.addAttribute("source", source);
  result.addTypes(*types);
  bindResults(parser, *types);
  return mlir::success();
}

void InputOp::print(mlir::OpAsmPrinter &printer) {
  printer << ' ';
  printer.printAttribute(getNameAttr());
  printer << ' ';
  printShapeAndDtype(printer, getDeclaredType());
  printer << " = ";
  printSpec(printer, getSource());
  printer.printOptionalAttrDict((*this)->getAttrs(), {"name", "type", "source"});
}

std::string InputOp::getDeclName() { return getName().str(); }

mlir::RankedTensorType InputOp::getDeclaredType() {
  return llvm::cast<mlir::RankedTensorType>(getType());
}

mlir::LogicalResult InputOp::verify() {
  if (!llvm::isa<ModelOp>((*this)->getParentOp()))
    return emitOpError() << "must be directly in a step.model body";
  if (failed(verifySpec(getSource(), SpecFamily::Source, [&] { return emitOpError(); })))
    return mlir::failure();
  auto types = inputResultTypes(getDeclaredType(), getSource(), [&] { return emitOpError(); });
  if (failed(types)) return mlir::failure();
  if (mlir::TypeRange(*types) != getResultTypes())
    return emitOpError() << "results do not match what '" << specKind(getSource())
                         << "' gives for the declared type " << getType();
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// step.loss, step.yield
//===----------------------------------------------------------------------===//

mlir::ParseResult LossOp::parse(mlir::OpAsmParser &parser, mlir::OperationState &result) {
  llvm::SmallVector<mlir::Type> resultTypes;
  return parseOperandsAttrsTypes(parser, result, resultTypes);
}

void LossOp::print(mlir::OpAsmPrinter &printer) { printOperandsAttrsTypes(printer, *this); }

mlir::LogicalResult LossOp::verify() {
  auto type = llvm::dyn_cast<mlir::RankedTensorType>(getLoss().getType());
  if (!type || type.getRank() != 0 || !llvm::isa<mlir::FloatType>(type.getElementType()))
    return emitOpError() << "expected a scalar float loss (rank 0, e.g. tensor<f32>), found "
                         << getLoss().getType()
                         << "; reduce it with step.mean or step.sum over all axes";
  return mlir::success();
}

mlir::ParseResult YieldOp::parse(mlir::OpAsmParser &parser, mlir::OperationState &result) {
  llvm::SmallVector<mlir::Type> resultTypes;
  return parseOperandsAttrsTypes(parser, result, resultTypes);
}

void YieldOp::print(mlir::OpAsmPrinter &printer) { printOperandsAttrsTypes(printer, *this); }

//===----------------------------------------------------------------------===//
// step.config
//===----------------------------------------------------------------------===//

namespace {
struct ConfigEntry {
  const char *key;
  std::optional<SpecFamily> family;  // nullopt: a plain attribute
};
constexpr ConfigEntry kConfigEntries[] = {
    {"optimizer", SpecFamily::Optimizer}, {"schedule", SpecFamily::Schedule},
    {"clip", SpecFamily::Clip},           {"sam", SpecFamily::Sam},
    {"micro_batches", std::nullopt},      {"precision", std::nullopt},
};
}  // namespace

mlir::ParseResult ConfigOp::parse(mlir::OpAsmParser &parser, mlir::OperationState &result) {
  mlir::Builder &b = parser.getBuilder();
  return parser.parseCommaSeparatedList(mlir::AsmParser::Delimiter::Braces, [&]() -> mlir::ParseResult {
    llvm::SMLoc loc = parser.getCurrentLocation();
    std::string key;
    if (parser.parseKeywordOrString(&key) || parser.parseEqual()) return mlir::failure();
    const ConfigEntry *entry = llvm::find_if(kConfigEntries, [&](const ConfigEntry &e) {
      return key == e.key;
    });
    if (entry == std::end(kConfigEntries))
      return parser.emitError(loc) << "unknown config entry '" << key
                                   << "'; expected optimizer, schedule, clip, sam, "
                                      "micro_batches or precision";
    if (result.attributes.get(key))
      return parser.emitError(loc) << "config entry '" << key << "' given twice";
    if (entry->family) {
      mlir::DictionaryAttr spec;
      if (parseSpec(parser, *entry->family, spec)) return mlir::failure();
      result.addAttribute(key, spec);
      return mlir::success();
    }
    llvm::SMLoc valueLoc = parser.getCurrentLocation();
    if (key == "micro_batches") {
      int64_t n;
      if (parser.parseInteger(n)) return mlir::failure();
      if (n < 1)
        return parser.emitError(valueLoc) << "micro_batches must be >= 1, found " << n;
      result.addAttribute(key, b.getI64IntegerAttr(n));
      return mlir::success();
    }
    mlir::Type precision;
    if (parser.parseType(precision)) return mlir::failure();
    if (!precision.isF32() && !precision.isBF16() && !precision.isF16())
      return parser.emitError(valueLoc) << "precision must be f32, bf16 or f16, found "
                                        << precision;
    result.addAttribute(key, mlir::TypeAttr::get(precision));
    return mlir::success();
  });
}

void ConfigOp::print(mlir::OpAsmPrinter &printer) {
  printer << " {";
  bool first = true;
  for (const ConfigEntry &entry : kConfigEntries) {
    mlir::Attribute value = (*this)->getAttr(entry.key);
    if (!value) continue;
    printer << (first ? "" : ",");
    first = false;
    printer.printNewline();
    printer << "  " << entry.key << " = ";
    if (entry.family)
      printSpec(printer, llvm::cast<mlir::DictionaryAttr>(value));
    else if (auto type = llvm::dyn_cast<mlir::TypeAttr>(value))
      printer << type.getValue();
    else
      printer << llvm::cast<mlir::IntegerAttr>(value).getInt();
  }
  if (!first) printer.printNewline();
  printer << "}";
}

mlir::LogicalResult ConfigOp::verify() {
  for (const ConfigEntry &entry : kConfigEntries) {
    if (!entry.family) continue;
    if (auto spec = (*this)->getAttrOfType<mlir::DictionaryAttr>(entry.key))
      if (failed(verifySpec(spec, *entry.family, [&] { return emitOpError(); })))
        return mlir::failure();
  }
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// step.repeat
//===----------------------------------------------------------------------===//

namespace {

// Parses `(%arg = %value [: type], ...)`, taking types from the ParseScope when not written.
mlir::ParseResult parseBindingList(mlir::OpAsmParser &parser,
                                   llvm::SmallVectorImpl<mlir::OpAsmParser::Argument> &args,
                                   llvm::SmallVectorImpl<mlir::OpAsmParser::UnresolvedOperand> &values,
                                   llvm::SmallVectorImpl<mlir::Type> &types) {
  return parser.parseCommaSeparatedList(
      mlir::AsmParser::Delimiter::Paren, [&]() -> mlir::ParseResult {
        mlir::OpAsmParser::Argument arg;
        mlir::OpAsmParser::UnresolvedOperand value;
        if (parser.parseArgument(arg) || parser.parseEqual() || parser.parseOperand(value))
          return mlir::failure();
        mlir::Type type;
        if (succeeded(parser.parseOptionalColon())) {
          if (parser.parseType(type)) return mlir::failure();
        } else if (!(type = ParseScope::lookup(value.name, value.number))) {
          return parser.emitError(value.location) << "use of undefined value '" << value.name << "'";
        }
        arg.type = type;
        args.push_back(arg);
        values.push_back(value);
        types.push_back(type);
        return mlir::success();
      });
}

void printBindingList(mlir::OpAsmPrinter &printer, mlir::ValueRange args, mlir::ValueRange values,
                      bool typed) {
  printer << "(";
  llvm::interleaveComma(llvm::zip(args, values), printer, [&](auto pair) {
    printer << std::get<0>(pair) << " = " << std::get<1>(pair);
    if (typed) printer << " : " << std::get<1>(pair).getType();
  });
  printer << ")";
}

}  // namespace

mlir::ParseResult RepeatOp::parse(mlir::OpAsmParser &parser, mlir::OperationState &result) {
  mlir::StringAttr name;
  int64_t count;
  if (parser.parseAttribute(name, "name", result.attributes)) return mlir::failure();
  llvm::SMLoc countLoc = parser.getCurrentLocation();
  if (parseDimExpr(parser, count)) return mlir::failure();
  if (count < 1) return parser.emitError(countLoc) << "repeat count must be >= 1, found " << count;
  mlir::Builder &b = parser.getBuilder();
  result.addAttribute("count", b.getI64IntegerAttr(count));

  llvm::SmallVector<mlir::OpAsmParser::Argument> args, xArgs;
  llvm::SmallVector<mlir::OpAsmParser::UnresolvedOperand> inits, xs;
  llvm::SmallVector<mlir::Type> initTypes, xTypes;
  if (parseBindingList(parser, args, inits, initTypes)) return mlir::failure();
  llvm::SMLoc xsLoc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalKeyword("over")) &&
      parseBindingList(parser, xArgs, xs, xTypes))
    return mlir::failure();
  // Each `over` value enters the body as one slice of its leading axis.
  for (auto [arg, type] : llvm::zip(xArgs, xTypes)) {
    auto stacked = llvm::dyn_cast<mlir::RankedTensorType>(type);
    if (!stacked || stacked.getRank() < 1 || stacked.getDimSize(0) != count)
      return parser.emitError(xsLoc) << "an `over` value must be stacked on a leading axis of size "
                                     << count << " (the repeat count), found " << type;
    arg.type = mlir::RankedTensorType::get(stacked.getShape().drop_front(),
                                           stacked.getElementType());
    args.push_back(arg);
  }
  if (succeeded(parser.parseOptionalKeyword("reverse")))
    result.addAttribute("reverse", b.getUnitAttr());
  if (succeeded(parser.parseOptionalKeyword("reversible")))
    result.addAttribute("reversible", b.getUnitAttr());
  // `momentum(beta = B)`: the body is a MomentumNet cell f reading the second carried stream;
  // the coupling is added below.
  std::optional<double> momentum;
  llvm::SMLoc momentumLoc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalKeyword("momentum"))) {
    double beta = 0;
    if (parser.parseLParen() || parser.parseKeyword("beta") || parser.parseEqual() ||
        parser.parseFloat(beta))
      return mlir::failure();
    // `, streams = f64`: the carried streams and their coupling in a wider float (see `streams`
    // in StepOps.td), the cell still in the streams' own type.
    if (succeeded(parser.parseOptionalComma())) {
      mlir::Type streams;
      if (parser.parseKeyword("streams") || parser.parseEqual()) return mlir::failure();
      if (succeeded(parser.parseOptionalKeyword("exact")))
        result.addAttribute("streams", b.getStringAttr("exact"));
      else if (parser.parseType(streams))
        return mlir::failure();
      else
        result.addAttribute("streams", mlir::TypeAttr::get(streams));
    }
    if (parser.parseRParen()) return mlir::failure();
    if (!(beta > 0 && beta < 1)) {
      char text[32];
      std::snprintf(text, sizeof text, "%g", beta);
      return parser.emitError(momentumLoc) << "momentum beta must be in (0, 1), found " << text;
    }
    if (inits.size() != 2)
      return parser.emitError(momentumLoc)
             << "a momentum repeat carries two streams (velocity, position), found " << inits.size();
    momentum = beta;
    result.addAttribute("reversible", b.getUnitAttr());
  }
  if (parser.resolveOperands(inits, initTypes, parser.getCurrentLocation(), result.operands) ||
      parser.resolveOperands(xs, xTypes, xsLoc, result.operands))
    return mlir::failure();
  result.addAttribute("operandSegmentSizes",
                      b.getDenseI32ArrayAttr({static_cast<int32_t>(inits.size()),
                                              static_cast<int32_t>(xs.size())}));
  // The body's `{` follows, so extra attributes need the `attributes` keyword.
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes)) return mlir::failure();

  mlir::Region *body = result.addRegion();
  {
    ParseScope scope;
    for (const auto &arg : args) ParseScope::bind(arg.ssaName.name.drop_front(), 0, arg.type);
    if (parser.parseRegion(*body, args)) return mlir::failure();
  }
  RepeatOp::ensureTerminator(*body, b, result.location);
  if (momentum) {
    // revlib's momentum_net, in the coordinates that need no beta^-i (models/byte_lm.mlir
    // derives it): a' = a + f(x), x' = beta * x + (1 - beta) * a'. The cell yields f(x).
    auto yield = llvm::cast<YieldOp>(body->front().getTerminator());
    mlir::Type stream = initTypes[0];
    if (initTypes[1] != stream || yield.getValues().size() != 1 ||
        yield.getValues()[0].getType() != stream)
      return parser.emitError(momentumLoc)
             << "a momentum repeat's two streams share one type and its cell yields one value of "
                "that type (f(x)), found streams " << initTypes[0] << ", " << initTypes[1] << " and "
             << yield.getValues().size() << " yielded values";
    mlir::OpBuilder ob(yield);
    mlir::Location loc = result.location;
    auto scalar = [&](double v) {
      auto type = mlir::RankedTensorType::get({}, llvm::cast<mlir::RankedTensorType>(stream).getElementType());
      return ob.create<ConstantOp>(loc, type,
                                   mlir::DenseElementsAttr::get(type, ob.getFloatAttr(type.getElementType(), v)))
          .getResult();
    };
    mlir::Block &block = body->front();
    mlir::Value a = block.getArgument(0), x = block.getArgument(1), f = yield.getValues()[0];
    mlir::Value beta = scalar(*momentum), rest = scalar(1.0 - *momentum);
    mlir::Value aNext = ob.create<AddOp>(loc, stream, a, f);
    mlir::Value keep = ob.create<MulOp>(loc, stream, x, beta);
    mlir::Value mix = ob.create<MulOp>(loc, stream, aNext, rest);
    mlir::Value xNext = ob.create<AddOp>(loc, stream, keep, mix);
    yield->setOperands({aNext, xNext});
  }
  // Results: the carried values, then every further yielded value stacked over iterations.
  llvm::SmallVector<mlir::Type> resultTypes(initTypes);
  auto yield = llvm::cast<YieldOp>(body->front().getTerminator());
  for (mlir::Value v : yield.getValues().drop_front(
           std::min(inits.size(), yield.getValues().size()))) {
    mlir::Type t = v.getType();
    auto slice = llvm::dyn_cast<mlir::RankedTensorType>(t);
    if (!slice) return parser.emitError(xsLoc) << "yielded values must be ranked tensors";
    llvm::SmallVector<int64_t> shape{count};
    shape.append(slice.getShape().begin(), slice.getShape().end());
    resultTypes.push_back(mlir::RankedTensorType::get(shape, slice.getElementType()));
  }
  result.addTypes(resultTypes);
  bindResults(parser, resultTypes);
  return mlir::success();
}

void RepeatOp::print(mlir::OpAsmPrinter &printer) {
  printer << ' ';
  printer.printAttribute(getNameAttr());
  printer << ' ' << getCount() << ' ';
  bool typed = !isInsideModel(*this);
  size_t numCarried = getInits().size();
  auto bodyArgs = getBody().getArguments();
  printBindingList(printer, bodyArgs.take_front(numCarried), getInits(), typed);
  if (!getXs().empty()) {
    printer << " over ";
    printBindingList(printer, bodyArgs.drop_front(numCarried), getXs(), typed);
  }
  if (getReverse()) printer << " reverse";
  if (getReversible()) printer << " reversible";
  printer.printOptionalAttrDictWithKeyword(
      (*this)->getAttrs(), {"name", "count", "reverse", "reversible", "operandSegmentSizes"});
  printer << ' ';
  printer.printRegion(getBody(), /*printEntryBlockArgs=*/false, /*printBlockTerminators=*/true);
}

mlir::LogicalResult RepeatOp::verifyRegions() {
  mlir::Block &body = getBody().front();
  size_t numCarried = getInits().size(), numXs = getXs().size();
  if (body.getNumArguments() != numCarried + numXs)
    return emitOpError() << "body has " << body.getNumArguments() << " arguments for "
                         << numCarried << " carried and " << numXs << " stacked values";
  auto yield = llvm::cast<YieldOp>(body.getTerminator());
  if (yield.getValues().size() < numCarried)
    return yield.emitOpError() << "yields " << yield.getValues().size() << " values; the repeat "
                               << "carries " << numCarried;
  if (getNumResults() != yield.getValues().size())
    return emitOpError() << "has " << getNumResults() << " results for "
                         << yield.getValues().size() << " yielded values";
  for (auto [i, init] : llvm::enumerate(getInits())) {
    mlir::Type arg = body.getArgument(i).getType(), res = getResult(i).getType();
    mlir::Type yielded = yield.getValues()[i].getType();
    if (arg != init.getType() || res != init.getType())
      return emitOpError() << "carried value #" << i << " changes type between the init ("
                           << init.getType() << ") and the body or result";
    if (yielded != init.getType())
      return yield.emitOpError() << "yields " << yielded << " for carried value #" << i
                                 << ", which enters the layer as " << init.getType()
                                 << "; a repeated layer must keep the shape";
  }
  auto stackedOf = [&](mlir::Type slice) {
    auto t = llvm::cast<mlir::RankedTensorType>(slice);
    llvm::SmallVector<int64_t> shape{static_cast<int64_t>(getCount())};
    shape.append(t.getShape().begin(), t.getShape().end());
    return mlir::RankedTensorType::get(shape, t.getElementType());
  };
  for (auto [i, x] : llvm::enumerate(getXs()))
    if (stackedOf(body.getArgument(numCarried + i).getType()) != x.getType())
      return emitOpError() << "stacked input #" << i << " has type " << x.getType()
                           << " but its body argument is "
                           << body.getArgument(numCarried + i).getType();
  for (size_t i = numCarried; i < getNumResults(); ++i)
    if (stackedOf(yield.getValues()[i].getType()) != getResult(i).getType())
      return emitOpError() << "stacked result #" << i - numCarried << " has type "
                           << getResult(i).getType() << " for yielded "
                           << yield.getValues()[i].getType();
  if (mlir::Attribute segment = (*this)->getAttr("segment")) {
    auto value = llvm::dyn_cast<mlir::IntegerAttr>(segment);
    if (!getReversible() || !value || value.getInt() < 0)
      return emitOpError() << "takes `segment` (the layers a reversible repeat rebuilds from one "
                              "stored input; 0: all of them) only when reversible, as an integer "
                              ">= 0, found "
                           << segment;
  }
  if (getReversible()) {
    std::string why;
    if (failed(deriveCouplingInverse(*this, why)))
      return emitOpError() << "is reversible, but its layer cannot be inverted: " << why;
  }
  if (auto exact = (*this)->getAttrOfType<mlir::StringAttr>("streams")) {
    if (exact.getValue() != "exact")
      return emitOpError() << "takes `streams` as a float type or \"exact\", found " << exact;
    return verifyExactStreams();
  }
  if (mlir::Attribute streams = (*this)->getAttr("streams")) {
    auto type = llvm::dyn_cast<mlir::TypeAttr>(streams);
    auto wide = type ? llvm::dyn_cast<mlir::FloatType>(type.getValue()) : mlir::FloatType();
    if (!wide)
      return emitOpError() << "takes `streams` (the float type its carried streams and their "
                              "coupling are held in) as a float type, found "
                           << streams;
    for (mlir::Value init : getInits()) {
      auto element = llvm::dyn_cast<mlir::FloatType>(
          llvm::cast<mlir::ShapedType>(init.getType()).getElementType());
      if (!element || element.getWidth() > wide.getWidth())
        return emitOpError() << "holds its carried streams in " << wide
                             << ", which must be a float type at least as wide as each of them, "
                                "found a carried "
                             << init.getType();
    }
    std::string why;  // (a reversible repeat's coupling was checked above)
    if (!getReversible() && failed(deriveCouplingInverse(*this, why)))
      return emitOpError() << "holds its streams in " << wide
                           << ", which needs each carried output to be a coupling x + g or "
                              "x * c + g, but: "
                           << why;
  }
  return mlir::success();
}

// `streams = "exact"` (ForwardClone writes the exact coupling): float streams of at most f64,
// each carried output a coupling, every scale a small ratio, and a depth whose information
// buffers stay below 2^53.
mlir::LogicalResult RepeatOp::verifyExactStreams() {
  if (!getStackedResults().empty())
    return emitOpError() << "holds exact streams, which needs a repeat without stacked results";
  for (mlir::Value init : getInits()) {
    auto element = llvm::dyn_cast<mlir::FloatType>(
        llvm::cast<mlir::ShapedType>(init.getType()).getElementType());
    if (!element || element.getWidth() > 64)
      return emitOpError() << "holds exact streams, which must be float tensors of at most f64, "
                              "found a carried "
                           << init.getType();
  }
  std::string why;
  auto coupling = deriveCouplingInverse(*this, why);
  if (failed(coupling))
    return emitOpError() << "holds exact streams, which needs each carried output to be a "
                            "coupling x + g or x * c + g, but: "
                         << why;
  for (const CouplingStep &form : *coupling) {
    if (!form.scale) continue;
    auto dense = llvm::cast<mlir::DenseElementsAttr>(
        form.scale.getDefiningOp<ConstantOp>().getValue());
    double c = llvm::cast<mlir::FloatAttr>(dense.getSplatValue<mlir::Attribute>()).getValueAsDouble();
    auto ratio = exactRatio(c);
    if (!ratio)
      return emitOpError() << "holds exact streams, which needs each coupling scale to be a "
                              "positive ratio num/den with den <= "
                           << kExactRatioMaxDen << "; carried value #" << form.slot
                           << " is scaled by " << c;
    double bits = exactBufferBits(ratio->first, ratio->second, getCount());
    if (bits > 53)
      return emitOpError() << "holds exact streams over " << getCount()
                           << " layers, but the information buffer of carried value #"
                           << form.slot << " (scaled by " << ratio->first << "/" << ratio->second
                           << ") would need " << static_cast<int>(std::ceil(bits))
                           << " bits, past f64's exact 2^53: use fewer layers or "
                              "`streams = f64`";
  }
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// step.custom_grad
//===----------------------------------------------------------------------===//

mlir::ParseResult CustomGradOp::parse(mlir::OpAsmParser &parser, mlir::OperationState &result) {
  llvm::SmallVector<mlir::OpAsmParser::Argument> args;
  llvm::SmallVector<mlir::OpAsmParser::UnresolvedOperand> inputs;
  llvm::SmallVector<mlir::Type> inputTypes;
  llvm::SMLoc loc = parser.getCurrentLocation();
  if (parseBindingList(parser, args, inputs, inputTypes) ||
      parser.resolveOperands(inputs, inputTypes, loc, result.operands) ||
      parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return mlir::failure();
  mlir::Region *forward = result.addRegion();
  {
    ParseScope scope;
    for (const auto &arg : args) ParseScope::bind(arg.ssaName.name.drop_front(), 0, arg.type);
    if (parser.parseRegion(*forward, args)) return mlir::failure();
  }
  if (forward->empty() || forward->front().empty() ||
      !llvm::isa<YieldOp>(forward->front().back()))
    return parser.emitError(loc) << "the forward region must end with step.yield";
  llvm::SmallVector<mlir::Type> resultTypes(forward->front().back().getOperandTypes());
  result.addTypes(resultTypes);
  bindResults(parser, resultTypes);

  // backward (%inputs..., %result_adjoints...) { ... step.yield %input_adjoints... }
  llvm::SmallVector<mlir::OpAsmParser::Argument> backArgs;
  llvm::SMLoc backLoc = parser.getCurrentLocation();
  if (parser.parseKeyword("backward") ||
      parser.parseArgumentList(backArgs, mlir::AsmParser::Delimiter::Paren))
    return mlir::failure();
  if (backArgs.size() != inputTypes.size() + resultTypes.size())
    return parser.emitError(backLoc) << "backward takes the " << inputTypes.size()
                                     << " inputs and the " << resultTypes.size()
                                     << " result adjoints, found " << backArgs.size()
                                     << " arguments";
  llvm::SmallVector<mlir::Type> backTypes(inputTypes);
  backTypes.append(resultTypes);
  mlir::Region *backward = result.addRegion();
  ParseScope scope;
  for (auto [arg, type] : llvm::zip(backArgs, backTypes)) {
    arg.type = type;
    ParseScope::bind(arg.ssaName.name.drop_front(), 0, type);
  }
  return parser.parseRegion(*backward, backArgs);
}

void CustomGradOp::print(mlir::OpAsmPrinter &printer) {
  printer << ' ';
  printBindingList(printer, getForward().getArguments(), getInputs(), !isInsideModel(*this));
  printer.printOptionalAttrDictWithKeyword((*this)->getAttrs());
  printer << ' ';
  printer.printRegion(getForward(), /*printEntryBlockArgs=*/false, /*printBlockTerminators=*/true);
  printer << " backward (";
  llvm::interleaveComma(getBackward().getArguments(), printer,
                        [&](mlir::BlockArgument arg) { printer << arg; });
  printer << ") ";
  printer.printRegion(getBackward(), /*printEntryBlockArgs=*/false, /*printBlockTerminators=*/true);
}

mlir::LogicalResult CustomGradOp::verifyRegions() {
  mlir::Block &fwd = getForward().front(), &bwd = getBackward().front();
  if (fwd.getArgumentTypes() != getInputs().getTypes())
    return emitOpError() << "forward arguments must match the inputs";
  auto fwdYield = llvm::dyn_cast<YieldOp>(fwd.getTerminator());
  if (!fwdYield || fwdYield.getValues().getTypes() != getResultTypes())
    return emitOpError() << "the forward region must yield the results (" << getResultTypes()
                         << ")";
  llvm::SmallVector<mlir::Type> backTypes(getInputs().getTypes());
  backTypes.append(getResultTypes().begin(), getResultTypes().end());
  if (bwd.getArgumentTypes() != mlir::TypeRange(backTypes))
    return emitOpError() << "backward takes the inputs and the result adjoints ("
                         << mlir::TypeRange(backTypes) << ")";
  auto bwdYield = llvm::dyn_cast<YieldOp>(bwd.getTerminator());
  if (!bwdYield || bwdYield.getValues().getTypes() != getInputs().getTypes())
    return (bwdYield ? bwdYield.emitOpError() : emitOpError())
           << "the backward region must yield one adjoint per input ("
           << getInputs().getTypes() << ")";
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// step.func, step.return, step.call
//===----------------------------------------------------------------------===//

mlir::ParseResult FuncOp::parse(mlir::OpAsmParser &parser, mlir::OperationState &result) {
  mlir::StringAttr name;
  if (parser.parseSymbolName(name, mlir::SymbolTable::getSymbolAttrName(), result.attributes))
    return mlir::failure();
  llvm::SmallVector<mlir::OpAsmParser::Argument> args;
  llvm::SmallVector<mlir::Type> inputs, results;
  if (parser.parseCommaSeparatedList(mlir::AsmParser::Delimiter::Paren,
                                     [&]() -> mlir::ParseResult {
                                       mlir::OpAsmParser::Argument arg;
                                       mlir::RankedTensorType type;
                                       if (parser.parseArgument(arg) || parser.parseColon() ||
                                           parseShapeAndDtype(parser, type))
                                         return mlir::failure();
                                       arg.type = type;
                                       args.push_back(arg);
                                       inputs.push_back(type);
                                       return mlir::success();
                                     }) ||
      parser.parseArrow())
    return mlir::failure();
  auto parseResult = [&]() -> mlir::ParseResult {
    mlir::RankedTensorType type;
    if (parseShapeAndDtype(parser, type)) return mlir::failure();
    results.push_back(type);
    return mlir::success();
  };
  if (succeeded(parser.parseOptionalLParen())) {
    if (failed(parser.parseOptionalRParen()) &&
        (parser.parseCommaSeparatedList(parseResult) || parser.parseRParen()))
      return mlir::failure();
  } else if (parseResult()) {
    return mlir::failure();
  }
  auto type = parser.getBuilder().getFunctionType(inputs, results);
  result.addAttribute("function_type", mlir::TypeAttr::get(type));
  ParseScope::bindFunction(name.getValue(), type);
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes)) return mlir::failure();
  ParseScope scope;
  for (const auto &arg : args) ParseScope::bind(arg.ssaName.name.drop_front(), 0, arg.type);
  return parser.parseRegion(*result.addRegion(), args);
}

void FuncOp::print(mlir::OpAsmPrinter &printer) {
  printer << ' ';
  printer.printSymbolName(getSymName());
  printer << "(";
  llvm::interleaveComma(getBody().getArguments(), printer, [&](mlir::BlockArgument arg) {
    printer << arg << ": ";
    printShapeAndDtype(printer, llvm::cast<mlir::RankedTensorType>(arg.getType()));
  });
  printer << ") -> (";
  llvm::interleaveComma(getFunctionType().getResults(), printer, [&](mlir::Type t) {
    printShapeAndDtype(printer, llvm::cast<mlir::RankedTensorType>(t));
  });
  printer << ")";
  printer.printOptionalAttrDictWithKeyword((*this)->getAttrs(),
                                           {mlir::SymbolTable::getSymbolAttrName(),
                                            "function_type"});
  printer << ' ';
  printer.printRegion(getBody(), /*printEntryBlockArgs=*/false, /*printBlockTerminators=*/true);
}

mlir::LogicalResult FuncOp::verifyRegions() {
  mlir::Block &body = getBody().front();
  mlir::FunctionType type = getFunctionType();
  if (body.getArgumentTypes() != type.getInputs())
    return emitOpError() << "block arguments do not match the signature " << type;
  auto ret = llvm::dyn_cast<ReturnOp>(body.getTerminator());
  if (!ret) return emitOpError() << "body must end with step.return";
  if (ret.getValues().getTypes() != type.getResults())
    return ret.emitOpError() << "returns " << ret.getValues().getTypes().size()
                             << " values of types (" << ret.getValues().getTypes()
                             << "); the signature of @" << getSymName() << " says ("
                             << type.getResults() << ")";
  return mlir::success();
}

mlir::ParseResult ReturnOp::parse(mlir::OpAsmParser &parser, mlir::OperationState &result) {
  llvm::SmallVector<mlir::Type> resultTypes;
  return parseOperandsAttrsTypes(parser, result, resultTypes);
}

void ReturnOp::print(mlir::OpAsmPrinter &printer) { printOperandsAttrsTypes(printer, *this); }

mlir::ParseResult CallOp::parse(mlir::OpAsmParser &parser, mlir::OperationState &result) {
  mlir::FlatSymbolRefAttr callee;
  llvm::SMLoc calleeLoc = parser.getCurrentLocation();
  if (parser.parseAttribute(callee, "callee", result.attributes)) return mlir::failure();
  mlir::FunctionType type = ParseScope::lookupFunction(callee.getValue());
  if (!type)
    return parser.emitError(calleeLoc) << "call of unknown function " << callee
                                       << "; declare it with step.func before its first call";
  llvm::SmallVector<mlir::OpAsmParser::UnresolvedOperand> args;
  llvm::SMLoc argsLoc = parser.getCurrentLocation();
  if (parser.parseOperandList(args, mlir::AsmParser::Delimiter::Paren) ||
      parser.parseOptionalAttrDict(result.attributes))
    return mlir::failure();
  if (args.size() != type.getNumInputs())
    return parser.emitError(argsLoc) << callee << " takes " << type.getNumInputs()
                                     << " arguments, found " << args.size();
  llvm::SmallVector<mlir::Type> argTypes;
  for (const auto &arg : args) {
    mlir::Type t = ParseScope::lookup(arg.name, arg.number);
    if (!t) return parser.emitError(arg.location) << "use of undefined value '" << arg.name << "'";
    argTypes.push_back(t);
  }
  if (parser.resolveOperands(args, argTypes, argsLoc, result.operands)) return mlir::failure();
  result.addTypes(type.getResults());
  bindResults(parser, type.getResults());
  return mlir::success();
}

void CallOp::print(mlir::OpAsmPrinter &printer) {
  printer << ' ';
  printer.printAttributeWithoutType(getCalleeAttr());
  printer << "(";
  printer.printOperands(getArgs());
  printer << ")";
  printer.printOptionalAttrDict((*this)->getAttrs(), {"callee"});
}

mlir::LogicalResult CallOp::verify() {
  auto callee = mlir::SymbolTable::lookupNearestSymbolFrom<FuncOp>(*this, getCalleeAttr());
  if (!callee) return emitOpError() << "calls " << getCalleeAttr() << ", which is not a step.func of this model";
  mlir::FunctionType type = callee.getFunctionType();
  if (getArgs().getTypes() != type.getInputs())
    return emitOpError() << "passes (" << getArgs().getTypes() << ") to @" << callee.getSymName()
                         << ", which takes (" << type.getInputs() << ")";
  if (getResultTypes() != type.getResults())
    return emitOpError() << "result types (" << getResultTypes() << ") differ from @"
                         << callee.getSymName() << "'s (" << type.getResults() << ")";
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// step.dropout
//===----------------------------------------------------------------------===//

mlir::LogicalResult DropoutOp::verify() {
  double rate = getRate().convertToDouble();
  if (!(rate >= 0.0 && rate < 1.0))
    return emitOpError() << "expected 0 <= rate < 1, found " << rate;
  return mlir::success();
}

bool drawsRandomNumbers(mlir::Region &region) {
  return region
      .walk([](mlir::Operation *op) {
        if (llvm::isa<StochasticOpInterface>(op)) return mlir::WalkResult::interrupt();
        // A model's functions are inlined where they are called (step.func has no recursion:
        // its verifier rejects calls back into a caller).
        if (auto call = llvm::dyn_cast<CallOp>(op))
          if (auto callee = mlir::SymbolTable::lookupNearestSymbolFrom<FuncOp>(
                  call, call.getCalleeAttr());
              callee && drawsRandomNumbers(callee.getBody()))
            return mlir::WalkResult::interrupt();
        return mlir::WalkResult::advance();
      })
      .wasInterrupted();
}

//===----------------------------------------------------------------------===//
// step.jitter
//===----------------------------------------------------------------------===//

mlir::LogicalResult JitterOp::verify() {
  // eps < 1 keeps every factor positive, so the jitter never flips or zeroes a value.
  double eps = getEps().convertToDouble();
  if (!(eps >= 0.0 && eps < 1.0)) return emitOpError() << "expected 0 <= eps < 1, found " << eps;
  return mlir::success();
}

}  // namespace stepc::step
