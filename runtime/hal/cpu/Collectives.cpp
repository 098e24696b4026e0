//===- Collectives.cpp - the tree all-reduce and the all-gather -----------===//
#include "runtime/hal/cpu/Collectives.h"

#include <algorithm>
#include <cstring>

#include "runtime/hal/cpu/BackgroundReductions.h"

namespace stepc::rt {
namespace {

// Set once at start-up, before any step; read by the host thread that runs the step's plan.
Communicator *gCommunicator = nullptr;
AllReduceMode gMode = AllReduceMode::kTree;
std::string gError;
std::vector<float> gScratch;
// The thread of the overlapped reductions, started by the first stepc_all_reduce_start_f32
// of a run with more than one rank. While it exists every collective of a step runs on it.
std::unique_ptr<BackgroundReductions> gBackground;

BackgroundReductions &background() {
  if (!gBackground)
    gBackground = std::make_unique<BackgroundReductions>(*gCommunicator, gMode,
                                                         gCommunicator->threadSafe());
  return *gBackground;
}

// Runs a collective on the reductions' thread if it exists (so that it comes after the
// reductions in flight, and only one thread talks to the ranks), else here.
Status onCollectiveThread(const std::function<Status()> &work) {
  return gBackground ? gBackground->run(work) : work();
}

// Each message is preceded by this header, so ranks that issue different reductions (a bug,
// or executables of different programs under one mpirun) fail instead of summing unrelated
// buffers.
struct Header {
  int64_t id, elements;
};

// The header a collective's first message carries, checked against this rank's.
Status checkHeader(const Header &theirs, const Header &mine, int peer, int rank,
                   const char *what) {
  if (theirs.id == mine.id && theirs.elements == mine.elements) return {};
  return Status::error("rank " + std::to_string(peer) + " sent collective " +
                       std::to_string(theirs.id) + " of " + std::to_string(theirs.elements) +
                       " floats while rank " + std::to_string(rank) + " runs " + what + " " +
                       std::to_string(mine.id) + " of " + std::to_string(mine.elements) +
                       ": the ranks run different programs");
}

}  // namespace

void setCommunicator(Communicator *communicator) {
  gBackground.reset();  // joins its thread: nothing is in flight between steps
  gCommunicator = communicator;
}
void setAllReduceMode(AllReduceMode mode) {
  gBackground.reset();
  gMode = mode;
}
AllReduceMode allReduceMode() { return gMode; }

Status allReduceSum(Communicator &c, float *data, int64_t n, int64_t id,
                     std::vector<float> &scratch) {
  int rank = c.rank(), size = c.size();
  // A large buffer on a power-of-two rank count: the reduce-scatter (the same tree, each rank
  // summing its block) and then the all-gather of the blocks. The same bits, and each rank
  // sends 2(N-1)/N of the buffer where the tree's rank 0 receives and sends it log2 N times
  // one after the other: half the time on 2 ranks.
  if (size > 1 && (size & (size - 1)) == 0 && n % size == 0 && n >= kSplitAllReduceFloats) {
    thread_local std::vector<float> received;
    int64_t per = n / size;
    if (Status s = reduceScatterSum(c, data, n, 0, per, id, scratch, received); !s.ok()) return s;
    return allGather(c, data, per, id);
  }
  size_t bytes = static_cast<size_t>(n) * sizeof(float);
  Header mine{id, n};
  for (int level = 1; level < size; level *= 2) {
    if (rank % (2 * level) == level) {  // hand the subtree's sum to the left and wait
      if (Status s = c.send(&mine, sizeof mine, rank - level); !s.ok()) return s;
      if (Status s = c.send(data, bytes, rank - level); !s.ok()) return s;
      break;
    }
    int peer = rank + level;
    if (peer >= size) continue;
    Header theirs{};
    if (Status s = c.receive(&theirs, sizeof theirs, peer); !s.ok()) return s;
    if (Status s = checkHeader(theirs, mine, peer, rank, "reduction"); !s.ok()) return s;
    scratch.resize(static_cast<size_t>(n));
    if (Status s = c.receive(scratch.data(), bytes, peer); !s.ok()) return s;
    for (int64_t i = 0; i < n; ++i) data[i] = data[i] + scratch[static_cast<size_t>(i)];
  }
  // Rank 0 holds the sum: down the same tree, widest level first.
  int top = 1;
  while (top < size) top *= 2;
  for (int level = top / 2; level >= 1; level /= 2) {
    if (rank % (2 * level) == 0 && rank + level < size) {
      if (Status s = c.send(data, bytes, rank + level); !s.ok()) return s;
    } else if (rank % (2 * level) == level) {
      if (Status s = c.receive(data, bytes, rank - level); !s.ok()) return s;
    }
  }
  return {};
}

Status allGather(Communicator &c, float *whole, int64_t blockElements, int64_t id,
                 int64_t stride) {
  int rank = c.rank(), size = c.size();
  if (size & (size - 1))
    return Status::error("the all-gather needs a power-of-two rank count, found " +
                         std::to_string(size));
  if (stride <= blockElements) stride = blockElements;
  Header mine{id, blockElements};
  size_t blockBytes = static_cast<size_t>(blockElements) * sizeof(float);
  // The d blocks from `group` on: one message where they are contiguous, else one a block.
  auto blocks = [&](int group, int d, auto &&move) -> Status {
    if (stride == blockElements)
      return move(whole + static_cast<int64_t>(group) * blockElements,
                  blockBytes * static_cast<size_t>(d));
    for (int k = group; k < group + d; ++k)
      if (Status s = move(whole + static_cast<int64_t>(k) * stride, blockBytes); !s.ok()) return s;
    return {};
  };
  // After the exchange at distance d each rank holds the 2d blocks of its aligned group.
  for (int d = 1; d < size; d *= 2) {
    int peer = rank ^ d;
    auto give = [&]() -> Status {
      if (Status s = c.send(&mine, sizeof mine, peer); !s.ok()) return s;
      return blocks(rank & ~(d - 1), d,
                    [&](float *at, size_t bytes) { return c.send(at, bytes, peer); });
    };
    auto take = [&]() -> Status {
      Header header{};
      if (Status s = c.receive(&header, sizeof header, peer); !s.ok()) return s;
      if (Status s = checkHeader(header, mine, peer, rank, "all-gather"); !s.ok()) return s;
      return blocks(peer & ~(d - 1), d,
                    [&](float *at, size_t bytes) { return c.receive(at, bytes, peer); });
    };
    // Blocking sends: the lower rank sends first, the higher receives first.
    Status s = rank < peer ? give() : take();
    if (s.ok()) s = rank < peer ? take() : give();
    if (!s.ok()) return s;
  }
  return {};
}

Status reduceScatterSum(Communicator &c, float *data, int64_t n, int64_t first, int64_t per,
                        int64_t id, std::vector<float> &send, std::vector<float> &receive) {
  if (c.size() == 1) return {};
  int rank = c.rank(), size = c.size();
  if (size & (size - 1))
    return Status::error("the reduce-scatter needs a power-of-two rank count, found " +
                         std::to_string(size));
  if (per <= 0 || n % per != 0 || first < 0 || first + n / per > size)
    return Status::error("reduce-scatter " + std::to_string(id) + ": owners " +
                         std::to_string(first) + " + [0, " + std::to_string(n / std::max<int64_t>(per, 1)) +
                         ") of " + std::to_string(n) + " floats do not fit " +
                         std::to_string(size) + " ranks (a compiler bug, or another rank count)");
  Header mine{id, n};
  int64_t owners = n / per;
  for (int d = 1; d < size; d *= 2) {
    int peer = rank ^ d;
    // The owners both still hold agree with both ranks below bit d; bit d says who keeps.
    auto held = [&](int64_t o) { return (o & (d - 1)) == (rank & (d - 1)); };
    size_t out = 0, in = 0;
    for (int64_t k = 0; k < owners; ++k) {
      int64_t o = first + k;
      if (!held(o)) continue;
      ((o & d) == (rank & d) ? in : out) += static_cast<size_t>(per);
    }
    if (out == 0 && in == 0) continue;
    send.resize(out);
    receive.resize(in);
    size_t at = 0;
    for (int64_t k = 0; k < owners; ++k) {
      int64_t o = first + k;
      if (held(o) && (o & d) != (rank & d)) {
        std::memcpy(send.data() + at, data + k * per, static_cast<size_t>(per) * sizeof(float));
        at += static_cast<size_t>(per);
      }
    }
    auto give = [&]() -> Status {
      if (out == 0) return {};
      if (Status s = c.send(&mine, sizeof mine, peer); !s.ok()) return s;
      return c.send(send.data(), out * sizeof(float), peer);
    };
    auto take = [&]() -> Status {
      if (in == 0) return {};
      Header theirs{};
      if (Status s = c.receive(&theirs, sizeof theirs, peer); !s.ok()) return s;
      if (Status s = checkHeader(theirs, mine, peer, rank, "reduce-scatter"); !s.ok()) return s;
      return c.receive(receive.data(), in * sizeof(float), peer);
    };
    // Blocking sends: the lower rank sends first, the higher receives first.
    Status s = rank < peer ? give() : take();
    if (s.ok()) s = rank < peer ? take() : give();
    if (!s.ok()) return s;
    at = 0;
    for (int64_t k = 0; k < owners; ++k) {
      int64_t o = first + k;
      if (!held(o) || (o & d) != (rank & d)) continue;
      float *row = data + k * per;
      const float *theirs = receive.data() + at;
      for (int64_t i = 0; i < per; ++i) row[i] = row[i] + theirs[i];
      at += static_cast<size_t>(per);
    }
  }
  return {};
}

bool takeCollectiveError(std::string &message) {
  if (gError.empty()) return false;
  message = std::move(gError);
  gError.clear();
  return true;
}

Status settleGathers() {
  return gBackground ? gBackground->settleGathers() : Status();
}

}  // namespace stepc::rt

extern "C" int64_t stepc_micro_batch_begin(int64_t count) {
  using stepc::rt::gCommunicator;
  if (!gCommunicator) return 0;
  return gCommunicator->rank() * (count / gCommunicator->size());
}

extern "C" int64_t stepc_micro_batch_end(int64_t count) {
  using stepc::rt::gCommunicator;
  if (!gCommunicator) return count;
  return (gCommunicator->rank() + 1) * (count / gCommunicator->size());
}

extern "C" void _mlir_ciface_stepc_all_reduce_sum_f32(StepcUnrankedF32 *input,
                                                       StepcUnrankedF32 *output, int64_t id) {
  using namespace stepc::rt;
  if (!gError.empty()) return;  // the step fails after it ends, with the first error
  F32View in(*input), out(*output);
  if (!in.contiguous() || !out.contiguous() || in.elements() != out.elements()) {
    gError = "all-reduce " + std::to_string(id) + ": expected two contiguous buffers of the same "
             "size (a compiler bug)";
    return;
  }
  int64_t n = in.elements();
  if (in.data() != out.data())
    std::memmove(out.data(), in.data(), static_cast<size_t>(n) * sizeof(float));
  if (!gCommunicator || gCommunicator->size() == 1) return;
  Status s = onCollectiveThread([&] {
    return gMode == AllReduceMode::kFast
               ? gCommunicator->allReduceSumFast(out.data(), n, id)
               : allReduceSum(*gCommunicator, out.data(), n, id, gScratch);
  });
  if (!s.ok())
    gError = "all-reduce " + std::to_string(id) + " on rank " +
             std::to_string(gCommunicator->rank()) + ": " + s.message();
}

extern "C" int64_t stepc_rank() {
  using stepc::rt::gCommunicator;
  return gCommunicator ? gCommunicator->rank() : 0;
}

namespace {

// An all-gather's operands checked, and this rank's block of `placed` copied into `whole`
// (`placed` is the step's scratch, free once the step returns); the whole buffer and the
// floats of a block, or null after setting the step's error.
float *placeOwnBlock(StepcUnrankedF32 *placed, StepcUnrankedF32 *whole, int64_t id,
                     int64_t &block) {
  using namespace stepc::rt;
  F32View in(*placed), out(*whole);
  int ranks = gCommunicator ? gCommunicator->size() : 1;
  block = out.elements() / ranks;
  if (!in.contiguous() || !out.contiguous() || in.elements() != out.elements() ||
      block * ranks != out.elements()) {
    gError = "all-gather " + std::to_string(id) + ": expected two contiguous buffers of the "
             "same size, in " + std::to_string(ranks) + " blocks, found " +
             std::to_string(in.elements()) + " and " + std::to_string(out.elements()) +
             " floats (a compiler bug)";
    return nullptr;
  }
  int64_t at = stepc_rank() * block;
  if (in.data() != out.data())
    std::memmove(out.data() + at, in.data() + at, static_cast<size_t>(block) * sizeof(float));
  return out.data();
}

void gatherFailed(int64_t id, const stepc::rt::Status &s) {
  using namespace stepc::rt;
  gError = "all-gather " + std::to_string(id) + " on rank " +
           std::to_string(gCommunicator->rank()) + ": " + s.message();
}

}  // namespace

extern "C" void _mlir_ciface_stepc_all_gather_f32(StepcUnrankedF32 *placed,
                                                   StepcUnrankedF32 *whole, int64_t id) {
  using namespace stepc::rt;
  if (!gError.empty()) return;
  int64_t n = 0;
  float *data = placeOwnBlock(placed, whole, id, n);
  if (!data || !gCommunicator || gCommunicator->size() == 1) return;
  if (Status s = onCollectiveThread([&] { return allGather(*gCommunicator, data, n, id); });
      !s.ok())
    gatherFailed(id, s);
}

// The start's result buffer is where its reduction runs (the input is copied into it first
// unless bufferization made them one buffer); only the wait reads it.
extern "C" void _mlir_ciface_stepc_all_reduce_start_f32(StepcUnrankedF32 *input,
                                                         StepcUnrankedF32 *started, int64_t id) {
  using namespace stepc::rt;
  if (!gError.empty()) return;
  F32View in(*input), out(*started);
  if (!in.contiguous() || !out.contiguous() || in.elements() != out.elements() ||
      in.elements() == 0) {
    gError = "all-reduce " + std::to_string(id) + ": expected two contiguous non-empty buffers "
             "of the same size (a compiler bug)";
    return;
  }
  int64_t n = in.elements();
  if (in.data() != out.data())
    std::memmove(out.data(), in.data(), static_cast<size_t>(n) * sizeof(float));
  if (!gCommunicator || gCommunicator->size() == 1) return;  // one rank: the sum is the input
  background().start(out.data(), n, id);
}

extern "C" void _mlir_ciface_stepc_reduce_scatter_start_f32(StepcUnrankedF32 *input,
                                                             StepcUnrankedF32 *started,
                                                             int64_t first, int64_t per,
                                                             int64_t id) {
  using namespace stepc::rt;
  if (!gError.empty()) return;
  F32View in(*input), out(*started);
  int64_t n = in.elements();
  if (!in.contiguous() || !out.contiguous() || n != out.elements() || n == 0 || per <= 0 ||
      n % per != 0) {
    gError = "reduce-scatter " + std::to_string(id) + ": expected two contiguous non-empty "
             "buffers of the same size in blocks of " + std::to_string(per) +
             " floats (a compiler bug)";
    return;
  }
  if (in.data() != out.data())
    std::memmove(out.data(), in.data(), static_cast<size_t>(n) * sizeof(float));
  if (!gCommunicator || gCommunicator->size() == 1) return;  // one rank owns every sum
  background().start(out.data(), n, id, first, per);
}

extern "C" void _mlir_ciface_stepc_all_reduce_wait_f32(StepcUnrankedF32 *started,
                                                        StepcUnrankedF32 *output, int64_t id) {
  using namespace stepc::rt;
  if (!gError.empty()) return;
  F32View in(*started), out(*output);
  if (!in.contiguous() || !out.contiguous() || in.elements() != out.elements()) {
    gError = "all-reduce wait " + std::to_string(id) + ": expected two contiguous buffers of "
             "the same size (a compiler bug)";
    return;
  }
  int64_t n = in.elements();
  bool ranks = gCommunicator && gCommunicator->size() > 1;
  // The input is the starts' buffers laid end to end (a repeat's stack of them): each
  // reduction is found by where its buffer starts and says how many floats it covers.
  for (int64_t at = 0; ranks && at < n;) {
    int64_t ticket = gBackground ? gBackground->find(in.data() + at) : -1;
    int64_t size = ticket < 0 ? -1 : gBackground->elements(ticket);
    if (size <= 0 || size > n - at) {
      gError = "all-reduce wait " + std::to_string(id) + " on rank " +
               std::to_string(gCommunicator->rank()) + ": float " + std::to_string(at) +
               " of its input starts no reduction in flight (a compiler bug: the starts' "
               "buffers were moved or copied before the wait)";
      return;
    }
    if (Status s = gBackground->wait(ticket); !s.ok()) {
      gError = "all-reduce " + std::to_string(id) + " on rank " +
               std::to_string(gCommunicator->rank()) + ": " + s.message();
      return;
    }
    at += size;
  }
  if (in.data() != out.data())
    std::memmove(out.data(), in.data(), static_cast<size_t>(n) * sizeof(float));
}

extern "C" void _mlir_ciface_stepc_all_gather_start_f32(StepcUnrankedF32 *placed,
                                                         StepcUnrankedF32 *whole, int64_t rounds,
                                                         int64_t last, int64_t id) {
  using namespace stepc::rt;
  if (!gError.empty()) return;
  int64_t n = 0;
  float *data = placeOwnBlock(placed, whole, id, n);
  if (!data || !gCommunicator || gCommunicator->size() == 1) return;
  if (Status s = background().gatherLater(data, n, rounds, id, last != 0); !s.ok())
    gatherFailed(id, s);
}

extern "C" void _mlir_ciface_stepc_all_gather_wait_f32(StepcUnrankedF32 *view) {
  using namespace stepc::rt;
  if (!gBackground || !gBackground->gathersPending() || !gError.empty()) return;
  F32View v(*view);
  // The floats the view spans, first to last (a strided view: all between them).
  const float *begin = v.data(), *end = v.data() + 1;
  for (int64_t d = 0; d < v.rank; ++d) {
    if (v.sizes[d] == 0) return;
    int64_t reach = (v.sizes[d] - 1) * v.strides[d];
    (reach < 0 ? begin : end) += reach;
  }
  if (Status s = gBackground->awaitGathers(begin, end); !s.ok())
    gError = "all-gather on rank " + std::to_string(gCommunicator->rank()) + ": " + s.message();
}
