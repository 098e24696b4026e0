//===- BackgroundReductions.cpp - all-reduces on a thread of their own -----===//
#include "runtime/hal/cpu/BackgroundReductions.h"

#include <algorithm>
#include <string>

#include "runtime/hal/cpu/Collectives.h"

namespace stepc::rt {

BackgroundReductions::BackgroundReductions(Communicator &ranks, AllReduceMode mode, bool threaded)
    : ranks_(ranks), mode_(mode) {
  if (threaded) thread_ = std::thread([this] { serve(); });
}

BackgroundReductions::~BackgroundReductions() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BackgroundReductions::serve() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to do
    std::function<void()> work = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    work();
    lock.lock();
    changed_.notify_all();
  }
}

Status BackgroundReductions::reduce(Reduction &r) {
  // After a failure the ranks are out of step: no further messages (the step fails with the
  // first error, and the run ends).
  if (!failed_.ok()) return failed_;
  // Fast mode sums a reduce-scatter's floats everywhere (the library's all-reduce: more bytes,
  // and its own order anyway).
  Status s = mode_ == AllReduceMode::kFast
                 ? ranks_.allReduceSumFast(r.data, r.elements, r.id)
             : r.per > 0
                 ? reduceScatterSum(ranks_, r.data, r.elements, r.first, r.per, r.id, scratch_,
                                    received_)
                 : allReduceSum(ranks_, r.data, r.elements, r.id, scratch_);
  if (!s.ok()) failed_ = s;
  return s;
}

int64_t BackgroundReductions::start(float *data, int64_t n, int64_t id) {
  return start(data, n, id, 0, 0);
}

int64_t BackgroundReductions::start(float *data, int64_t n, int64_t id, int64_t first,
                                    int64_t per) {
  Reduction *r;
  int64_t ticket;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (issued_ == waited_) issued_ = waited_ = 0;  // a new step: tickets count from 0 again
    ticket = issued_++;
    if (static_cast<size_t>(ticket) == reductions_.size())
      reductions_.push_back(std::make_unique<Reduction>());
    r = reductions_[static_cast<size_t>(ticket)].get();
    r->data = data;
    r->elements = n;
    r->id = id;
    r->first = first;
    r->per = per;
    r->done = r->waited = false;
    r->status = Status();
    if (thread_.joinable()) {
      queue_.push_back([this, r] {
        Status s = reduce(*r);
        std::lock_guard<std::mutex> inner(mutex_);
        r->status = s;
        r->done = true;
      });
      changed_.notify_all();
      return ticket;
    }
  }
  r->status = reduce(*r);  // no thread: reduce now
  r->done = true;
  return ticket;
}

int64_t BackgroundReductions::find(const float *data) {
  std::lock_guard<std::mutex> lock(mutex_);
  // The newest first: a buffer reused after its reduction was waited for may start another.
  for (int64_t t = issued_ - 1; t >= 0; --t)
    if (reductions_[static_cast<size_t>(t)]->data == data) return t;
  return -1;
}

int64_t BackgroundReductions::elements(int64_t ticket) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (ticket < 0 || ticket >= issued_) return -1;
  return reductions_[static_cast<size_t>(ticket)]->elements;
}

Status BackgroundReductions::wait(int64_t ticket) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (ticket < 0 || ticket >= issued_)
    return Status::error("no reduction was started with ticket " + std::to_string(ticket));
  Reduction &r = *reductions_[static_cast<size_t>(ticket)];
  changed_.wait(lock, [&] { return r.done; });
  if (!r.status.ok()) return r.status;
  if (!r.waited) {
    r.waited = true;
    ++waited_;
  }
  return {};
}

Status BackgroundReductions::run(const std::function<Status()> &work) {
  if (!thread_.joinable()) return work();
  Status result;
  bool done = false;
  std::unique_lock<std::mutex> lock(mutex_);
  queue_.push_back([&] {
    Status s = failed_.ok() ? work() : failed_;
    if (!s.ok() && failed_.ok()) failed_ = s;
    std::lock_guard<std::mutex> inner(mutex_);
    result = s;
    done = true;
  });
  changed_.notify_all();
  changed_.wait(lock, [&] { return done; });
  return result;
}

bool BackgroundReductions::overlaps(const Piece &p, const float *begin, const float *end) const {
  for (int r = 0; r < ranks_.size(); ++r) {
    const float *at = p.base + static_cast<int64_t>(r) * p.stride;
    if (at < end && begin < at + p.elements) return true;
  }
  return false;
}

Status BackgroundReductions::exchange(Piece &p) {
  if (!failed_.ok()) return failed_;
  Status s = allGather(ranks_, p.base, p.elements, p.id, p.stride);
  if (!s.ok()) failed_ = s;
  return s;
}

Status BackgroundReductions::gatherLater(float *whole, int64_t block, int64_t rounds, int64_t id,
                                         bool last) {
  if (rounds < 1 || block % rounds)
    return Status::error("all-gather " + std::to_string(id) + ": a block of " +
                         std::to_string(block) + " floats is not " + std::to_string(rounds) +
                         " layers (a compiler bug)");
  batch_.push_back({whole, block, rounds, id});
  if (!last) return {};
  // The previous batch is done long since (this step read every parameter); make sure.
  if (Status s = settleGathers(); !s.ok()) return s;
  std::vector<Gather> batch;
  batch.swap(batch_);
  // The forward's order: what comes before the first stacked parameter (the embedding), the
  // layers round by round (layer j of every rank's block of each stacked parameter, so the
  // forward's layer j waits only for its own rows), then what comes after (the head).
  auto stacked = [](const Gather &g) { return g.rounds > 1; };
  auto first = std::find_if(batch.begin(), batch.end(), stacked);
  auto after = std::find_if(batch.rbegin(), batch.rend(), stacked).base();
  if (first == batch.end()) after = batch.end();
  int64_t most = 1;
  for (const Gather &g : batch) most = std::max(most, g.rounds);
  std::vector<Piece> order;
  auto add = [&](const Gather &g, int64_t round) {
    int64_t rows = g.block / g.rounds;
    Piece p;
    p.base = g.whole + round * rows;
    p.elements = rows;
    p.stride = g.block;
    p.id = g.id;
    order.push_back(p);
  };
  for (auto g = batch.begin(); g != first; ++g) add(*g, 0);
  for (int64_t round = 0; round < most; ++round)
    for (auto g = first; g != after; ++g)
      if (round < g->rounds) add(*g, round);
  for (auto g = after; g != batch.end(); ++g) add(*g, 0);

  std::lock_guard<std::mutex> lock(mutex_);
  pieces_.clear();
  for (Piece &p : order) {
    pieces_.push_back(std::make_unique<Piece>(p));
    Piece *piece = pieces_.back().get();
    if (!thread_.joinable()) {  // no thread: exchange now, in order
      piece->status = exchange(*piece);
      piece->done = true;
      continue;
    }
    undone_.fetch_add(1, std::memory_order_acq_rel);
    queue_.push_back([this, piece] {
      Status s = exchange(*piece);
      std::lock_guard<std::mutex> inner(mutex_);
      piece->status = s;
      piece->done = true;
      undone_.fetch_sub(1, std::memory_order_acq_rel);
    });
  }
  changed_.notify_all();
  for (const auto &p : pieces_)
    if (p->done && !p->status.ok()) return p->status;
  return {};
}

Status BackgroundReductions::awaitGathers(const float *begin, const float *end) {
  std::unique_lock<std::mutex> lock(mutex_);
  // The exchanges run in order: the newest one that writes the range is the one to wait for.
  for (size_t i = pieces_.size(); i-- > 0;) {
    Piece &p = *pieces_[i];
    if (!overlaps(p, begin, end)) continue;
    changed_.wait(lock, [&] { return p.done; });
    break;
  }
  for (const auto &p : pieces_)
    if (p->done && !p->status.ok() && overlaps(*p, begin, end)) return p->status;
  return {};
}

Status BackgroundReductions::settleGathers() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return undone_.load(std::memory_order_acquire) == 0; });
  for (const auto &p : pieces_)
    if (!p->status.ok()) return p->status;
  return {};
}

}  // namespace stepc::rt
