//===- MpiCommunicator.cpp - the ranks of mpirun, through libmpi ----------===//
//
// Open MPI's libmpi.so.40, loaded with dlopen when mpirun started this process, so an
// executable needs no MPI to start and one rank never loads it. The handles MPI_COMM_WORLD and
// MPI_BYTE are, in Open MPI's ABI, the addresses of the globals ompi_mpi_comm_world and
// ompi_mpi_byte (likewise ompi_mpi_float, ompi_mpi_long_long_int, ompi_mpi_op_sum and
// ompi_mpi_op_max; MPI_IN_PLACE is (void *)1). The library is loaded RTLD_GLOBAL: Open MPI loads its own components, which
// resolve their symbols against it.
//
//===----------------------------------------------------------------------===//
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "runtime/hal/cpu/Collectives.h"

namespace stepc::rt {
namespace {

using Handle = void *;
struct MpiApi {
  int (*initThread)(int *, char ***, int, int *);
  int (*finalize)();
  int (*abort)(Handle, int);
  int (*commRank)(Handle, int *);
  int (*commSize)(Handle, int *);
  int (*getLibraryVersion)(char *, int *);
  int (*errorString)(int, char *, int *);
  int (*allreduce)(const void *, void *, int, Handle, Handle, Handle);
  int (*isend)(const void *, int, Handle, int, int, Handle, Handle *);
  int (*irecv)(void *, int, Handle, int, int, Handle, Handle *);
  int (*test)(Handle *, int *, void *);
  Handle commWorld, byte, float32, int64, sum, max;
};

constexpr int kTag = 17;
// Messages are sent in pieces below MPI's int count (an empty message sends nothing: both
// sides skip it alike).
constexpr size_t kPiece = size_t{1} << 30;
int piece(size_t bytes, size_t at) { return static_cast<int>(std::min(kPiece, bytes - at)); }

template <typename F>
bool bind(void *library, const char *name, F &out) {
  out = reinterpret_cast<F>(dlsym(library, name));
  return out != nullptr;
}

class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator(const MpiApi &api, int rank, int size, std::string version, bool threadSafe)
      : api_(api), rank_(rank), size_(size), version_(std::move(version)),
        threadSafe_(threadSafe) {}
  bool threadSafe() const override { return threadSafe_; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string launcher() const override { return version_; }

  // Sends and receives are nonblocking requests polled with short sleeps rather than MPI's
  // blocking calls, which spin: on a machine with no core to spare (2 ranks on 2 cores), the
  // reductions' thread spinning while it waits for a peer takes its own rank's core from the
  // backward it is meant to overlap.
  Status send(const void *data, size_t bytes, int peer) override {
    for (size_t at = 0; at < bytes; at += kPiece) {
      Handle request = nullptr;
      if (int rc = api_.isend(static_cast<const char *>(data) + at, piece(bytes, at), api_.byte,
                              peer, kTag, api_.commWorld, &request))
        return failure("MPI_Isend to rank " + std::to_string(peer), rc);
      if (Status s = complete(request, "MPI_Send to rank " + std::to_string(peer)); !s.ok())
        return s;
    }
    return {};
  }
  Status receive(void *data, size_t bytes, int peer) override {
    for (size_t at = 0; at < bytes; at += kPiece) {
      Handle request = nullptr;
      if (int rc = api_.irecv(static_cast<char *>(data) + at, piece(bytes, at), api_.byte, peer,
                              kTag, api_.commWorld, &request))
        return failure("MPI_Irecv from rank " + std::to_string(peer), rc);
      if (Status s = complete(request, "MPI_Recv from rank " + std::to_string(peer)); !s.ok())
        return s;
    }
    return {};
  }
  Status allReduceSumFast(float *data, int64_t n, int64_t id) override {
    // The ranks agree on the reduction first: the maximum of (id, -id, n, -n) is this rank's
    // own only when every rank has the same id and size.
    long long mine[4] = {id, -id, n, -n}, most[4];
    if (int rc = api_.allreduce(mine, most, 4, api_.int64, api_.max, api_.commWorld))
      return failure("MPI_Allreduce (the reduction's id)", rc);
    if (std::memcmp(mine, most, sizeof mine) != 0)
      return Status::error("the ranks reach different reductions (this rank's " +
                           std::to_string(id) + " of " + std::to_string(n) + " floats; another's " +
                           std::to_string(most[0] == id ? -most[1] : most[0]) +
                           "): the ranks run different programs");
    void *inPlace = reinterpret_cast<void *>(1);  // Open MPI's MPI_IN_PLACE
    for (int64_t at = 0; at < n; at += kPiece / sizeof(float)) {
      int count = static_cast<int>(std::min<int64_t>(kPiece / sizeof(float), n - at));
      if (int rc = api_.allreduce(inPlace, data + at, count, api_.float32, api_.sum,
                                  api_.commWorld))
        return failure("MPI_Allreduce", rc);
    }
    return {};
  }
  void abort(int code) override { api_.abort(api_.commWorld, code); }

  // Polls `request` (MPI_Test drives Open MPI's progress), sleeping between tests once a few
  // quick ones found it pending, longer the longer it stays pending (up to 200 us: a peer
  // still in its backward is milliseconds away, and each wake-up costs the cores time).
  Status complete(Handle &request, const std::string &what) {
    int sleepUs = 10;
    for (int polls = 0;; ++polls) {
      int done = 0;
      if (int rc = api_.test(&request, &done, nullptr))  // MPI_STATUS_IGNORE
        return failure(what, rc);
      if (done) return {};
      if (polls < 64) continue;
      std::this_thread::sleep_for(std::chrono::microseconds(sleepUs));
      sleepUs = std::min(2 * sleepUs, 200);
    }
  }
  void finish() override { api_.finalize(); }

 private:
  Status failure(const std::string &what, int rc) const {
    char text[512];
    int length = 0;
    std::string reason = api_.errorString(rc, text, &length) == 0 ? std::string(text, length)
                                                                  : "error " + std::to_string(rc);
    return Status::error(what + " failed: " + reason);
  }
  MpiApi api_;
  int rank_, size_;
  std::string version_;
  bool threadSafe_;
};

}  // namespace

Status openCommunicator(std::unique_ptr<Communicator> &out) {
  out.reset();
  const char *world = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (!world) {
    if (std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK"))
      return Status::error("started by an MPI launcher other than Open MPI's mpirun (PMI_SIZE or "
                           "PMIX_RANK is set, OMPI_COMM_WORLD_SIZE is not); data-parallel runs "
                           "need Open MPI (Debian: openmpi-bin)");
    return {};
  }
  const char *path = std::getenv("STEPC_MPI_LIBRARY");
  if (!path || !*path) path = "libmpi.so.40";
  void *library = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!library)
    return Status::error(std::string("mpirun started this process (OMPI_COMM_WORLD_SIZE=") +
                         world + ") but " + path + " cannot be loaded: " + dlerror() +
                         " (install Open MPI: Debian's openmpi-bin)");
  MpiApi api{};
  bool ok = bind(library, "MPI_Init_thread", api.initThread) && bind(library, "MPI_Finalize", api.finalize) &&
            bind(library, "MPI_Abort", api.abort) &&
            bind(library, "MPI_Comm_rank", api.commRank) &&
            bind(library, "MPI_Comm_size", api.commSize) &&
            bind(library, "MPI_Get_library_version", api.getLibraryVersion) &&
            bind(library, "MPI_Error_string", api.errorString) &&
            bind(library, "MPI_Allreduce", api.allreduce) &&
            bind(library, "MPI_Isend", api.isend) && bind(library, "MPI_Irecv", api.irecv) &&
            bind(library, "MPI_Test", api.test);
  api.commWorld = dlsym(library, "ompi_mpi_comm_world");
  api.byte = dlsym(library, "ompi_mpi_byte");
  api.float32 = dlsym(library, "ompi_mpi_float");
  api.int64 = dlsym(library, "ompi_mpi_long_long_int");
  api.sum = dlsym(library, "ompi_mpi_op_sum");
  api.max = dlsym(library, "ompi_mpi_op_max");
  if (!ok || !api.commWorld || !api.byte || !api.float32 || !api.int64 || !api.sum || !api.max)
    return Status::error(std::string(path) + " lacks the MPI functions or Open MPI's handles "
                         "(ompi_mpi_comm_world, ompi_mpi_byte, ...): not Open MPI's libmpi");
  // MPI_THREAD_SERIALIZED (2 in every MPI): the overlapped reductions call MPI from a thread
  // of their own, never at the same time as the main thread.
  constexpr int kThreadSerialized = 2;
  int provided = 0;
  if (int rc = api.initThread(nullptr, nullptr, kThreadSerialized, &provided))
    return Status::error("MPI_Init_thread failed with error " + std::to_string(rc));
  int rank = 0, size = 1;
  api.commRank(api.commWorld, &rank);
  api.commSize(api.commWorld, &size);
  char version[1024] = {};
  int length = 0;
  api.getLibraryVersion(version, &length);
  std::string name(version, static_cast<size_t>(std::max(length, 0)));
  name = name.substr(0, name.find_first_of(",\n"));  // "Open MPI v4.1.4"
  out = std::make_unique<MpiCommunicator>(api, rank, size, name, provided >= kThreadSerialized);
  return {};
}

}  // namespace stepc::rt
