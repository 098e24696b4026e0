//===- Linker.h - link the emitted object with the runtime ------*- C++ -*-===//
#ifndef STEPC_COMPILER_CODEGEN_LINKER_H
#define STEPC_COMPILER_CODEGEN_LINKER_H

#include <string>
#include <vector>

namespace stepc::codegen {

/// The runtime archive (libstepc_rt.a: main(), the training loop, data, checkpoints) that
/// executables link against: $STEPC_RUNTIME_ARCHIVE, else next to the stepc executable (its
/// Bazel runfiles, bazel-bin/runtime/, or ../lib/stepc/ when installed). Empty if not found;
/// `searched` lists where it looked.
std::string findRuntimeArchive(const char *argv0, std::string &searched);

/// Links `objects` (the CPU step, and the CUDA step of --target=cuda) with `runtimeArchive`
/// into the executable `output` with the system C++ compiler driver ($CXX, else c++). The
/// result appears atomically (linked to a temporary name, then renamed). Returns an error
/// message, empty on success.
std::string linkExecutable(const std::vector<std::string> &objects,
                           const std::string &runtimeArchive, const std::string &output);

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_LINKER_H
