//===- fake_nccl.cpp - a stand-in libnccl for nccl_test -------------------===//
//
// NCCL's C ABI (the functions runtime/hal/cuda/Nccl.cpp binds) over ranks that are threads of
// one process and buffers in host memory: ncclCommInitRank waits until every rank of the id
// has joined, as NCCL does; ncclAllReduce sums the ranks' buffers in rank order, ncclReduce
// the same into the root only, ncclReduceScatter gives rank r the sums of block r and ncclAllGather puts the ranks' blocks
// end to end. The test steers it through fake_nccl_* hooks.
//
//===----------------------------------------------------------------------===//
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

namespace {

struct UniqueId {
  char internal[128];
};

// A group of ranks that share an id: the rendezvous of init and of each all-reduce.
struct Group {
  int size = 0, joined = 0;
  std::vector<const float *> send;
  std::vector<float *> receive;
  int arrived = 0, left = 0;
  long long round = 0;
};

struct Comm {
  Group *group;
  int rank;
};

std::mutex gMutex;
std::condition_variable gChanged;
std::map<long long, Group> gGroups;
long long gNextId = 1;
int gFailNext = 0;      // the result the next call returns (0: none)
void *gLastStream = nullptr;
const char *gLastCall = "";

long long key(const UniqueId &id) {
  long long k;
  std::memcpy(&k, id.internal, sizeof k);
  return k;
}

}  // namespace

extern "C" {

// Test hooks.
void fake_nccl_fail_next(int result) { gFailNext = result; }
void *fake_nccl_last_stream() { return gLastStream; }
const char *fake_nccl_last_call() { return gLastCall; }

int ncclGetVersion(int *version) {
  *version = 22809;  // 2.28.9
  return 0;
}

const char *ncclGetErrorString(int result) {
  return result == 3 ? "internal error - please report this issue to the NCCL developers"
                     : "unhandled error";
}

int ncclGetUniqueId(UniqueId *id) {
  std::lock_guard<std::mutex> lock(gMutex);
  if (int r = gFailNext) return gFailNext = 0, r;
  std::memset(id, 0, sizeof *id);
  long long k = gNextId++;
  std::memcpy(id->internal, &k, sizeof k);
  return 0;
}

int ncclCommInitRank(Comm **comm, int ranks, UniqueId id, int rank) {
  std::unique_lock<std::mutex> lock(gMutex);
  if (int r = gFailNext) return gFailNext = 0, r;
  if (rank < 0 || rank >= ranks) return 4;  // ncclInvalidArgument
  Group &g = gGroups[key(id)];
  if (g.size == 0) {
    g.size = ranks;
    g.send.assign(ranks, nullptr);
    g.receive.assign(ranks, nullptr);
  }
  ++g.joined;
  gChanged.notify_all();
  gChanged.wait(lock, [&] { return g.joined >= g.size; });
  *comm = new Comm{&g, rank};
  return 0;
}

}  // extern "C"

namespace {

// One collective's rendezvous: every rank hands in its send buffer, each computes what it
// receives from all of them before any rank writes (the calls may be in place), then writes
// it. `result(group, rank)` gives the floats this rank receives (none: its buffer is left
// alone).
template <typename F>
int meet(const char *call, Comm *comm, const void *send, void *receive, void *stream, F result) {
  std::unique_lock<std::mutex> lock(gMutex);
  if (int r = gFailNext) return gFailNext = 0, r;
  gLastStream = stream;
  gLastCall = call;
  Group &g = *comm->group;
  long long round = g.round;
  g.send[comm->rank] = static_cast<const float *>(send);
  g.receive[comm->rank] = static_cast<float *>(receive);
  if (++g.arrived == g.size) gChanged.notify_all();
  gChanged.wait(lock, [&] { return g.arrived == g.size || g.round != round; });
  std::vector<float> mine = result(g, comm->rank);
  if (++g.left == g.size) {
    g.arrived = g.left = 0;
    ++g.round;
    gChanged.notify_all();
  }
  gChanged.wait(lock, [&] { return g.round != round; });
  if (!mine.empty()) std::memcpy(receive, mine.data(), mine.size() * sizeof(float));
  return 0;
}

}  // namespace

extern "C" {

int ncclAllReduce(const void *send, void *receive, size_t count, int type, int op, Comm *comm,
                  void *stream) {
  if (type != 7 || op != 0) return 4;  // only ncclFloat32, ncclSum
  return meet("ncclAllReduce", comm, send, receive, stream, [&](Group &g, int) {
    std::vector<float> sum(count, 0.0f);
    for (int r = 0; r < g.size; ++r)
      for (size_t i = 0; i < count; ++i) sum[i] += g.send[r][i];
    return sum;
  });
}

// Rank `root` receives the sums; the others' receive buffers are left alone.
int ncclReduce(const void *send, void *receive, size_t count, int type, int op, int root,
               Comm *comm, void *stream) {
  if (type != 7 || op != 0) return 4;
  if (root < 0 || root >= comm->group->size) return 4;
  return meet("ncclReduce", comm, send, receive, stream, [&](Group &g, int rank) {
    std::vector<float> sum;
    if (rank != root) return sum;
    sum.assign(count, 0.0f);
    for (int r = 0; r < g.size; ++r)
      for (size_t i = 0; i < count; ++i) sum[i] += g.send[r][i];
    return sum;
  });
}

// Rank r receives the sums of block r of the ranks' send buffers (NCCL's layout).
int ncclReduceScatter(const void *send, void *receive, size_t count, int type, int op,
                      Comm *comm, void *stream) {
  if (type != 7 || op != 0) return 4;
  return meet("ncclReduceScatter", comm, send, receive, stream, [&](Group &g, int rank) {
    std::vector<float> sum(count, 0.0f);
    for (int r = 0; r < g.size; ++r)
      for (size_t i = 0; i < count; ++i) sum[i] += g.send[r][rank * count + i];
    return sum;
  });
}

// Every rank receives the ranks' send buffers end to end, in rank order.
int ncclAllGather(const void *send, void *receive, size_t count, int type, Comm *comm,
                  void *stream) {
  if (type != 7) return 4;
  return meet("ncclAllGather", comm, send, receive, stream, [&](Group &g, int) {
    std::vector<float> all;
    for (int r = 0; r < g.size; ++r) all.insert(all.end(), g.send[r], g.send[r] + count);
    return all;
  });
}

int ncclCommDestroy(Comm *comm) {
  delete comm;
  return 0;
}

int ncclCommAbort(Comm *comm) {
  delete comm;
  return 0;
}

}  // extern "C"
