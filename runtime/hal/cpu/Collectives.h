//===- Collectives.h - the ranks of a data-parallel run ---------*- C++ -*-===//
//
// `mpirun -np N NAME train` starts N copies of an executable compiled with --data-parallel.
// The executable's batch is the global batch, in K micro-batches; rank r runs the aligned block
// of micro-batches r·K/N ... (r+1)·K/N − 1 (the step's micro-batch loop asks
// stepc_micro_batch_begin / _end for its bounds) and sums them in the step's binary tree. The
// step then calls
//
//   stepc_all_reduce_sum_f32(input, output, id)
//
// on those sums of its loss and gradients (compiler/Codegen/Common/CollectivesToRuntime.cpp),
// and every rank gets the sum over the ranks. It is a fixed binary tree over the rank index:
// at level 1, 2, 4, ... rank r (a multiple of 2·level) adds the partial sum of rank r + level
// to its own, its own on the left, so with four ranks the result is ((r0 + r1) + (r2 + r3));
// rank 0 then sends it back down the tree. (A large buffer on a power-of-two rank count runs
// as the reduce-scatter below, the same tree by blocks, then the all-gather: the same bits,
// half the bytes on the longest path.) The order never depends on timing, so the bits do
// not either, and with K and N powers of two the ranks' blocks are subtrees of the step's
// micro-batch tree: N ranks give the bits of one process running all K. A ring all-reduce
// (NCCL's, MPI_Allreduce's) sums in an order that depends on the chunk, which is why this is
// not MPI_Allreduce.
//
// Without mpirun there is one rank and no MPI: the call copies and the loop runs all K.
//
// --shard-optimizer (ZeRO stage 1): rank r keeps block r of each sharded parameter's state and
// updates block r of the parameter (the step slices it from row stepc_rank() · rows); then
//
//   stepc_all_gather_f32(placed, whole, id)
//
// copies this rank's rows of `placed` (its updated block, in place) into `whole` and puts
// every other rank's block in its rows, on every rank, by
// recursive doubling (log2 N exchanges, each of the blocks gathered so far). It moves bits and
// adds nothing, so the parameters stay one process's.
//
// The gradients of those parameters are reduce-scattered, not all-reduced: the sum of each
// float is needed only on the rank that updates it (its owner), by
//
//   stepc_reduce_scatter_start_f32(input, started, first, per, id)
//
// (floats [k·per, (k+1)·per) of the buffer belong to rank first + k: a whole gradient's
// blocks, or one layer's gradient, all of it one rank's), and its all-reduce wait. It is the
// same tree, by recursive halving: at distance d = 1, 2, 4, ... rank r and r XOR d split the
// floats they both still hold by bit d of the owner, each sends the other's half and adds the
// half it receives to its own. After distance d rank r holds the sum over its aligned group of
// 2d ranks, and that group's two halves are the two subtrees the all-reduce adds at that
// level: ((r0 + r1) + (r2 + r3)) again (IEEE addition is commutative, so which rank's partial
// is on the left does not matter). Each rank sends (N − 1)/N of the buffer, where the
// all-reduce's tree sends it up and down; the floats a rank does not own end as partial sums
// nobody reads.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_HAL_CPU_COLLECTIVES_H
#define STEPC_RUNTIME_HAL_CPU_COLLECTIVES_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/base/Status.h"
#include "runtime/hal/cpu/UnrankedMemRef.h"

namespace stepc::rt {

/// Point-to-point messages between the ranks of one run: the seam between the all-reduce and
/// MPI (a test gives it threads in one process instead).
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Blocking send / receive of `bytes` bytes to / from `peer`.
  virtual Status send(const void *data, size_t bytes, int peer) = 0;
  virtual Status receive(void *data, size_t bytes, int peer) = 0;
  /// The library's own all-reduce of `n` floats in place (MPI_Allreduce): bandwidth-optimal,
  /// but its summation order depends on the rank count and the message size, so its bits are
  /// not one process's (--all-reduce=fast). `id` numbers the reduction; the ranks check it.
  virtual Status allReduceSumFast(float *data, int64_t n, int64_t id) = 0;
  /// What launched the run and where this rank is, for the launch line ("Open MPI 4.1.4").
  virtual std::string launcher() const = 0;
  /// Ends the run on every rank with `code` (a rank that failed: the others are blocked in the
  /// next reduction and would wait forever).
  virtual void abort(int code) = 0;
  /// Leaves the run normally (MPI_Finalize).
  virtual void finish() = 0;
  /// Whether a second thread may make the calls above while the first does not (MPI's
  /// MPI_THREAD_SERIALIZED): the overlapped reductions run on a thread of their own.
  virtual bool threadSafe() const { return true; }
};

/// The ranks of this process's run: mpirun's (Open MPI sets OMPI_COMM_WORLD_SIZE) through
/// libmpi.so.40, loaded with dlopen (STEPC_MPI_LIBRARY overrides the path), or none (`out`
/// stays null) for one rank. Errors: mpirun's environment without a loadable libmpi.
Status openCommunicator(std::unique_ptr<Communicator> &out);

/// The communicator stepc_all_reduce_sum_f32 and the micro-batch range use (null: one
/// rank). The caller owns it, and has checked that the ranks divide the micro-batches.
void setCommunicator(Communicator *communicator);

/// How stepc_all_reduce_sum_f32 sums over the ranks: the fixed tree (the default: the bits
/// of one process) or the communicator's own all-reduce (Communicator::allReduceSumFast).
enum class AllReduceMode { kTree, kFast };
void setAllReduceMode(AllReduceMode mode);
AllReduceMode allReduceMode();

/// From this many floats on (and a power-of-two rank count dividing them) allReduceSum runs
/// as reduceScatterSum then allGather: the tree's bits, half the bytes on the longest path.
constexpr int64_t kSplitAllReduceFloats = 1024;

/// The tree sum of `data` (n floats) over the ranks of `c`, in place, on every rank. `id`
/// numbers the reduction in the step (the ranks check they agree); `scratch` is reused.
Status allReduceSum(Communicator &c, float *data, int64_t n, int64_t id,
                     std::vector<float> &scratch);

/// Every rank's block of `whole` (size() blocks of `blockElements` floats, rank r's block r),
/// on every rank; this rank's block is already in place. The rank count must be a power of
/// two. `id` numbers the collective in the step (the ranks check they agree). With `stride`
/// (> blockElements) rank r's block is at whole + r·stride instead: one layer's rows of every
/// rank's block of a stacked parameter (a round of a deferred gather, BackgroundReductions).
Status allGather(Communicator &c, float *whole, int64_t blockElements, int64_t id,
                 int64_t stride = 0);

/// The tree sum over the ranks of `c` of the `n` floats at `data`, kept only where this rank
/// owns them: floats [k·per, (k+1)·per) belong to rank first + k (see the header). The rank
/// count must be a power of two. `send` and `receive` are reused scratch.
Status reduceScatterSum(Communicator &c, float *data, int64_t n, int64_t first, int64_t per,
                        int64_t id, std::vector<float> &send, std::vector<float> &receive);

/// The first error of a reduction since the last call, and clears it; false if none.
bool takeCollectiveError(std::string &message);

/// Waits for every deferred all-gather (stepc_all_gather_start_f32): call before the host or
/// another entry point reads the parameters, or another thread talks to the ranks. Returns
/// the first failure.
Status settleGathers();

}  // namespace stepc::rt

/// The micro-batches of `count` this rank runs: [begin, end).
extern "C" int64_t stepc_micro_batch_begin(int64_t count);
extern "C" int64_t stepc_micro_batch_end(int64_t count);
extern "C" void _mlir_ciface_stepc_all_reduce_sum_f32(StepcUnrankedF32 *input,
                                                       StepcUnrankedF32 *output, int64_t id);
/// The overlapped reduction (BackgroundReductions.h): the start copies `input` into
/// `started` (unless they are one buffer) and queues its reduction there, in place; the wait
/// finds the reductions whose buffers `started` holds end to end (a stack of starts' results),
/// waits for them and copies the sums into `output` (unless it is `started`). One rank: both
/// only copy.
extern "C" void _mlir_ciface_stepc_all_reduce_start_f32(StepcUnrankedF32 *input,
                                                         StepcUnrankedF32 *started, int64_t id);
extern "C" void _mlir_ciface_stepc_all_reduce_wait_f32(StepcUnrankedF32 *started,
                                                        StepcUnrankedF32 *output, int64_t id);
/// The reduce-scatter's start: as stepc_all_reduce_start_f32, each float's sum kept on its
/// owner only (floats [k·per, (k+1)·per) are rank first + k's); its wait is
/// stepc_all_reduce_wait_f32.
extern "C" void _mlir_ciface_stepc_reduce_scatter_start_f32(StepcUnrankedF32 *input,
                                                             StepcUnrankedF32 *started,
                                                             int64_t first, int64_t per,
                                                             int64_t id);
/// This process's rank (0 without mpirun): where its blocks start (--shard-optimizer).
extern "C" int64_t stepc_rank();
extern "C" void _mlir_ciface_stepc_all_gather_f32(StepcUnrankedF32 *placed,
                                                   StepcUnrankedF32 *whole, int64_t id);
/// --shard-optimizer's gather of an updated parameter, deferred to where the next step reads
/// it (compiler/Codegen/Common/AwaitGathers.cpp): `whole` is the parameter itself. This
/// rank's rows of `placed` go into `whole` now; the exchange is queued on the reductions'
/// thread. The step's gathers form one batch, released at the call with `last` set, in the
/// forward's order: the gathers before the first stacked parameter, then the stacked ones
/// a layer at a time (`rounds`: the layers of a rank's block, 1 for an unstacked parameter),
/// then the rest.
extern "C" void _mlir_ciface_stepc_all_gather_start_f32(StepcUnrankedF32 *placed,
                                                         StepcUnrankedF32 *whole, int64_t rounds,
                                                         int64_t last, int64_t id);
/// Waits for the deferred gathers that write any float `view` spans (none pending: returns at
/// once).
extern "C" void _mlir_ciface_stepc_all_gather_wait_f32(StepcUnrankedF32 *view);

#endif  // STEPC_RUNTIME_HAL_CPU_COLLECTIVES_H
