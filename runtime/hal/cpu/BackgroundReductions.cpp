//===- BackgroundReductions.cpp - all-reduces on a thread of their own -----===//
#include "runtime/hal/cpu/BackgroundReductions.h"

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

}  // namespace stepc::rt
