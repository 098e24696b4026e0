//===- ModelData.h - parameters and inputs of a model for the interpreter -*- C++ -*-===//
//
// What a training run would feed a model, computed on the host: parameters initialised from
// their `step.param` initialisers (runtime/base/Init.h, the same values the training executable
// starts from) and one step's batch from the built-in data (runtime/formats/Data.h).
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_INTERPRETER_MODELDATA_H
#define STEPC_COMPILER_INTERPRETER_MODELDATA_H

#include "compiler/Interpreter/Interpreter.h"
#include "runtime/base/Init.h"

namespace stepc::interp {

/// Every parameter of `model` by full name (`repeat.param`), in its stored (stacked) type,
/// initialised with Philox key `seed`. Float values are rounded to the declared element type.
/// A parameter whose initialiser fails (not possible for a verified model) is reported at its
/// location and left out.
/// The runtime's description of a verified `init` spec; keys a kind does not take keep their
/// defaults.
rt::InitSpec initSpecOf(mlir::DictionaryAttr init);

std::map<std::string, Tensor> initModelParams(step::ModelOp model, uint64_t seed);

/// Step `step`'s batch of every input of `model` by name, one tensor per result of its
/// step.input, as the training executable draws it (runtime/harness/BatchSource.h): token_stream
/// windows of the built-in corpus and batches of the built-in classification set.
std::map<std::string, std::vector<Tensor>> sampleModelInputs(step::ModelOp model, uint64_t seed,
                                                             uint64_t step);

}  // namespace stepc::interp

#endif  // STEPC_COMPILER_INTERPRETER_MODELDATA_H
