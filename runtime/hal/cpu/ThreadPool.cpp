//===- ThreadPool.cpp - the threads a compiled step runs on ---------------===//
#include "runtime/hal/cpu/ThreadPool.h"

#include <sched.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace stepc::rt {

int availableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

namespace {

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

class Pool {
 public:
  explicit Pool(int threads) : threads_(threads) {
    for (int w = 1; w < threads_; ++w) workers_.emplace_back([this, w] { work(w); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      epoch_.fetch_add(1);
    }
    wake_.notify_all();
    for (std::thread &t : workers_) t.join();
  }
  int threads() const { return threads_; }

  void run(int64_t lo, int64_t hi, RangeFn fn, void *context) {
    int64_t n = hi - lo;
    int parts = static_cast<int>(std::min<int64_t>(threads_, n));
    if (parts <= 1) {
      if (n > 0) fn(context, lo, hi);
      return;
    }
    fn_ = fn;
    context_ = context;
    lo_ = lo;
    hi_ = hi;
    parts_ = parts;
    pending_.store(threads_ - 1);
    {
      // Under the lock, so a worker that is about to sleep sees the new epoch.
      std::lock_guard<std::mutex> lock(mutex_);
      epoch_.fetch_add(1);
    }
    wake_.notify_all();
    runPart(0);
    while (pending_.load(std::memory_order_acquire) != 0) cpuRelax();
  }

 private:
  void runPart(int part) {
    if (part >= parts_) return;
    int64_t n = hi_ - lo_;
    int64_t a = lo_ + n * part / parts_, b = lo_ + n * (part + 1) / parts_;
    if (a < b) fn_(context_, a, b);
  }

  void work(int w) {
    uint64_t seen = 0;
    for (;;) {
      // Spin first: the next loop usually comes within microseconds.
      for (int i = 0; i < 20000 && epoch_.load(std::memory_order_acquire) == seen; ++i) cpuRelax();
      if (epoch_.load(std::memory_order_acquire) == seen) {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return epoch_.load() != seen; });
      }
      seen = epoch_.load(std::memory_order_acquire);
      if (stop_) return;
      runPart(w);
      pending_.fetch_sub(1, std::memory_order_release);
    }
  }

  int threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<uint64_t> epoch_{0};
  std::atomic<int> pending_{0};
  bool stop_ = false;
  // The loop being run; written before the epoch is bumped.
  RangeFn fn_ = nullptr;
  void *context_ = nullptr;
  int64_t lo_ = 0, hi_ = 0;
  int parts_ = 0;
};

std::unique_ptr<Pool> &pool() {
  static std::unique_ptr<Pool> instance;
  return instance;
}

}  // namespace

void setPoolThreads(int threads) {
  if (threads <= 0) threads = availableCpus();
  if (pool() && pool()->threads() == threads) return;
  pool().reset();
  pool() = std::make_unique<Pool>(threads);
}

int poolThreads() { return pool() ? pool()->threads() : 1; }

void parallelFor(int64_t lo, int64_t hi, RangeFn fn, void *context) {
  if (!pool()) {
    if (hi > lo) fn(context, lo, hi);
    return;
  }
  pool()->run(lo, hi, fn, context);
}

}  // namespace stepc::rt

namespace {

struct Task {
  void (*task)(void **, int64_t, int64_t);
  void **argv;
};

void runTask(void *context, int64_t lo, int64_t hi) {
  auto *t = static_cast<Task *>(context);
  t->task(t->argv, lo, hi);
}

}  // namespace

extern "C" void stepc_parallel_for(void (*task)(void **argv, int64_t lo, int64_t hi),
                                   void **argv, int64_t lo, int64_t hi) {
  Task t{task, argv};
  stepc::rt::parallelFor(lo, hi, runTask, &t);
}
