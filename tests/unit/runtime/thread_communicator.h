//===- thread_communicator.h - ranks that are threads of one test -*- C++ -*-===//
//
// The Communicator seam (runtime/hal/cpu/Collectives.h) over threads of one process, for the
// unit tests of what runs on top of it (the tree all-reduce, NCCL's unique-id exchange).
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_TESTS_UNIT_RUNTIME_THREAD_COMMUNICATOR_H
#define STEPC_TESTS_UNIT_RUNTIME_THREAD_COMMUNICATOR_H

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/hal/cpu/Collectives.h"

namespace stepc::rt {

// Messages between threads: one FIFO per (sender, receiver).
class Mailboxes {
 public:
  void put(int from, int to, const void *data, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto *p = static_cast<const char *>(data);
    queues_[{from, to}].emplace_back(p, p + bytes);
    changed_.notify_all();
  }
  // False after 5 s without a message (a rank whose peer failed; MPI would end the run).
  bool take(int from, int to, std::vector<char> &m) {
    std::unique_lock<std::mutex> lock(mutex_);
    auto &q = queues_[{from, to}];
    if (!changed_.wait_for(lock, std::chrono::seconds(5), [&] { return !q.empty(); })) return false;
    m = std::move(q.front());
    q.pop_front();
    return true;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::pair<int, int>, std::deque<std::vector<char>>> queues_;
};

class ThreadCommunicator : public Communicator {
 public:
  ThreadCommunicator(Mailboxes &boxes, int rank, int size) : boxes_(boxes), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status send(const void *data, size_t bytes, int peer) override {
    boxes_.put(rank_, peer, data, bytes);
    return {};
  }
  Status receive(void *data, size_t bytes, int peer) override {
    std::vector<char> m;
    if (!boxes_.take(peer, rank_, m)) return Status::error("no message from the peer");
    if (m.size() != bytes) return Status::error("message of the wrong size");
    std::memcpy(data, m.data(), bytes);
    return {};
  }
  // A stand-in for the library's all-reduce, in another order than the tree: rank 0 sums the
  // ranks in a chain and sends the sum back.
  Status allReduceSumFast(float *data, int64_t n, int64_t) override {
    size_t bytes = static_cast<size_t>(n) * sizeof(float);
    if (rank_ != 0) {
      boxes_.put(rank_, 0, data, bytes);
      return receive(data, bytes, 0);
    }
    std::vector<float> theirs(static_cast<size_t>(n));
    for (int peer = 1; peer < size_; ++peer) {
      if (Status s = receive(theirs.data(), bytes, peer); !s.ok()) return s;
      for (int64_t i = 0; i < n; ++i) data[i] += theirs[static_cast<size_t>(i)];
    }
    for (int peer = 1; peer < size_; ++peer) boxes_.put(0, peer, data, bytes);
    return {};
  }
  std::string launcher() const override { return "threads"; }
  void abort(int) override {}
  void finish() override {}

 private:
  Mailboxes &boxes_;
  int rank_, size_;
};

}  // namespace stepc::rt

#endif  // STEPC_TESTS_UNIT_RUNTIME_THREAD_COMMUNICATOR_H
