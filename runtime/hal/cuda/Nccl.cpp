//===- Nccl.cpp - NCCL, loaded at run time, for data-parallel CUDA steps --===//
#include "runtime/hal/cuda/Nccl.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

#include "runtime/hal/cpu/UnrankedMemRef.h"
#include "runtime/hal/cuda/Session.h"

extern "C" void stepc_cuda_copy(int64_t dst, int64_t src, int64_t bytes);

namespace stepc::rt::cuda {
namespace {

NcclCommunicator *gNccl = nullptr;

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
            bind(library, "ncclCommDestroy", api.commDestroy) &&
            bind(library, "ncclCommAbort", api.commAbort) &&
            bind(library, "ncclGetErrorString", api.getErrorString);
  if (!ok)
    return Status::error(std::string(path) + " lacks NCCL's functions (ncclGetUniqueId, "
                         "ncclCommInitRank, ncclAllReduce, ...): not NCCL 2");
  int code = 0;
  api.getVersion(&code);
  NcclCommunicator probe(api, nullptr, versionName(code));
  NcclUniqueId id{};
  int rank = ranks.rank(), size = ranks.size();
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
  out.reset(new NcclCommunicator(api, comm, probe.version_));
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

Status NcclCommunicator::check(NcclResult result, const char *call) const {
  if (result == 0) return {};
  const char *text = api_.getErrorString ? api_.getErrorString(result) : nullptr;
  return Status::error(std::string(call) + " failed (" + version_ + "): " +
                       (text ? text : "error " + std::to_string(result)));
}

void setNcclCommunicator(NcclCommunicator *communicator) { gNccl = communicator; }

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
