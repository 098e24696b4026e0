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
// The gradients' reductions overlap the backward: each is started on a stream of its own as
// soon as the layer's gradient exists and waited for before the optimizer
// (CollectiveStream.h).
//
// --shard-optimizer (ZeRO stage 1) reduce-scatters the sharded gradients (ncclReduceScatter:
// rank r receives the sums of block r) and all-gathers the updated parameters
// (ncclAllGather), both in place. NCCL's blocks are the buffer's N equal parts in rank order,
// which is the step's layout for a whole gradient (its rows, or a stack's layers, cut into N
// blocks: rank r owns block r); a layer's gradient started inside the backward belongs to one
// rank, and is ncclReduce'd to it. The runtime refuses any other layout rather than sum into
// the wrong rows.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_HAL_CUDA_NCCL_H
#define STEPC_RUNTIME_HAL_CUDA_NCCL_H

#include <cstddef>
#include <cstdint>
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
  NcclResult (*reduce)(const void *send, void *receive, size_t count, int type, int op, int root,
                       NcclComm *comm, void *stream) = nullptr;
  NcclResult (*reduceScatter)(const void *send, void *receive, size_t receiveCount, int type,
                              int op, NcclComm *comm, void *stream) = nullptr;
  NcclResult (*allGather)(const void *send, void *receive, size_t sendCount, int type,
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
  /// `data` holds size() blocks of `block` floats; block r's sums over the ranks land in
  /// rank r's block r, in place (the other blocks keep partial sums nobody reads).
  Status reduceScatterSum(void *data, size_t block, void *stream);
  /// The sums of `count` floats at `data` over the ranks, in place on rank `root` only (a
  /// layer's gradient that one rank owns, --shard-optimizer overlapped).
  Status reduceSum(void *data, size_t count, int root, void *stream);
  /// `whole` holds size() blocks of `block` floats, this rank's block in place: every rank's
  /// block r becomes rank r's.
  Status allGather(void *whole, size_t block, void *stream);
  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Leaves the communicator without waiting for the others (a rank that failed).
  void abort();
  /// "NCCL 2.28.9".
  const std::string &version() const { return version_; }

 private:
  NcclCommunicator(const NcclApi &api, NcclComm *comm, std::string version, int rank, int size)
      : api_(api), comm_(comm), version_(std::move(version)), rank_(rank), size_(size) {}
  Status check(NcclResult result, const char *call) const;
  NcclApi api_;
  NcclComm *comm_;
  std::string version_;
  int rank_, size_;
};

/// The communicator stepc_cuda_all_reduce_sum_f32 uses (null: one rank, the call copies).
/// The caller owns it.
void setNcclCommunicator(NcclCommunicator *communicator);

/// How NCCL runs a reduce-scatter whose floats [k·per, (k+1)·per) belong to rank first + k
/// (Collectives.h's contract) over `n` floats on `ranks` ranks: NCCL's reduce-scatter where
/// the blocks are its own (N equal blocks from rank 0), its reduce to one rank where one rank
/// owns them all, else not at all.
enum class ScatterLayout { kBlocks, kOneRank, kNotNccl };
ScatterLayout scatterLayout(int64_t first, int64_t per, int64_t n, int64_t ranks);

/// The GPU a rank of this node uses: its local rank under mpirun, else 0.
int localRank();

}  // namespace stepc::rt::cuda

/// The CUDA step's all-reduce (--step-cuda-host renames stepc_all_reduce_sum_f32): device
/// buffers, on the session's stream; failures are recorded on the session.
extern "C" void _mlir_ciface_stepc_cuda_all_reduce_sum_f32(StepcUnrankedF32 *input,
                                                            StepcUnrankedF32 *output, int64_t id);
/// The overlapped reductions and --shard-optimizer's collectives on the CUDA step
/// (--step-cuda-host renames the CPU runtime's stepc_all_reduce_start_f32,
/// stepc_reduce_scatter_start_f32, stepc_all_reduce_wait_f32 and stepc_all_gather_f32;
/// runtime/hal/cpu/Collectives.h has their contracts). The starts run on the collectives'
/// stream (CollectiveStream.h), the wait makes the step's stream wait for them, the all-gather
/// runs on the step's stream.
extern "C" void _mlir_ciface_stepc_cuda_all_reduce_start_f32(StepcUnrankedF32 *input,
                                                              StepcUnrankedF32 *started,
                                                              int64_t id);
extern "C" void _mlir_ciface_stepc_cuda_reduce_scatter_start_f32(StepcUnrankedF32 *input,
                                                                  StepcUnrankedF32 *started,
                                                                  int64_t first, int64_t per,
                                                                  int64_t id);
extern "C" void _mlir_ciface_stepc_cuda_all_reduce_wait_f32(StepcUnrankedF32 *started,
                                                             StepcUnrankedF32 *output, int64_t id);
extern "C" void _mlir_ciface_stepc_cuda_all_gather_f32(StepcUnrankedF32 *placed,
                                                        StepcUnrankedF32 *whole, int64_t id);

#endif  // STEPC_RUNTIME_HAL_CUDA_NCCL_H
