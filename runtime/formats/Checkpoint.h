//===- Checkpoint.h - training checkpoints ----------------------*- C++ -*-===//
//
// A checkpoint holds what resuming a run needs: parameters, optimizer state by slot, the step,
// the RNG seed and the data position, plus the fingerprint of the model that wrote it, so a
// checkpoint of another model (or another optimizer, if the caller's fingerprint covers it) is
// refused instead of loaded into the wrong buffers.
//
// Format, version 1: a safetensors file (Safetensors.h), so PyTorch can open a checkpoint
// directly (safetensors.torch.load_file). Tensor names:
//   "param/<name>"          a parameter
//   "state/<slot>/<name>"   optimizer state of parameter <name> in slot <slot> ("m", "v", ...)
// __metadata__ (all strings):
//   stepc.format       "checkpoint"
//   stepc.version      "1"; other versions are refused
//   stepc.fingerprint  the model fingerprint the caller supplied
//   stepc.step, stepc.seed, stepc.data.seed, stepc.data.step   decimal integers
//   stepc.data.source  DataPosition::source
//   stepc.checksum     8 hex digits: CRC-32C of the whole file with these 8 digits read as "0"s
// The checksum catches corruption anywhere (header or data) that the format itself would not
// show, such as a flipped bit in a weight or a digit of the step.
//
// Writes are atomic (writeFileAtomically): a crash or full disk mid-write leaves the previous
// checkpoint at the path intact.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_CHECKPOINT_H
#define STEPC_RUNTIME_CHECKPOINT_H

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/formats/DataFile.h"
#include "runtime/formats/Safetensors.h"
#include "runtime/base/Status.h"

namespace stepc::rt {

/// The checkpoint format version this runtime writes and reads.
constexpr int kCheckpointVersion = 1;

/// Everything in a checkpoint but the tensors.
struct CheckpointInfo {
  /// The model's identity, supplied by the caller (e.g. a hash of the compiled model and its
  /// training configuration). Must not be empty.
  std::string fingerprint;
  /// Training steps completed.
  uint64_t step = 0;
  /// The run's RNG seed. Philox is counter-based, so (seed, step) is the whole RNG state.
  uint64_t seed = 0;
  DataPosition data;
  /// The training configuration that wrote it (ProgramInfo::training); "" if not recorded.
  std::string training;
};

/// One tensor of a checkpoint. `data` is the caller's memory of elements(shape) *
/// dtypeSize(dtype) bytes: read from by writeCheckpoint, filled by readCheckpoint.
struct CheckpointTensor {
  std::string slot;  // "" for a parameter, else the optimizer-state slot (no '/')
  std::string name;  // the parameter's name
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  void *data = nullptr;
};

/// Writes `info` and `tensors` to `path` atomically. Errors: an empty fingerprint, a bad or
/// duplicate name or slot, any file-system failure (then `path` is as it was).
Status writeCheckpoint(const std::string &path, const CheckpointInfo &info,
                       const std::vector<CheckpointTensor> &tensors);

/// Reads the checkpoint at `path` into `info` and into each tensor's `data`. Refused with a
/// message naming the file and the problem: not a stepc checkpoint, an unknown format
/// version, a damaged or truncated file (checksum), another model's fingerprint than
/// `fingerprint`, or tensors that differ from `tensors` (missing, extra, other dtype or shape).
/// Nothing is copied into `tensors` unless every check passes.
Status readCheckpoint(const std::string &path, const std::string &fingerprint,
                      const std::vector<CheckpointTensor> &tensors, CheckpointInfo &info);

/// Reads and validates (checksum included) only the info of the checkpoint at `path`, e.g. to
/// report it or to pick the newest of several.
Status readCheckpointInfo(const std::string &path, CheckpointInfo &info);

/// The name a tensor has in the file: "param/<name>" or "state/<slot>/<name>".
std::string checkpointTensorName(const std::string &slot, const std::string &name);

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_CHECKPOINT_H
