//===- Nccl.h - NCCL, loaded at run time, for data-parallel CUDA steps -*- C++ -*-===//
//
// A data-parallel CUDA step (`stepc compile --target=cuda --data-parallel`, run under
// `mpirun -np N`) sums its ranks' gradients with NCCL's all-reduce on the step's stream.
// libnccl.so.2 ships with the CUDA toolkit; like libcuda it is opened with dlopen
// (STEPC_NCCL_LIBRARY overrides the path), so an executable starts without it and a CPU run
// never loads it. The types are declared here, with nccl.h's values (NCCL 2.x ABI), so the
// runtime builds without the header.
//
// The ranks meet through the MPI communicator the run already has: rank 0 makes the unique
// id (ncclGetUniqueId) and sends it to every other rank, and each joins with
// ncclCommInitRank on its own GPU (device = its local rank on the node, OMPI's
// OMPI_COMM_WORLD_LOCAL_RANK).
//
// NCCL's all-reduce is a ring or a tree chosen by message size and topology: its summation
// order is the library's, so a CUDA run is --all-reduce=fast (float32 rounding from one
// process), never the CPU's fixed-tree bits.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_HAL_CUDA_NCCL_H
#define STEPC_RUNTIME_HAL_CUDA_NCCL_H

#include <cstddef>
#include <memory>
#include <string>

#include "runtime/base/Status.h"
#include "runtime/hal/cpu/Collectives.h"

namespace stepc::rt::cuda {

// nccl.h's handles, codes and the unique id (128 bytes, passed by value).
using NcclResult = int;
struct NcclComm;
struct NcclUniqueId {
  char internal[128];
};
constexpr int kNcclFloat32 = 7, kNcclSum = 0;

/// The NCCL functions the runtime calls, resolved by name.
struct NcclApi {
  NcclResult (*getVersion)(int *version) = nullptr;
  NcclResult (*getUniqueId)(NcclUniqueId *id) = nullptr;
  NcclResult (*commInitRank)(NcclComm **comm, int ranks, NcclUniqueId id, int rank) = nullptr;
  NcclResult (*allReduce)(const void *send, void *receive, size_t count, int type, int op,
                          NcclComm *comm, void *stream) = nullptr;
  NcclResult (*commDestroy)(NcclComm *comm) = nullptr;
  NcclResult (*commAbort)(NcclComm *comm) = nullptr;
  const char *(*getErrorString)(NcclResult result) = nullptr;
};

/// One rank's NCCL communicator over the ranks of `ranks`.
class NcclCommunicator {
 public:
  /// Loads NCCL and joins every rank of `ranks` (a collective: each rank calls it, in the
  /// same order). The current CUDA context is the rank's device.
  static Status open(Communicator &ranks, std::unique_ptr<NcclCommunicator> &out);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator &) = delete;
  NcclCommunicator &operator=(const NcclCommunicator &) = delete;

  /// Sums `count` floats at `data` (device memory) over the ranks, in place, queued on
  /// `stream` (no host wait).
  Status allReduceSum(void *data, size_t count, void *stream);
  /// Leaves the communicator without waiting for the others (a rank that failed).
  void abort();
  /// "NCCL 2.28.9".
  const std::string &version() const { return version_; }

 private:
  NcclCommunicator(const NcclApi &api, NcclComm *comm, std::string version)
      : api_(api), comm_(comm), version_(std::move(version)) {}
  Status check(NcclResult result, const char *call) const;
  NcclApi api_;
  NcclComm *comm_;
  std::string version_;
};

/// The communicator stepc_cuda_all_reduce_sum_f32 uses (null: one rank, the call copies).
/// The caller owns it.
void setNcclCommunicator(NcclCommunicator *communicator);

/// The GPU a rank of this node uses: its local rank under mpirun, else 0.
int localRank();

}  // namespace stepc::rt::cuda

/// The CUDA step's all-reduce (--step-cuda-host renames stepc_all_reduce_sum_f32): device
/// buffers, on the session's stream; failures are recorded on the session.
extern "C" void _mlir_ciface_stepc_cuda_all_reduce_sum_f32(StepcUnrankedF32 *input,
                                                            StepcUnrankedF32 *output, int64_t id);

#endif  // STEPC_RUNTIME_HAL_CUDA_NCCL_H
