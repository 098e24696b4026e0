//===- StepAttrs.td - attribute constraints of `step` ------*- tablegen -*-===//
//
// Attributes are builtin attributes spelled in the op's `{...}` dictionary, so model files stay
// plain MLIR. The constraints below give ODS-generated errors that name the expected form.
//
//===----------------------------------------------------------------------===//
#ifndef STEP_ATTRS_TD
#define STEP_ATTRS_TD

include "mlir/IR/CommonAttrConstraints.td"

// A signed 64-bit integer attribute read back as int64_t (MLIR's I64Attr returns uint64_t,
// which turns axis = -1 into 2^64 - 1 in arithmetic).
def Step_I64Attr : TypedSignlessIntegerAttrBase<I64, "int64_t", "64-bit signless integer attribute"> {
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}

def Step_AxesAttr : TypedArrayAttrBase<I64Attr, "list of axes, e.g. [1, 2]">;
def Step_ShapeAttr : TypedArrayAttrBase<I64Attr, "list of dimension sizes, e.g. [16, 256]">;
// A string attribute restricted to a fixed set of words; the error lists them.
class Step_StrEnum<list<string> cases> : ConfinedAttr<StrAttr, [AttrConstraint<
    Or<!foreach(c, cases, CPred<"::llvm::cast<::mlir::StringAttr>($_self).getValue() == \"" # c # "\"">)>,
    "one of \"" # !interleave(cases, "\", \"") # "\"">]>;

def Step_ComparePredicateAttr : Step_StrEnum<["lt", "le", "gt", "ge", "eq", "ne"]>;
def Step_PaddingAttr : Step_StrEnum<["causal", "valid"]>;
def Step_ReductionAttr : Step_StrEnum<["mean", "sum", "none"]>;
def Step_GeluApproxAttr : Step_StrEnum<["tanh", "erf"]>;

// A specification `kind(key = value, ...)`: an initialiser, a data source or a config entry.
// Stored as a dictionary with a `kind` string; the allowed keys per kind live in StepSpecs.cpp.
def Step_SpecAttr : DictionaryAttrBase<
    And<[CPred<"::llvm::isa<::mlir::DictionaryAttr>($_self)">,
         CPred<"::llvm::isa_and_nonnull<::mlir::StringAttr>(::llvm::cast<::mlir::DictionaryAttr>($_self).get(\"kind\"))">]>,
    "specification `kind(key = value, ...)`">;

#endif // STEP_ATTRS_TD
