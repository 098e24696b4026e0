//===- FileIO.h - whole-file reads and atomic writes ------------*- C++ -*-===//
//
// The runtime's only file access. Reads take a whole file into memory: data shards (~200 MB),
// checkpoints and safetensors files are read in full anyway, and an in-memory copy cannot fault
// later the way a memory map of a file truncated under us would (SIGBUS mid-training).
// Writes are atomic: a reader (or a restarted run) sees either the old file or the complete new
// one, never a partial file, even if the process dies or the disk fills up mid-write.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_FILEIO_H
#define STEPC_RUNTIME_FILEIO_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/base/Status.h"

namespace stepc::rt {

/// A piece of memory to write; the caller owns it.
struct ByteSpan {
  const void *data = nullptr;
  size_t size = 0;
};

/// Reads the file at `path` into `out`. Errors name the file and say why: it does not exist,
/// it cannot be opened (permissions), it is a directory, or reading failed.
Status readFile(const std::string &path, std::vector<uint8_t> &out);

/// Writes the concatenation of `pieces` to `path` atomically: into a new temporary file in the
/// same directory (rename is only atomic within one file system), fsync'ed, renamed over
/// `path`, then the directory fsync'ed so the rename itself survives a crash. On failure the
/// temporary file is removed and whatever was at `path` before is untouched.
Status writeFileAtomically(const std::string &path, const std::vector<ByteSpan> &pieces);

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_FILEIO_H
