//===- BackgroundReductions.h - all-reduces that overlap the backward -*- C++ -*-===//
//
// The data-parallel step issues each layer's gradient reduction as soon as the backward has
// the layer's gradient (stepc_all_reduce_start_f32) and waits for them all before the
// optimizer (stepc_all_reduce_wait_f32; compiler/Codegen/Common/CollectivesToRuntime.cpp).
// The reductions run here, on one thread of their own, in the order they were started: every
// rank starts the same reductions in the same order (one program), so the ranks' messages
// pair up as they do for the synchronous call, and each is the same fixed tree
// (Collectives.h): the bits do not change, only when the work happens.
//
// A start hands over a buffer the step leaves untouched until the wait (the start's result,
// which only the wait reads; the input is copied into it first unless it is that buffer), and
// the reduction runs in it: no copy of the gradients outside the step's planned memory. The
// wait finds each reduction by where its buffer starts: the starts' results laid end to end (a
// repeat stacks them) are the wait's input.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_HAL_CPU_BACKGROUNDREDUCTIONS_H
#define STEPC_RUNTIME_HAL_CPU_BACKGROUNDREDUCTIONS_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/base/Status.h"

namespace stepc::rt {

class Communicator;
enum class AllReduceMode;

class BackgroundReductions {
 public:
  /// Reduces over `ranks` (which must outlive this) in `mode`. With `threaded` false (an MPI
  /// library that cannot be called from a second thread) each start reduces before it
  /// returns: the same bits, nothing overlapped.
  BackgroundReductions(Communicator &ranks, AllReduceMode mode, bool threaded);
  /// Waits for the reductions in flight and ends the thread.
  ~BackgroundReductions();

  /// Queues the sum over the ranks of the `n` floats at `data`, in place; `id` numbers the
  /// reduction in the step (the ranks check they agree). `data` must stay untouched until the
  /// wait. Returns the ticket.
  int64_t start(float *data, int64_t n, int64_t id);
  /// A reduce-scatter instead (reduceScatterSum): floats [k·per, (k+1)·per) are summed only
  /// on rank first + k. Waited for like a reduction.
  int64_t start(float *data, int64_t n, int64_t id, int64_t first, int64_t per);
  /// The ticket of the newest reduction of this step whose buffer starts at `data`, or -1.
  int64_t find(const float *data);
  /// The floats a ticket's reduction covers, or -1 for a ticket that was not started.
  int64_t elements(int64_t ticket);
  /// Waits for `ticket`'s reduction: its buffer then holds the sum.
  Status wait(int64_t ticket);
  /// Runs `work` (another collective) on the reductions' thread after those queued before
  /// it, and returns its status: one thread talks to the ranks while a step runs.
  Status run(const std::function<Status()> &work);

  /// --shard-optimizer's deferred all-gather (stepc_all_gather_start_f32): the exchange of
  /// `whole` (a block of `block` floats per rank, this rank's in place) joins the step's
  /// batch; `rounds` > 1 splits it into one exchange per layer of a block (a stacked
  /// parameter). `last` hands the batch to the thread in the forward's order (Collectives.h),
  /// after the previous batch is done. Without the thread the exchanges run then, here.
  Status gatherLater(float *whole, int64_t block, int64_t rounds, int64_t id, bool last);
  /// Waits for the handed-over gathers that write any float of [begin, end).
  Status awaitGathers(const float *begin, const float *end);
  /// Waits for all of them.
  Status settleGathers();
  /// Whether a handed-over gather is not done yet: the waits' fast path.
  bool gathersPending() const { return undone_.load(std::memory_order_acquire) > 0; }

 private:
  struct Reduction {
    float *data = nullptr;
    int64_t elements = 0, id = 0;
    int64_t first = 0, per = 0;  // a reduce-scatter's owners (per = 0: an all-reduce)
    bool done = false, waited = false;
    Status status;
  };
  // A deferred gather, and one exchange of it: every rank's `elements` floats at
  // base + r·stride.
  struct Gather {
    float *whole;
    int64_t block, rounds, id;
  };
  struct Piece {
    float *base = nullptr;
    int64_t elements = 0, stride = 0, id = 0;
    bool done = false;
    Status status;
  };
  bool overlaps(const Piece &p, const float *begin, const float *end) const;
  Status exchange(Piece &p);
  void serve();
  Status reduce(Reduction &r);

  Communicator &ranks_;
  AllReduceMode mode_;
  std::vector<float> scratch_, received_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::unique_ptr<Reduction>> reductions_;  // by ticket; reused step to step
  int64_t issued_ = 0, waited_ = 0;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  Status failed_;  // the first failure: later reductions are not attempted
  std::vector<Gather> batch_;                   // this step's gathers, until the last
  std::vector<std::unique_ptr<Piece>> pieces_;  // the last batch's exchanges, in order
  std::atomic<int64_t> undone_{0};              // of pieces_
  std::thread thread_;
};

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_HAL_CPU_BACKGROUNDREDUCTIONS_H
