//===- Offload.h - the host tier of offloaded buffers, and its transfers -*- C++ -*-===//
//
// A step compiled with --device-memory keeps some parameters and optimizer state in host
// memory and streams them through the device a layer at a time (compiler/Codegen/Common/
// OffloadBuffers.cpp). On the CPU target the device is RAM and the host tier is a file: one
// unlinked file (in $STEPC_OFFLOAD_DIR, else $TMPDIR, else /var/tmp), each buffer at a
// page-aligned offset, its layers contiguous. The step's transfers are positioned reads and
// writes of one layer into or out of an arena slot, with O_DIRECT where the file system and
// the layer's size allow (so RAM is not a page cache of the file), run in issue order by one
// I/O thread: a slot's write-back is done before it is refilled, and a layer is read only
// after its last write-back.
//
// The training loop's whole-tensor work between steps (initialisation, --init-from, resume,
// checkpoints, --save-params) sees each offloaded tensor through a shared mapping of the same
// file (hostTensor); before a step the mapping is synced to the file and its pages leave RAM
// (unmapped, dropped from the page cache), and every transfer of a step is complete when the
// step returns.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_HAL_CPU_OFFLOAD_H
#define STEPC_RUNTIME_HAL_CPU_OFFLOAD_H

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/base/Status.h"
#include "runtime/formats/ProgramInfo.h"
#include "runtime/hal/cpu/UnrankedMemRef.h"

namespace stepc::rt {

/// What the transfers of the steps so far did.
struct OffloadStats {
  int64_t fetchedBytes = 0, storedBytes = 0, transfers = 0;
  double ioSeconds = 0;       // the I/O thread's time in reads and writes
  double exposedSeconds = 0;  // the step's time waiting for them (not overlapped)
  bool direct = false;        // O_DIRECT for the large buffers
};

class FarStore {
 public:
  /// The host tier of `info.offload` (which must be non-empty).
  static Status open(const ProgramInfo &info, std::unique_ptr<FarStore> &out);
  ~FarStore();

  /// The whole tensor `params[index]` (or `state[index]`) in the shared mapping; null when that
  /// tensor is not offloaded.
  float *hostTensor(bool state, int index) const;
  const std::string &where() const { return where_; }

  /// Around one call of a step function: the mapping synced to the file before; after, every
  /// transfer done, and the first I/O error of the call, if any.
  Status begin();
  Status end();

  // The compiled step's calls.
  void fetch(int64_t id, int64_t layer, float *slot, int64_t elements);
  void store(int64_t id, int64_t layer, const float *slot, int64_t elements);
  void wait(int64_t id, int64_t layer);
  void flush();
  /// The emulator's check before each command of the plan (--target=cuda-emulated,
  /// compiler/Codegen/Emulation/CheckOffloadAccess.cpp): `what` reads (or, `writes`, writes)
  /// the bytes [lo, hi). Touching the slot of a prefetch not yet waited for, or writing the
  /// slot of a write-back not yet flushed, is a race on a GPU (the copy runs on its own
  /// stream): the call's error names the command and the transfer. Transfers complete in issue
  /// order, so waiting for one retires every transfer issued before it.
  void access(uintptr_t lo, uintptr_t hi, bool writes, const char *what);

  OffloadStats stats() const;

 private:
  struct Impl;
  explicit FarStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::string where_;
};

/// The store the compiled step's transfer calls go to (one per process, set while a step runs).
void setFarStore(FarStore *store);

}  // namespace stepc::rt

extern "C" void _mlir_ciface_stepc_offload_fetch(int64_t id, int64_t layer, StepcUnrankedF32 *slot);
extern "C" void _mlir_ciface_stepc_offload_store(int64_t id, int64_t layer, StepcUnrankedF32 *slot);
extern "C" void stepc_offload_wait(int64_t id, int64_t layer);
extern "C" void stepc_offload_flush();
/// The emulator's checks (FarStore::access), one per element type: the view's bytes from its
/// descriptor, `bytes` per element, and the command's name (a NUL-terminated string's address).
extern "C" void _mlir_ciface_stepc_offload_access_f32(StepcUnrankedF32 *view, int64_t bytes,
                                                      int64_t writes, int64_t what);

#endif  // STEPC_RUNTIME_HAL_CPU_OFFLOAD_H
