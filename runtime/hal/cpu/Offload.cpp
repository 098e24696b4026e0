//===- Offload.cpp - the host tier of offloaded buffers, and its transfers ===//
#include "runtime/hal/cpu/Offload.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace stepc::rt {
namespace {

constexpr int64_t kPage = 4096;

int64_t roundUp(int64_t x) { return (x + kPage - 1) / kPage * kPage; }

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

FarStore *g_store = nullptr;

FarStore &current() {
  if (!g_store) {
    std::fprintf(stderr, "stepc: internal error: an offload transfer outside a step\n");
    std::abort();
  }
  return *g_store;
}

}  // namespace

struct FarStore::Impl {
  struct Buffer {
    bool state = false;
    int index = 0;
    int64_t layers = 0, layerBytes = 0, offset = 0;
    bool direct = false;
  };
  struct Request {
    int64_t seq;
    bool read;
    int64_t id, layer;
    void *data;
  };
  // A transfer the step has issued and not yet waited for (by waiting for it or for a later
  // one: they complete in issue order), with the slot bytes it writes (a fetch) or reads (a
  // write-back). What the emulator's access checks compare kernels' operands against.
  struct Outstanding {
    int64_t seq;
    bool read;
    int64_t id, layer;
    uintptr_t lo, hi;
  };
  std::vector<Buffer> buffers;
  std::vector<std::string> names;  // "param:cell.w1", "state:m/cell.w1", by id
  std::deque<Outstanding> outstanding;
  std::vector<std::vector<int64_t>> fetchSeq;  // the last fetch of each layer
  int fd = -1, directFd = -1;
  void *mapping = nullptr;
  int64_t fileBytes = 0;

  std::mutex mutex;
  std::condition_variable work, done;
  std::deque<Request> queue;
  int64_t issued = 0, completed = 0;
  int64_t callStart = 0;  // `issued` when the current call began (the messages count from it)
  bool stopping = false;
  std::string error;  // the first failure since begin()
  OffloadStats stats;
  std::thread worker;

  void fail(const std::string &what) {
    if (error.empty()) error = what;
  }

  // One layer's read or write, whole (positioned I/O may move less than asked).
  std::string transfer(const Request &r) {
    const Buffer &b = buffers[static_cast<size_t>(r.id)];
    int use = b.direct ? directFd : fd;
    char *p = static_cast<char *>(r.data);
    int64_t at = b.offset + r.layer * b.layerBytes, left = b.layerBytes;
    while (left > 0) {
      ssize_t n = r.read ? ::pread(use, p, static_cast<size_t>(left), at)
                         : ::pwrite(use, p, static_cast<size_t>(left), at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        return std::string(r.read ? "reading" : "writing") + " layer " + std::to_string(r.layer) +
               " of offloaded buffer " + std::to_string(r.id) + " in the host tier failed: " +
               (n < 0 ? std::strerror(errno) : "end of file");
      p += n;
      at += n;
      left -= n;
    }
    return "";
  }

  void run() {
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      work.wait(lock, [&] { return stopping || !queue.empty(); });
      if (queue.empty()) return;
      Request r = queue.front();
      queue.pop_front();
      lock.unlock();
      double start = now();
      std::string failure = transfer(r);
      double seconds = now() - start;
      lock.lock();
      stats.ioSeconds += seconds;
      ++stats.transfers;
      (r.read ? stats.fetchedBytes : stats.storedBytes) += buffers[static_cast<size_t>(r.id)].layerBytes;
      if (!failure.empty()) fail(failure);
      completed = r.seq;
      done.notify_all();
    }
  }

  bool check(int64_t id, int64_t layer, const void *slot, int64_t elements) {
    if (id < 0 || static_cast<size_t>(id) >= buffers.size()) {
      fail("an offload transfer names buffer " + std::to_string(id) + ", which the step does not have");
      return false;
    }
    const Buffer &b = buffers[static_cast<size_t>(id)];
    if (layer < 0 || layer >= b.layers || elements * 4 != b.layerBytes) {
      fail("an offload transfer of buffer " + std::to_string(id) + " asks for layer " +
           std::to_string(layer) + " of " + std::to_string(b.layers) + " with " +
           std::to_string(elements * 4) + " bytes (a layer has " + std::to_string(b.layerBytes) + ")");
      return false;
    }
    if (b.direct && reinterpret_cast<uintptr_t>(slot) % kPage != 0) {
      fail("an offload slot is not page-aligned (the memory plan aligns them for direct I/O)");
      return false;
    }
    return true;
  }

  void push(bool read, int64_t id, int64_t layer, void *data) {
    std::lock_guard<std::mutex> lock(mutex);
    int64_t seq = ++issued;
    if (read) fetchSeq[static_cast<size_t>(id)][static_cast<size_t>(layer)] = seq;
    queue.push_back({seq, read, id, layer, data});
    auto lo = reinterpret_cast<uintptr_t>(data);
    outstanding.push_back({seq, read, id, layer, lo,
                           lo + static_cast<uintptr_t>(buffers[static_cast<size_t>(id)].layerBytes)});
    work.notify_one();
  }

  // The step has waited for transfer `seq`, so for every transfer issued before it.
  void retire(int64_t seq) {
    std::lock_guard<std::mutex> lock(mutex);
    while (!outstanding.empty() && outstanding.front().seq <= seq) outstanding.pop_front();
  }

  void waitFor(int64_t seq) {
    double start = now();
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, [&] { return completed >= seq; });
    stats.exposedSeconds += now() - start;
  }
};

FarStore::FarStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

FarStore::~FarStore() {
  if (!impl_) return;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stopping = true;
    impl_->work.notify_all();
  }
  if (impl_->worker.joinable()) impl_->worker.join();
  if (impl_->mapping) ::munmap(impl_->mapping, static_cast<size_t>(impl_->fileBytes));
  if (impl_->directFd >= 0) ::close(impl_->directFd);
  if (impl_->fd >= 0) ::close(impl_->fd);
}

Status FarStore::open(const ProgramInfo &info, std::unique_ptr<FarStore> &out) {
  auto impl = std::make_unique<Impl>();
  int64_t offset = 0;
  for (const OffloadSpec &o : info.offload) {
    size_t limit = o.state ? info.state.size() : info.params.size();
    if (o.index < 0 || static_cast<size_t>(o.index) >= limit || o.layers <= 0 || o.layerBytes <= 0)
      return Status::error("program description: a bad offload entry");
    Impl::Buffer b;
    b.state = o.state;
    b.index = o.index;
    b.layers = o.layers;
    b.layerBytes = o.layerBytes;
    b.offset = offset;
    offset = roundUp(offset + o.layers * o.layerBytes);
    impl->buffers.push_back(b);
    impl->fetchSeq.emplace_back(static_cast<size_t>(o.layers), 0);
  }
  impl->fileBytes = std::max<int64_t>(offset, kPage);
  const char *dir = std::getenv("STEPC_OFFLOAD_DIR");
  if (!dir || !*dir) dir = std::getenv("TMPDIR");
  if (!dir || !*dir) dir = "/var/tmp";
  std::string path = std::string(dir) + "/stepc-offload-XXXXXX";
  std::vector<char> name(path.begin(), path.end());
  name.push_back('\0');
  impl->fd = ::mkstemp(name.data());
  for (const OffloadSpec &o : info.offload) {
    if (o.state) {
      const StateSpec &st = info.state[static_cast<size_t>(o.index)];
      impl->names.push_back("state:" + st.slot + "/" + st.param);
    } else {
      impl->names.push_back("param:" + info.params[static_cast<size_t>(o.index)].name);
    }
  }
  if (impl->fd < 0)
    return Status::error("cannot create the offload file in " + std::string(dir) + " (" +
                         std::strerror(errno) + "); set STEPC_OFFLOAD_DIR to a writable directory");
  // Gone when the process ends, however it ends.
  ::unlink(name.data());
  if (::ftruncate(impl->fd, impl->fileBytes) != 0)
    return Status::error("cannot size the offload file (" + std::string(std::strerror(errno)) + ")");
  void *map = ::mmap(nullptr, static_cast<size_t>(impl->fileBytes), PROT_READ | PROT_WRITE,
                     MAP_SHARED, impl->fd, 0);
  if (map == MAP_FAILED)
    return Status::error("cannot map the offload file (" + std::string(std::strerror(errno)) + ")");
  impl->mapping = map;
  // O_DIRECT where the file system has it (tmpfs has not): a second descriptor of the file.
  std::string self = "/proc/self/fd/" + std::to_string(impl->fd);
  impl->directFd = ::open(self.c_str(), O_RDWR | O_DIRECT);
  if (impl->directFd >= 0) {
    void *probe = nullptr;
    bool works = ::posix_memalign(&probe, kPage, kPage) == 0 &&
                 ::pread(impl->directFd, probe, kPage, 0) == kPage;
    std::free(probe);
    if (!works) {
      ::close(impl->directFd);
      impl->directFd = -1;
    }
  }
  for (Impl::Buffer &b : impl->buffers) b.direct = impl->directFd >= 0 && b.layerBytes % kPage == 0;
  impl->stats.direct = impl->directFd >= 0;
  Impl *raw = impl.get();
  impl->worker = std::thread([raw] { raw->run(); });
  out.reset(new FarStore(std::move(impl)));
  out->where_ = std::string(dir) + (out->impl_->directFd >= 0 ? " (direct I/O)" : " (buffered I/O)");
  return {};
}

float *FarStore::hostTensor(bool state, int index) const {
  for (const Impl::Buffer &b : impl_->buffers)
    if (b.state == state && b.index == index)
      return reinterpret_cast<float *>(static_cast<char *>(impl_->mapping) + b.offset);
  return nullptr;
}

Status FarStore::begin() {
  // What the training loop wrote through the mapping reaches the file before direct reads.
  // Written back, not made durable: the file is unlinked scratch, so msync(MS_SYNC) (on ext4
  // an fsync: a journal commit and a flush of the disk's cache, ~0.2 s a step on this machine
  // even with nothing dirty) buys nothing. The page cache knows every page written through
  // the shared mapping (the first write to a clean page faults and marks it dirty), so writing
  // back the file's dirty pages is enough; with none dirty this returns at once.
  if (::sync_file_range(impl_->fd, 0, 0,
                        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                            SYNC_FILE_RANGE_WAIT_AFTER) != 0)
    return Status::error("cannot write back the offload file (" + std::string(std::strerror(errno)) +
                         ")");
  // Then out of RAM: the mapping's pages unmapped and the file's clean pages dropped from the
  // page cache, so the host tier costs no memory while the step runs (the next whole-tensor
  // access between steps reads them back from the file).
  ::madvise(impl_->mapping, static_cast<size_t>(impl_->fileBytes), MADV_DONTNEED);
  ::posix_fadvise(impl_->fd, 0, impl_->fileBytes, POSIX_FADV_DONTNEED);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->error.clear();
  impl_->callStart = impl_->issued;
  return {};
}

Status FarStore::end() {
  flush();
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (!impl_->error.empty()) return Status::error(impl_->error);
  return {};
}

void FarStore::fetch(int64_t id, int64_t layer, float *slot, int64_t elements) {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (!impl_->check(id, layer, slot, elements)) return;
  }
  impl_->push(true, id, layer, slot);
}

void FarStore::store(int64_t id, int64_t layer, const float *slot, int64_t elements) {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (!impl_->check(id, layer, slot, elements)) return;
  }
  impl_->push(false, id, layer, const_cast<float *>(slot));
}

void FarStore::wait(int64_t id, int64_t layer) {
  int64_t seq = 0;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (id < 0 || static_cast<size_t>(id) >= impl_->fetchSeq.size() || layer < 0 ||
        static_cast<size_t>(layer) >= impl_->fetchSeq[static_cast<size_t>(id)].size()) {
      impl_->fail("an offload wait names a buffer or layer the step does not have");
      return;
    }
    seq = impl_->fetchSeq[static_cast<size_t>(id)][static_cast<size_t>(layer)];
  }
  impl_->waitFor(seq);
  impl_->retire(seq);
}

void FarStore::flush() {
  int64_t seq = 0;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    seq = impl_->issued;
  }
  impl_->waitFor(seq);
  impl_->retire(seq);
}

void FarStore::access(uintptr_t lo, uintptr_t hi, bool writes, const char *what) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (!impl_->error.empty() || lo >= hi) return;  // the first race is the one reported
  for (const Impl::Outstanding &t : impl_->outstanding) {
    if (hi <= t.lo || t.hi <= lo) continue;
    // A write-back only reads its slot: reading it beside the copy is fine, writing is not.
    if (!t.read && !writes) continue;
    const std::string &buffer = impl_->names[static_cast<size_t>(t.id)];
    char range[96];
    std::snprintf(range, sizeof range, "bytes %zu..%zu of its slot",
                  static_cast<size_t>(std::max(lo, t.lo) - t.lo),
                  static_cast<size_t>(std::min(hi, t.hi) - t.lo));
    impl_->fail(std::string("offload race: ") + what + (writes ? " writes " : " reads ") + range +
                (t.read ? " while the prefetch of " : " while the write-back of ") + buffer +
                " layer " + std::to_string(t.layer) + " (transfer " +
                std::to_string(t.seq - impl_->callStart) +
                " of this call) is in flight: the plan " +
                (t.read ? "has not waited for it" : "has not flushed it") + " before this command");
    return;
  }
}

OffloadStats FarStore::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->stats;
}

void setFarStore(FarStore *store) { g_store = store; }

}  // namespace stepc::rt

extern "C" void _mlir_ciface_stepc_offload_fetch(int64_t id, int64_t layer, StepcUnrankedF32 *slot) {
  stepc::rt::F32View view(*slot);
  stepc::rt::current().fetch(id, layer, view.data(), view.elements());
}

extern "C" void _mlir_ciface_stepc_offload_store(int64_t id, int64_t layer, StepcUnrankedF32 *slot) {
  stepc::rt::F32View view(*slot);
  stepc::rt::current().store(id, layer, view.data(), view.elements());
}

extern "C" void stepc_offload_wait(int64_t id, int64_t layer) { stepc::rt::current().wait(id, layer); }

extern "C" void stepc_offload_flush() { stepc::rt::current().flush(); }

namespace {

// The bytes a memref<*x...> view spans, from its descriptor: from its first element to one
// past its last (1 + sum of (size - 1) * stride elements; none when a size is zero).
void accessView(const StepcUnrankedF32 *m, int64_t bytes, int64_t writes, int64_t what) {
  const auto *d = static_cast<const int64_t *>(m->descriptor);
  auto aligned = static_cast<uintptr_t>(d[1]);
  int64_t offset = d[2], span = 1;
  for (int64_t i = 0; i < m->rank; ++i) {
    int64_t size = d[3 + i], stride = d[3 + m->rank + i];
    if (size == 0) span = 0;
    if (span) span += (size - 1) * stride;
  }
  uintptr_t lo = aligned + static_cast<uintptr_t>(offset * bytes);
  stepc::rt::current().access(lo, lo + static_cast<uintptr_t>(span * bytes), writes != 0,
                              reinterpret_cast<const char *>(what));
}

}  // namespace

// One entry per element type the step's buffers have (the descriptor's layout is the same).
#define STEPC_OFFLOAD_ACCESS(T)                                                                  \
  extern "C" void _mlir_ciface_stepc_offload_access_##T(StepcUnrankedF32 *m, int64_t bytes,     \
                                                        int64_t writes, int64_t what) {         \
    accessView(m, bytes, writes, what);                                                          \
  }
STEPC_OFFLOAD_ACCESS(f32)
STEPC_OFFLOAD_ACCESS(f64)
STEPC_OFFLOAD_ACCESS(f16)
STEPC_OFFLOAD_ACCESS(bf16)
STEPC_OFFLOAD_ACCESS(i1)
STEPC_OFFLOAD_ACCESS(i8)
STEPC_OFFLOAD_ACCESS(i32)
STEPC_OFFLOAD_ACCESS(i64)
