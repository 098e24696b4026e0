//===- ProgramInfo.cpp - what a step program works on --------------------===//
#include "runtime/formats/ProgramInfo.h"

#include <set>

namespace stepc::rt {
namespace {

bool validShape(const std::vector<int64_t> &shape) {
  uint64_t n;
  return countElements(shape, n) && n < (uint64_t{1} << 62);
}

}  // namespace

std::pair<std::string, std::string> batchBufferNames(const InputSpec &input) {
  return {input.name, input.name + (input.source == InputSource::kTokenStream ? ".targets"
                                                                              : ".labels")};
}

Status validateProgramInfo(const ProgramInfo &info) {
  auto fail = [](const std::string &message) {
    return Status::error("step program: " + message);
  };
  if (info.fingerprint.empty()) return fail("no model fingerprint");
  std::set<std::string> params;
  for (const ParamSpec &p : info.params) {
    if (p.name.empty()) return fail("a parameter has an empty name");
    if (!params.insert(p.name).second) return fail("parameter '" + p.name + "' declared twice");
    if (p.dtype != DType::kF32)
      return fail("parameter '" + p.name + "' is " + dtypeName(p.dtype) +
                  "; the training loop holds F32 parameters");
    if (!validShape(p.shape))
      return fail("parameter '" + p.name + "' has an invalid shape " + formatShape(p.shape));
    if (p.stackedDims < 0 || p.stackedDims > static_cast<int>(p.shape.size()))
      return fail("parameter '" + p.name + "' has " + std::to_string(p.stackedDims) +
                  " stacked dims but rank " + std::to_string(p.shape.size()));
  }
  std::set<std::pair<std::string, std::string>> state;
  for (const StateSpec &s : info.state) {
    std::string what = "optimizer state '" + s.slot + "' of '" + s.param + "'";
    if (s.slot.empty() || s.slot.find('/') != std::string::npos)
      return fail(what + ": a slot name must be non-empty and contain no '/'");
    if (!params.count(s.param)) return fail(what + ": no such parameter");
    if (!state.insert({s.slot, s.param}).second) return fail(what + " declared twice");
    if (s.dtype != DType::kF32)
      return fail(what + " is " + dtypeName(s.dtype) + "; the training loop holds F32 state");
    if (!validShape(s.shape)) return fail(what + " has an invalid shape " + formatShape(s.shape));
    if (s.shards < 1 || (s.shards > 1 && (s.shape.empty() || s.shape[0] % s.shards != 0 ||
                                          s.shards != info.shardedOver)))
      return fail(what + " is split into " + std::to_string(s.shards) +
                  " blocks, which must divide its first axis and be the step's rank count (" +
                  std::to_string(info.shardedOver) + ")");
  }
  std::set<std::string> inputs;
  for (const InputSpec &in : info.inputs) {
    std::string what = "input '" + in.name + "'";
    if (in.name.empty()) return fail("an input has an empty name");
    auto [first, second] = batchBufferNames(in);
    if (!inputs.insert(first).second || !inputs.insert(second).second)
      return fail(what + " declared twice");
    if (!validShape(in.shape) || in.shape.empty() || in.shape[0] < 1)
      return fail(what + " has an invalid shape " + formatShape(in.shape));
    if (in.source == InputSource::kTokenStream) {
      if (in.shape.size() != 2 || in.shape[1] < 1)
        return fail(what + ": token_stream needs a [batch, seq] shape, not " +
                    formatShape(in.shape));
      if (in.dtype != DType::kI32) return fail(what + ": tokens must be I32");
      if (in.vocab < 1 || in.vocab > (int64_t{1} << 31))
        return fail(what + ": token_stream needs a vocabulary of at least 1");
    } else {
      if (in.dtype != DType::kF32) return fail(what + ": classification features must be F32");
      if (in.classes < 1) return fail(what + ": classification needs at least 1 class");
    }
  }
  for (const std::string &name : info.extraMetrics)
    if (name.empty() || name == "step" || name == "loss" || name == "lr" ||
        name == "grad_norm" || name == "tokens_per_s" || name == "step_ms")
      return fail("extra metric '" + name + "' is empty or a reserved name");
  return {};
}

}  // namespace stepc::rt
