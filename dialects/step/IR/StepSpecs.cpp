//===- StepSpecs.cpp - schemas of initialisers, sources and config entries ===//
#include "dialects/step/IR/StepSpecs.h"

#include "dialects/step/IR/StepAsm.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/Builders.h"

namespace stepc::step {
namespace {

enum class ValueKind { Float, Int, Bool, StringList };

struct KeySchema {
  const char *name;
  ValueKind kind;
  // Empty: the key is required. Otherwise the default, as written in a model file.
  const char *defaultValue;
};

struct KindSchema {
  const char *name;
  const char *summary;
  std::vector<KeySchema> keys;
};

constexpr const char *kRequired = "";

const std::vector<KindSchema> &schemas(SpecFamily family) {
  static const std::vector<KindSchema> init = {
      {"zeros", "all zeros", {{"gain", ValueKind::Float, "1.0"}}},
      {"ones", "all ones (times gain)", {{"gain", ValueKind::Float, "1.0"}}},
      {"constant", "a constant value (times gain)",
       {{"value", ValueKind::Float, kRequired}, {"gain", ValueKind::Float, "1.0"}}},
      {"normal", "gain * N(mean, std^2)",
       {{"std", ValueKind::Float, kRequired},
        {"mean", ValueKind::Float, "0.0"},
        {"gain", ValueKind::Float, "1.0"}}},
      {"uniform", "gain * U(a, b)",
       {{"a", ValueKind::Float, kRequired},
        {"b", ValueKind::Float, kRequired},
        {"gain", ValueKind::Float, "1.0"}}},
      {"orthogonal", "gain * a (semi-)orthogonal matrix per trailing 2-D slice",
       {{"gain", ValueKind::Float, "1.0"}}},
  };
  static const std::vector<KindSchema> source = {
      {"token_stream", "windows of a token stream: (tokens, next-token targets)",
       {{"vocab", ValueKind::Int, kRequired}}},
      {"classification", "a built-in generated classification set: (features, labels)",
       {{"classes", ValueKind::Int, kRequired}}},
  };
  static const std::vector<KindSchema> optimizer = {
      {"sgd", "SGD with momentum",
       {{"lr", ValueKind::Float, kRequired},
        {"momentum", ValueKind::Float, "0.0"},
        {"nesterov", ValueKind::Bool, "false"},
        {"weight_decay", ValueKind::Float, "0.0"}}},
      {"adam", "Adam",
       {{"lr", ValueKind::Float, kRequired},
        {"beta1", ValueKind::Float, "0.9"},
        {"beta2", ValueKind::Float, "0.999"},
        {"eps", ValueKind::Float, "1.0e-8"}}},
      {"adamw", "AdamW with decoupled weight decay; no_decay lists name patterns (glob)",
       {{"lr", ValueKind::Float, kRequired},
        {"beta1", ValueKind::Float, "0.9"},
        {"beta2", ValueKind::Float, "0.999"},
        {"eps", ValueKind::Float, "1.0e-8"},
        {"weight_decay", ValueKind::Float, "0.01"},
        {"no_decay", ValueKind::StringList, "[]"}}},
  };
  static const std::vector<KindSchema> schedule = {
      {"constant", "the optimizer's lr throughout", {}},
      {"warmup_cosine", "linear warmup to lr, then cosine decay to min_lr at total",
       {{"warmup", ValueKind::Int, kRequired},
        {"total", ValueKind::Int, kRequired},
        {"min_lr", ValueKind::Float, "0.0"}}},
      {"one_cycle", "start_lr rising to lr over warmup, then annealing to final_lr at total",
       {{"warmup", ValueKind::Int, kRequired},
        {"total", ValueKind::Int, kRequired},
        {"start_lr", ValueKind::Float, kRequired},
        {"final_lr", ValueKind::Float, kRequired}}},
  };
  static const std::vector<KindSchema> clip = {
      {"none", "no clipping", {}},
      {"global_norm", "scale all gradients by min(1, max_norm / ||g||)",
       {{"max_norm", ValueKind::Float, kRequired}}},
      {"agc", "adaptive, per column: min(lambda * ||p|| / ||g||, 1)",
       {{"lambda", ValueKind::Float, "0.01"},
        {"eps_param", ValueKind::Float, "1.0e-3"},
        {"eps_grad", ValueKind::Float, "1.0e-6"}}},
  };
  static const std::vector<KindSchema> sam = {
      {"none", "no SAM", {}},
      {"sam", "sharpness-aware minimisation: two passes per step",
       {{"rho", ValueKind::Float, "0.05"},
        {"adaptive", ValueKind::Bool, "false"},
        {"eta", ValueKind::Float, "0.01"},
        {"next_batch", ValueKind::Bool, "false"}}},
  };
  switch (family) {
    case SpecFamily::Init: return init;
    case SpecFamily::Source: return source;
    case SpecFamily::Optimizer: return optimizer;
    case SpecFamily::Schedule: return schedule;
    case SpecFamily::Clip: return clip;
    case SpecFamily::Sam: return sam;
  }
  llvm_unreachable("unknown spec family");
}

const KindSchema *findKind(SpecFamily family, llvm::StringRef kind) {
  for (const KindSchema &schema : schemas(family))
    if (kind == schema.name) return &schema;
  return nullptr;
}

const KeySchema *findKey(const KindSchema &kind, llvm::StringRef key) {
  for (const KeySchema &schema : kind.keys)
    if (key == schema.name) return &schema;
  return nullptr;
}

// Every schema lookup by kind name alone: the key names are unique enough across families that
// typed accessors do not need the family.
const KeySchema *findKeyAnyFamily(llvm::StringRef kind, llvm::StringRef key) {
  for (SpecFamily family : {SpecFamily::Init, SpecFamily::Source, SpecFamily::Optimizer,
                            SpecFamily::Schedule, SpecFamily::Clip, SpecFamily::Sam})
    if (const KindSchema *schema = findKind(family, kind))
      if (const KeySchema *k = findKey(*schema, key)) return k;
  return nullptr;
}

const char *valueKindName(ValueKind kind) {
  switch (kind) {
    case ValueKind::Float: return "a number";
    case ValueKind::Int: return "an integer";
    case ValueKind::Bool: return "true or false";
    case ValueKind::StringList: return "a list of strings";
  }
  llvm_unreachable("unknown value kind");
}

bool valueMatches(mlir::Attribute value, ValueKind kind) {
  switch (kind) {
    case ValueKind::Float:
      return llvm::isa<mlir::FloatAttr>(value) ||
             (llvm::isa<mlir::IntegerAttr>(value) && !llvm::isa<mlir::BoolAttr>(value));
    case ValueKind::Int:
      return llvm::isa<mlir::IntegerAttr>(value) && !llvm::isa<mlir::BoolAttr>(value);
    case ValueKind::Bool: return llvm::isa<mlir::BoolAttr>(value);
    case ValueKind::StringList: {
      auto array = llvm::dyn_cast<mlir::ArrayAttr>(value);
      return array && llvm::all_of(array, [](mlir::Attribute a) {
               return llvm::isa<mlir::StringAttr>(a);
             });
    }
  }
  return false;
}

std::string kindNames(SpecFamily family) {
  std::string out;
  for (const KindSchema &schema : schemas(family)) {
    if (!out.empty()) out += ", ";
    out += schema.name;
  }
  return out;
}

std::string keyNames(const KindSchema &kind) {
  if (kind.keys.empty()) return "none";
  std::string out;
  for (const KeySchema &key : kind.keys) {
    if (!out.empty()) out += ", ";
    out += key.name;
  }
  return out;
}

mlir::Attribute parseDefault(mlir::MLIRContext *ctx, const KeySchema &key) {
  mlir::Builder b(ctx);
  llvm::StringRef text = key.defaultValue;
  switch (key.kind) {
    case ValueKind::Float: return b.getF64FloatAttr(std::stod(text.str()));
    case ValueKind::Int: return b.getI64IntegerAttr(std::stoll(text.str()));
    case ValueKind::Bool: return b.getBoolAttr(text == "true");
    case ValueKind::StringList: return b.getArrayAttr({});
  }
  return {};
}

mlir::Attribute lookupWithDefault(mlir::DictionaryAttr spec, llvm::StringRef key) {
  if (mlir::Attribute value = spec.get(key)) return value;
  const KeySchema *schema = findKeyAnyFamily(specKind(spec), key);
  assert(schema && *schema->defaultValue && "reading a key the schema does not default");
  return parseDefault(spec.getContext(), *schema);
}

}  // namespace

static std::string withArticle(llvm::StringRef noun) {
  bool vowel = !noun.empty() && llvm::StringRef("aeiouAEIOU").contains(noun.front());
  return ((vowel ? "an " : "a ") + noun).str();
}

llvm::StringRef specFamilyName(SpecFamily family) {
  switch (family) {
    case SpecFamily::Init: return "initialiser";
    case SpecFamily::Source: return "data source";
    case SpecFamily::Optimizer: return "optimizer";
    case SpecFamily::Schedule: return "LR schedule";
    case SpecFamily::Clip: return "gradient clipping";
    case SpecFamily::Sam: return "SAM setting";
  }
  llvm_unreachable("unknown spec family");
}

std::string describeSpecFamily(SpecFamily family) {
  std::string out;
  llvm::raw_string_ostream os(out);
  for (const KindSchema &schema : schemas(family)) {
    os << "  " << schema.name;
    if (!schema.keys.empty()) {
      os << "(";
      llvm::interleaveComma(schema.keys, os, [&](const KeySchema &key) {
        os << key.name;
        if (*key.defaultValue) os << " = " << key.defaultValue;
      });
      os << ")";
    }
    os << ": " << schema.summary << "\n";
  }
  return out;
}

mlir::ParseResult parseSpec(mlir::OpAsmParser &parser, SpecFamily family,
                            mlir::DictionaryAttr &result) {
  llvm::SMLoc kindLoc = parser.getCurrentLocation();
  std::string kindName;
  if (parser.parseOptionalKeywordOrString(&kindName))
    return parser.emitError(kindLoc) << "expected " << withArticle(specFamilyName(family)) << " (one of "
                                     << kindNames(family) << ")";
  const KindSchema *kind = findKind(family, kindName);
  if (!kind)
    return parser.emitError(kindLoc) << "unknown " << specFamilyName(family) << " '" << kindName
                                     << "'; expected one of " << kindNames(family);
  mlir::Builder &b = parser.getBuilder();
  llvm::SmallVector<mlir::NamedAttribute> entries;
  entries.push_back(b.getNamedAttr("kind", b.getStringAttr(kindName)));
  if (succeeded(parser.parseOptionalLParen()) && failed(parser.parseOptionalRParen())) {
    do {
      llvm::SMLoc keyLoc = parser.getCurrentLocation();
      std::string keyName;
      if (parser.parseKeywordOrString(&keyName)) return mlir::failure();
      const KeySchema *key = findKey(*kind, keyName);
      if (!key)
        return parser.emitError(keyLoc) << "'" << kindName << "' has no parameter '" << keyName
                                        << "'; expected one of: " << keyNames(*kind);
      if (llvm::any_of(entries, [&](auto &e) { return e.getName() == keyName; }))
        return parser.emitError(keyLoc) << "parameter '" << keyName << "' given twice";
      mlir::Attribute value;
      if (parser.parseEqual()) return mlir::failure();
      llvm::SMLoc valueLoc = parser.getCurrentLocation();
      // An integer parameter may also be a dim expression starting with a named dim
      // (`token_stream(vocab = V)`), so a model's configurations and --dim reach it.
      // A real parameter may be a scalar expression over the dims (`std = 0.02 * rsqrt(2 * L)`).
      if (key->kind == ValueKind::Float) {
        std::optional<double> scalar;
        if (parseOptionalScalarExpr(parser, value, scalar)) return mlir::failure();
        if (scalar) value = b.getF64FloatAttr(*scalar);
      } else if (mlir::OptionalParseResult literal = parser.parseOptionalAttribute(value);
                 literal.has_value()) {
        if (failed(*literal)) return mlir::failure();
      } else if (key->kind == ValueKind::Int) {
        int64_t integer;
        if (parseDimExpr(parser, integer)) return mlir::failure();
        value = b.getI64IntegerAttr(integer);
      } else if (parser.parseAttribute(value)) {
        return mlir::failure();
      }
      if (!valueMatches(value, key->kind))
        return parser.emitError(valueLoc) << "'" << kindName << "' parameter '" << keyName
                                          << "' expects " << valueKindName(key->kind)
                                          << ", found " << value;
      if (key->kind == ValueKind::Float && llvm::isa<mlir::IntegerAttr>(value))
        value = b.getF64FloatAttr(
            static_cast<double>(llvm::cast<mlir::IntegerAttr>(value).getInt()));
      entries.push_back(b.getNamedAttr(keyName, value));
    } while (succeeded(parser.parseOptionalComma()));
    if (parser.parseRParen()) return mlir::failure();
  }
  for (const KeySchema &key : kind->keys)
    if (!*key.defaultValue && !llvm::any_of(entries, [&](auto &e) { return e.getName() == key.name; }))
      return parser.emitError(kindLoc) << "'" << kindName << "' requires parameter '" << key.name
                                       << "' (" << valueKindName(key.kind) << ")";
  result = b.getDictionaryAttr(entries);
  return mlir::success();
}

void printSpec(mlir::OpAsmPrinter &printer, mlir::DictionaryAttr spec) {
  llvm::StringRef kind = specKind(spec);
  printer << kind;
  llvm::SmallVector<mlir::NamedAttribute> args;
  for (mlir::NamedAttribute entry : spec)
    if (entry.getName() != "kind") args.push_back(entry);
  if (args.empty()) return;
  printer << "(";
  llvm::interleaveComma(args, printer, [&](mlir::NamedAttribute entry) {
    printer << entry.getName().getValue() << " = ";
    printer.printAttributeWithoutType(entry.getValue());
  });
  printer << ")";
}

mlir::LogicalResult verifySpec(mlir::DictionaryAttr spec, SpecFamily family,
                               llvm::function_ref<mlir::InFlightDiagnostic()> emitError) {
  auto kindAttr = llvm::dyn_cast_or_null<mlir::StringAttr>(spec.get("kind"));
  if (!kindAttr) return emitError() << specFamilyName(family) << " has no 'kind'";
  const KindSchema *kind = findKind(family, kindAttr.getValue());
  if (!kind)
    return emitError() << "unknown " << specFamilyName(family) << " '" << kindAttr.getValue()
                       << "'; expected one of " << kindNames(family);
  for (mlir::NamedAttribute entry : spec) {
    if (entry.getName() == "kind") continue;
    const KeySchema *key = findKey(*kind, entry.getName());
    if (!key)
      return emitError() << "'" << kind->name << "' has no parameter '"
                         << entry.getName().getValue() << "'; expected one of: " << keyNames(*kind);
    if (!valueMatches(entry.getValue(), key->kind))
      return emitError() << "'" << kind->name << "' parameter '" << key->name << "' expects "
                         << valueKindName(key->kind) << ", found " << entry.getValue();
  }
  for (const KeySchema &key : kind->keys)
    if (!*key.defaultValue && !spec.get(key.name))
      return emitError() << "'" << kind->name << "' requires parameter '" << key.name << "'";
  return mlir::success();
}

llvm::StringRef specKind(mlir::DictionaryAttr spec) {
  return llvm::cast<mlir::StringAttr>(spec.get("kind")).getValue();
}

double specFloat(mlir::DictionaryAttr spec, llvm::StringRef key) {
  mlir::Attribute value = lookupWithDefault(spec, key);
  if (auto f = llvm::dyn_cast<mlir::FloatAttr>(value)) return f.getValueAsDouble();
  return static_cast<double>(llvm::cast<mlir::IntegerAttr>(value).getInt());
}

int64_t specInt(mlir::DictionaryAttr spec, llvm::StringRef key) {
  return llvm::cast<mlir::IntegerAttr>(lookupWithDefault(spec, key)).getInt();
}

bool specBool(mlir::DictionaryAttr spec, llvm::StringRef key) {
  return llvm::cast<mlir::BoolAttr>(lookupWithDefault(spec, key)).getValue();
}

}  // namespace stepc::step
