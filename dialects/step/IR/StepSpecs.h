//===- StepSpecs.h - `kind(key = value, ...)` specifications ----*- C++ -*-===//
//
// Initialisers, data sources and training-config entries share one spelling,
// `kind(key = value, ...)`, stored as a DictionaryAttr with a `kind` entry. The schema table in
// StepSpecs.cpp says, per family, which kinds exist and which keys each takes, so parsing,
// verification and `stepc --help` all read the same facts.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_DIALECTS_STEP_IR_STEPSPECS_H
#define STEPC_DIALECTS_STEP_IR_STEPSPECS_H

#include <optional>
#include <string>

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"

namespace stepc::step {

enum class SpecFamily { Init, Source, Optimizer, Schedule, Clip, Sam };

/// "initialiser", "data source", "optimizer", ...
llvm::StringRef specFamilyName(SpecFamily family);

/// Parses `kind` or `kind(key = value, ...)` and checks it against the family's schema,
/// reporting errors at the offending token.
mlir::ParseResult parseSpec(mlir::OpAsmParser &parser, SpecFamily family,
                            mlir::DictionaryAttr &result);
void printSpec(mlir::OpAsmPrinter &printer, mlir::DictionaryAttr spec);

/// Checks a spec built any other way (generic syntax, C++) against the schema.
mlir::LogicalResult verifySpec(mlir::DictionaryAttr spec, SpecFamily family,
                               llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// A human-readable list of the kinds of a family and their keys, for --help and errors.
std::string describeSpecFamily(SpecFamily family);

/// Typed access with the schema's defaults applied (values were checked by verifySpec).
llvm::StringRef specKind(mlir::DictionaryAttr spec);
double specFloat(mlir::DictionaryAttr spec, llvm::StringRef key);
int64_t specInt(mlir::DictionaryAttr spec, llvm::StringRef key);
bool specBool(mlir::DictionaryAttr spec, llvm::StringRef key);

}  // namespace stepc::step

#endif  // STEPC_DIALECTS_STEP_IR_STEPSPECS_H
