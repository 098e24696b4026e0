//===- ProgramDescription.h - what a compiled step program is, as JSON -*- C++ -*-===//
//
// The compiler describes the step program it emits (ProgramInfo: params, state, inputs,
// fingerprint, figures for `info`) and how each compiled entry point takes its buffers. The
// description travels inside the object file as one JSON string, so the executable needs no
// generated C++: CompiledProgram (CompiledProgram.h) reads it at start-up.
//
// An entry point is compiled with MLIR's bare-pointer calling convention behind a packed
// wrapper `void entry(void **args)`: args[i] points at the i-th buffer, arguments first, then
// one output buffer per result. `Binding` says what each of those buffers is.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_PROGRAMDESCRIPTION_H
#define STEPC_RUNTIME_PROGRAMDESCRIPTION_H

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/base/Status.h"
#include "runtime/formats/ProgramInfo.h"

namespace stepc::rt {

/// What one buffer of a packed entry point holds.
struct Binding {
  enum class Kind {
    kParam,   // ProgramInfo::params[index]
    kState,   // ProgramInfo::state[index]
    kBatch,   // StepBuffers::batch[index]
    kStep,    // the step counter, one int64
    kMetric,  // one f32 metric named `metric` ("loss", "grad_norm", "lr" or an extra)
    kLogits,  // the next-token logits of every row, [batch, vocab] f32 (@sample_logits)
    kGrad,    // the gradient of ProgramInfo::params[index] (stepc compile --export-grads)
    kPosition,     // one int32: the position generation reads (@sample_logits) or feeds (@sample_step)
    kSampleState,  // ProgramDescription::sampleState[index] (@sample_step's per-position state)
  };
  Kind kind = Kind::kParam;
  int index = 0;
  std::string metric;
};

/// A packed entry point: its symbol and the buffers it takes (arguments, then results).
struct EntryDescription {
  std::string symbol;
  std::vector<Binding> args;
  std::vector<Binding> results;
};

struct ProgramDescription {
  ProgramInfo info;
  EntryDescription train;  // runs one step; results: new params, new state, metrics
  EntryDescription eval;   // the loss of params on a batch; results: {metric "loss"}
  /// A language model's next-token logits (`NAME sample`): args params and the token batch,
  /// result {logits}. Symbol empty: the model has none (not a next-token model).
  EntryDescription sample;
  /// Incremental generation (@sample_step): args params, the tokens [batch, 1] (the batch
  /// binding of the token input), the position and `sampleState`; results {logits} and the
  /// states again. Symbol empty: the model's ops do not allow it (info.sampleStepUnavailable).
  EntryDescription sampleStep;
  struct SampleState {
    std::string name;             // e.g. "cell.conv1d_1": the op it carries for
    std::vector<int64_t> shape;   // f32, zeros before position 0
  };
  std::vector<SampleState> sampleState;
  std::string target;      // what the code was compiled for, e.g. "x86_64 znver3"
  /// With --debug-nan: what each finiteness check of the step watches, by its id
  /// ("model.mlir:12:8: op 'step.rsqrt' (kernel_7_generic, output 1)"); empty otherwise.
  std::vector<std::string> debugChecks;
};

std::string writeProgramDescription(const ProgramDescription &description);

/// Parses and validates a description: ProgramInfo must pass validateProgramInfo and every
/// binding must name an existing buffer. Errors say what is wrong.
Status parseProgramDescription(const std::string &text, ProgramDescription &out);

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_PROGRAMDESCRIPTION_H
