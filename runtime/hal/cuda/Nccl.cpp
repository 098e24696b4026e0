//===- Nccl.cpp - NCCL, loaded at run time, for data-parallel CUDA steps --===//
#include "runtime/hal/cuda/Nccl.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include "runtime/hal/cpu/UnrankedMemRef.h"
#include "runtime/hal/cuda/CollectiveStream.h"
#include "runtime/hal/cuda/Session.h"

extern "C" void stepc_cuda_copy(int64_t dst, int64_t src, int64_t bytes);

namespace stepc::rt::cuda {
namespace {

NcclCommunicator *gNccl = nullptr;
// The collectives' stream of a run with ranks, opened by the first start. It lives as long as
// the session it belongs to (the process's), so it is never destroyed.
CollectiveStream *gCollectives = nullptr;

template <typename F>
bool bind(void *library, const char *name, F &out) {
  out = reinterpret_cast<F>(dlsym(library, name));
  return out != nullptr;
}

// NCCL's version code: major·10000 + minor·100 + patch since 2.9 (major·1000 + minor·100 +
// patch before).
std::string versionName(int code) {
  int major = code >= 10000 ? code / 10000 : code / 1000;
  int minor = code >= 10000 ? code / 100 % 100 : code / 100 % 10;
  return "NCCL " + std::to_string(major) + "." + std::to_string(minor) + "." +
         std::to_string(code % 100);
}

}  // namespace

Status NcclCommunicator::open(Communicator &ranks, std::unique_ptr<NcclCommunicator> &out) {
  out.reset();
  const char *path = std::getenv("STEPC_NCCL_LIBRARY");
  if (!path || !*path) path = "libnccl.so.2";
  // Every rank loads and checks NCCL before any of them waits for the unique id, so a rank
  // without it fails (and mpirun ends the run) instead of leaving the others blocked.
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library)
    return Status::error(std::string("the CUDA step of a data-parallel run sums with NCCL, but ") +
                         path + " cannot be loaded: " + dlerror() +
                         " (it ships with the CUDA toolkit; put its folder on LD_LIBRARY_PATH or "
                         "set STEPC_NCCL_LIBRARY)");
  NcclApi api;
  bool ok = bind(library, "ncclGetVersion", api.getVersion) &&
            bind(library, "ncclGetUniqueId", api.getUniqueId) &&
            bind(library, "ncclCommInitRank", api.commInitRank) &&
            bind(library, "ncclAllReduce", api.allReduce) &&
            bind(library, "ncclReduce", api.reduce) &&
            bind(library, "ncclReduceScatter", api.reduceScatter) &&
            bind(library, "ncclAllGather", api.allGather) &&
            bind(library, "ncclCommDestroy", api.commDestroy) &&
            bind(library, "ncclCommAbort", api.commAbort) &&
            bind(library, "ncclGetErrorString", api.getErrorString);
  if (!ok)
    return Status::error(std::string(path) + " lacks NCCL's functions (ncclGetUniqueId, "
                         "ncclCommInitRank, ncclAllReduce, ...): not NCCL 2");
  int code = 0;
  api.getVersion(&code);
  int rank = ranks.rank(), size = ranks.size();
  NcclCommunicator probe(api, nullptr, versionName(code), rank, size);
  NcclUniqueId id{};
  if (rank == 0) {
    if (Status s = probe.check(api.getUniqueId(&id), "ncclGetUniqueId"); !s.ok()) return s;
    for (int peer = 1; peer < size; ++peer)
      if (Status s = ranks.send(&id, sizeof id, peer); !s.ok())
        return s.withContext("sending NCCL's unique id to rank " + std::to_string(peer));
  } else if (Status s = ranks.receive(&id, sizeof id, 0); !s.ok()) {
    return s.withContext("receiving NCCL's unique id from rank 0");
  }
  NcclComm *comm = nullptr;
  if (Status s = probe.check(api.commInitRank(&comm, size, id, rank), "ncclCommInitRank");
      !s.ok())
    return s;
  out.reset(new NcclCommunicator(api, comm, probe.version_, rank, size));
  return {};
}

NcclCommunicator::~NcclCommunicator() {
  if (comm_) api_.commDestroy(comm_);
}

void NcclCommunicator::abort() {
  if (comm_) api_.commAbort(comm_);
  comm_ = nullptr;
}

Status NcclCommunicator::allReduceSum(void *data, size_t count, void *stream) {
  return check(api_.allReduce(data, data, count, kNcclFloat32, kNcclSum, comm_, stream),
               "ncclAllReduce");
}

Status NcclCommunicator::reduceScatterSum(void *data, size_t block, void *stream) {
  // In place: NCCL's receive buffer is the send buffer's block `rank`.
  float *whole = static_cast<float *>(data);
  return check(api_.reduceScatter(whole, whole + static_cast<size_t>(rank_) * block, block,
                                  kNcclFloat32, kNcclSum, comm_, stream),
               "ncclReduceScatter");
}

Status NcclCommunicator::reduceSum(void *data, size_t count, int root, void *stream) {
  return check(api_.reduce(data, data, count, kNcclFloat32, kNcclSum, root, comm_, stream),
               "ncclReduce");
}

Status NcclCommunicator::allGather(void *whole, size_t block, void *stream) {
  float *data = static_cast<float *>(whole);
  return check(api_.allGather(data + static_cast<size_t>(rank_) * block, data, block,
                              kNcclFloat32, comm_, stream),
               "ncclAllGather");
}

Status NcclCommunicator::check(NcclResult result, const char *call) const {
  if (result == 0) return {};
  const char *text = api_.getErrorString ? api_.getErrorString(result) : nullptr;
  return Status::error(std::string(call) + " failed (" + version_ + "): " +
                       (text ? text : "error " + std::to_string(result)));
}

void setNcclCommunicator(NcclCommunicator *communicator) { gNccl = communicator; }

ScatterLayout scatterLayout(int64_t first, int64_t per, int64_t n, int64_t ranks) {
  if (first == 0 && per > 0 && per * ranks == n) return ScatterLayout::kBlocks;
  if (per == n && n > 0 && first >= 0 && first < ranks) return ScatterLayout::kOneRank;
  return ScatterLayout::kNotNccl;
}

int localRank() {
  const char *local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  return local ? std::atoi(local) : 0;
}

}  // namespace stepc::rt::cuda

extern "C" void _mlir_ciface_stepc_cuda_all_reduce_sum_f32(StepcUnrankedF32 *input,
                                                            StepcUnrankedF32 *output, int64_t id) {
  using namespace stepc::rt;
  cuda::Session &s = cuda::Session::get();
  if (!s.status().ok()) return s.recordError(s.status());
  F32View in(*input), out(*output);
  if (!in.contiguous() || !out.contiguous() || in.elements() != out.elements())
    return s.recordError(Status::error("all-reduce " + std::to_string(id) +
                                       ": expected two contiguous buffers of the same size (a "
                                       "compiler bug)"));
  size_t n = static_cast<size_t>(in.elements());
  if (in.data() != out.data())  // the plan's device copy (StepCalls.cpp), on the same stream
    stepc_cuda_copy(reinterpret_cast<int64_t>(out.data()), reinterpret_cast<int64_t>(in.data()),
                    static_cast<int64_t>(n * sizeof(float)));
  if (!cuda::gNccl) return;  // one rank
  if (Status st = cuda::gNccl->allReduceSum(out.data(), n, s.stream()); !st.ok())
    s.recordError(st.withContext("all-reduce " + std::to_string(id)));
}

namespace {

// The two buffers of a CUDA collective, checked contiguous and of one size; null after
// recording the error on the session.
bool sameSize(stepc::rt::cuda::Session &s, const stepc::rt::F32View &a,
              const stepc::rt::F32View &b, const std::string &what) {
  if (a.contiguous() && b.contiguous() && a.elements() == b.elements() && a.elements() > 0)
    return true;
  s.recordError(stepc::rt::Status::error(what + ": expected two contiguous non-empty buffers of "
                                         "the same size (a compiler bug)"));
  return false;
}

// The plan's device copy (StepCalls.cpp), on the step's stream, where the buffers differ.
void copyOnStream(const stepc::rt::F32View &from, const stepc::rt::F32View &to, int64_t at,
                  int64_t n) {
  if (from.data() == to.data()) return;
  stepc_cuda_copy(reinterpret_cast<int64_t>(to.data() + at),
                  reinterpret_cast<int64_t>(from.data() + at),
                  n * static_cast<int64_t>(sizeof(float)));
}

// Queues `collective` on the collectives' stream (opened on first use) after the step's work
// so far; the error, if any, is recorded on the session.
void startCollective(stepc::rt::cuda::Session &s, const stepc::rt::F32View &buffer,
                     const std::string &what,
                     const std::function<stepc::rt::Status(stepc::rt::cuda::CUstream)> &collective) {
  using namespace stepc::rt;
  if (!cuda::gCollectives) {
    std::unique_ptr<cuda::CollectiveStream> opened;
    if (Status st = cuda::CollectiveStream::open(opened); !st.ok())
      return s.recordError(st.withContext(what));
    cuda::gCollectives = opened.release();
  }
  if (Status st = cuda::gCollectives->start(buffer.data(), buffer.elements(), collective);
      !st.ok())
    s.recordError(st.withContext(what));
}

}  // namespace

extern "C" void _mlir_ciface_stepc_cuda_all_reduce_start_f32(StepcUnrankedF32 *input,
                                                              StepcUnrankedF32 *started,
                                                              int64_t id) {
  using namespace stepc::rt;
  cuda::Session &s = cuda::Session::get();
  if (!s.status().ok()) return s.recordError(s.status());
  F32View in(*input), out(*started);
  std::string what = "all-reduce " + std::to_string(id);
  if (!sameSize(s, in, out, what)) return;
  copyOnStream(in, out, 0, in.elements());
  if (!cuda::gNccl) return;  // one rank: the sum is the input
  size_t n = static_cast<size_t>(out.elements());
  startCollective(s, out, what,
                  [&](cuda::CUstream c) { return cuda::gNccl->allReduceSum(out.data(), n, c); });
}

extern "C" void _mlir_ciface_stepc_cuda_reduce_scatter_start_f32(StepcUnrankedF32 *input,
                                                                  StepcUnrankedF32 *started,
                                                                  int64_t first, int64_t per,
                                                                  int64_t id) {
  using namespace stepc::rt;
  cuda::Session &s = cuda::Session::get();
  if (!s.status().ok()) return s.recordError(s.status());
  F32View in(*input), out(*started);
  std::string what = "reduce-scatter " + std::to_string(id);
  if (!sameSize(s, in, out, what)) return;
  int64_t n = in.elements();
  copyOnStream(in, out, 0, n);
  if (!cuda::gNccl) return;  // one rank owns every sum
  int64_t ranks = cuda::gNccl->size();
  cuda::ScatterLayout layout = cuda::scatterLayout(first, per, n, ranks);
  if (layout == cuda::ScatterLayout::kNotNccl)
    return s.recordError(Status::error(
        what + ": NCCL reduces into N equal blocks in rank order or into one rank, but this "
        "one's " + std::to_string(n) + " floats have owners from rank " + std::to_string(first) +
        " in blocks of " + std::to_string(per) + " (a compiler bug)"));
  startCollective(s, out, what, [&](cuda::CUstream c) {
    return layout == cuda::ScatterLayout::kBlocks
               ? cuda::gNccl->reduceScatterSum(out.data(), static_cast<size_t>(per), c)
                  : cuda::gNccl->reduceSum(out.data(), static_cast<size_t>(n),
                                           static_cast<int>(first), c);
  });
}

extern "C" void _mlir_ciface_stepc_cuda_all_reduce_wait_f32(StepcUnrankedF32 *started,
                                                             StepcUnrankedF32 *output,
                                                             int64_t id) {
  using namespace stepc::rt;
  cuda::Session &s = cuda::Session::get();
  if (!s.status().ok()) return s.recordError(s.status());
  F32View in(*started), out(*output);
  std::string what = "all-reduce wait " + std::to_string(id);
  if (!sameSize(s, in, out, what)) return;
  int64_t n = in.elements();
  // The input is the starts' buffers laid end to end (a repeat's stack of them): each is found
  // by where its buffer starts and says how many floats it covers.
  for (int64_t at = 0; cuda::gNccl && at < n;) {
    int64_t size = -1;
    Status st = cuda::gCollectives ? cuda::gCollectives->wait(in.data() + at, size) : Status();
    if (!st.ok()) return s.recordError(st.withContext(what));
    if (size <= 0 || size > n - at)
      return s.recordError(Status::error(
          what + ": float " + std::to_string(at) + " of its input starts no collective in "
          "flight (a compiler bug: the starts' buffers were moved or copied before the wait)"));
    at += size;
  }
  copyOnStream(in, out, 0, n);
}

extern "C" void _mlir_ciface_stepc_cuda_all_gather_f32(StepcUnrankedF32 *placed,
                                                        StepcUnrankedF32 *whole, int64_t id) {
  using namespace stepc::rt;
  cuda::Session &s = cuda::Session::get();
  if (!s.status().ok()) return s.recordError(s.status());
  F32View in(*placed), out(*whole);
  std::string what = "all-gather " + std::to_string(id);
  if (!sameSize(s, in, out, what)) return;
  int64_t ranks = cuda::gNccl ? cuda::gNccl->size() : 1, n = out.elements() / ranks;
  if (n * ranks != out.elements())
    return s.recordError(Status::error(what + ": " + std::to_string(out.elements()) +
                                       " floats are not " + std::to_string(ranks) +
                                       " equal blocks (a compiler bug)"));
  int64_t rank = cuda::gNccl ? cuda::gNccl->rank() : 0;
  copyOnStream(in, out, rank * n, n);  // this rank's block into place
  if (!cuda::gNccl) return;
  if (Status st = cuda::gNccl->allGather(out.data(), static_cast<size_t>(n), s.stream()); !st.ok())
    s.recordError(st.withContext(what));
}
