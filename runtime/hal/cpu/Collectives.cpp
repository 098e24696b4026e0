//===- Collectives.cpp - the deterministic tree all-reduce ----------------===//
#include "runtime/hal/cpu/Collectives.h"

#include <cstring>

namespace stepc::rt {
namespace {

// Set once at start-up, before any step; read by the host thread that runs the step's plan.
Communicator *gCommunicator = nullptr;
AllReduceMode gMode = AllReduceMode::kTree;
std::string gError;
std::vector<float> gScratch;

// Each message is preceded by this header, so ranks that issue different reductions (a bug,
// or executables of different programs under one mpirun) fail instead of summing unrelated
// buffers.
struct Header {
  int64_t id, elements;
};

}  // namespace

void setCommunicator(Communicator *communicator) { gCommunicator = communicator; }
void setAllReduceMode(AllReduceMode mode) { gMode = mode; }
AllReduceMode allReduceMode() { return gMode; }

Status allReduceSum(Communicator &c, float *data, int64_t n, int64_t id,
                     std::vector<float> &scratch) {
  int rank = c.rank(), size = c.size();
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
    if (theirs.id != id || theirs.elements != n)
      return Status::error("rank " + std::to_string(peer) + " sent reduction " +
                           std::to_string(theirs.id) + " of " + std::to_string(theirs.elements) +
                           " floats while rank " + std::to_string(rank) + " reduces " +
                           std::to_string(id) + " of " + std::to_string(n) +
                           ": the ranks run different programs");
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

bool takeCollectiveError(std::string &message) {
  if (gError.empty()) return false;
  message = std::move(gError);
  gError.clear();
  return true;
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
  Status s = gMode == AllReduceMode::kFast ? gCommunicator->allReduceSumFast(out.data(), n, id)
                                           : allReduceSum(*gCommunicator, out.data(), n, id, gScratch);
  if (!s.ok())
    gError = "all-reduce " + std::to_string(id) + " on rank " +
             std::to_string(gCommunicator->rank()) + ": " + s.message();
}
