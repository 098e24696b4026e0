//===- HostTier.cpp - planned offload on the GPU: pinned host tier and copy stream ===//
#include "runtime/hal/cuda/HostTier.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime/hal/cuda/Session.h"

namespace stepc::rt::cuda {
namespace {

constexpr unsigned kEventDisableTiming = 0x2;  // CU_EVENT_DISABLE_TIMING
constexpr unsigned kStreamNonBlocking = 0x1;   // CU_STREAM_NON_BLOCKING

HostTier *g_tier = nullptr;

HostTier &current() {
  if (!g_tier) {
    std::fprintf(stderr, "stepc: internal error: an offload transfer outside a CUDA step\n");
    std::abort();
  }
  return *g_tier;
}

}  // namespace

Status HostTier::open(const ProgramInfo &info, std::unique_ptr<HostTier> &out) {
  Session &s = Session::get();
  if (!s.status().ok()) return s.status();
  const Api &api = s.driver().api();
  std::unique_ptr<HostTier> tier(new HostTier());
  for (const OffloadSpec &o : info.offload) {
    size_t limit = o.state ? info.state.size() : info.params.size();
    if (o.index < 0 || static_cast<size_t>(o.index) >= limit || o.layers <= 0 || o.layerBytes <= 0)
      return Status::error("program description: a bad offload entry");
    Buffer b;
    b.state = o.state;
    b.index = o.index;
    b.layers = o.layers;
    b.layerBytes = o.layerBytes;
    b.bytes = static_cast<size_t>(o.layers * o.layerBytes);
    void *host = nullptr;
    if (Status st = s.driver().check(api.cuMemHostAlloc(&host, b.bytes, 0),
                                     "cuMemHostAlloc (the offload's host tier)");
        !st.ok())
      return st;
    b.host = static_cast<float *>(host);
    tier->buffers_.push_back(b);
    tier->fetchOf_.emplace_back(static_cast<size_t>(o.layers), 0);
  }
  if (Status st = s.driver().check(api.cuStreamCreate(&tier->copy_, kStreamNonBlocking),
                                   "cuStreamCreate (the offload's copy stream)");
      !st.ok())
    return st;
  out = std::move(tier);
  return {};
}

HostTier::~HostTier() {
  Session &s = Session::get();
  if (!s.status().ok()) return;
  for (Buffer &b : buffers_)
    if (b.host) s.driver().api().cuMemFreeHost(b.host);
}

int HostTier::idOf(bool state, int index) const {
  for (size_t i = 0; i < buffers_.size(); ++i)
    if (buffers_[i].state == state && buffers_[i].index == index) return static_cast<int>(i);
  return -1;
}

void HostTier::beginStep() { issued_ = 0; }

void HostTier::endStep() { flush(); }

bool HostTier::check(int64_t id, int64_t layer, int64_t elements) {
  Session &s = Session::get();
  if (id < 0 || static_cast<size_t>(id) >= buffers_.size()) {
    s.recordError(Status::error("an offload transfer names buffer " + std::to_string(id) +
                                ", which the step does not have"));
    return false;
  }
  const Buffer &b = buffers_[static_cast<size_t>(id)];
  if (layer < 0 || layer >= b.layers || (elements >= 0 && elements * 4 != b.layerBytes)) {
    s.recordError(Status::error("an offload transfer of buffer " + std::to_string(id) +
                                " asks for layer " + std::to_string(layer) + " of " +
                                std::to_string(b.layers) + " with " + std::to_string(elements * 4) +
                                " bytes (a layer has " + std::to_string(b.layerBytes) + ")"));
    return false;
  }
  return true;
}

bool HostTier::events(size_t n) {
  Session &s = Session::get();
  const Api &api = s.driver().api();
  while (done_.size() <= n) {
    CUevent pair[2] = {nullptr, nullptr};  // ready, done
    for (CUevent &e : pair)
      if (Status st = s.driver().check(api.cuEventCreate(&e, kEventDisableTiming), "cuEventCreate");
          !st.ok()) {
        s.recordError(st);
        return false;
      }
    ready_.push_back(pair[0]);
    done_.push_back(pair[1]);
  }
  return true;
}

void HostTier::transfer(bool toDevice, int64_t id, int64_t layer, CUdeviceptr slot,
                        int64_t elements) {
  Session &s = Session::get();
  if (!s.status().ok() || !check(id, layer, elements)) return;
  size_t n = issued_;
  if (!events(n)) return;
  const Api &api = s.driver().api();
  const Buffer &b = buffers_[static_cast<size_t>(id)];
  char *host = reinterpret_cast<char *>(b.host) + layer * b.layerBytes;
  size_t bytes = static_cast<size_t>(b.layerBytes);
  // The slot's earlier kernels (and the fetch's earlier readers) are done before the copy.
  Status st = s.driver().check(api.cuEventRecord(ready_[n], s.stream()), "cuEventRecord");
  if (st.ok())
    st = s.driver().check(api.cuStreamWaitEvent(copy_, ready_[n], 0), "cuStreamWaitEvent");
  if (st.ok())
    st = toDevice ? s.driver().check(api.cuMemcpyHtoDAsync(slot, host, bytes, copy_),
                                     "cuMemcpyHtoDAsync (an offload fetch)")
                  : s.driver().check(api.cuMemcpyDtoHAsync(host, slot, bytes, copy_),
                                     "cuMemcpyDtoHAsync (an offload write-back)");
  if (st.ok()) st = s.driver().check(api.cuEventRecord(done_[n], copy_), "cuEventRecord");
  if (!st.ok()) return s.recordError(st);
  if (toDevice) fetchOf_[static_cast<size_t>(id)][static_cast<size_t>(layer)] = n + 1;
  issued_ = n + 1;
}

void HostTier::fetch(int64_t id, int64_t layer, CUdeviceptr slot, int64_t elements) {
  transfer(true, id, layer, slot, elements);
}

void HostTier::store(int64_t id, int64_t layer, CUdeviceptr slot, int64_t elements) {
  transfer(false, id, layer, slot, elements);
}

void HostTier::wait(int64_t id, int64_t layer) {
  Session &s = Session::get();
  if (!s.status().ok() || !check(id, layer, -1)) return;
  size_t n = fetchOf_[static_cast<size_t>(id)][static_cast<size_t>(layer)];
  if (n == 0 || n > issued_) {
    s.recordError(Status::error("the step waits for layer " + std::to_string(layer) +
                                " of offloaded buffer " + std::to_string(id) +
                                ", which it has not fetched"));
    return;
  }
  if (Status st = s.driver().check(s.driver().api().cuStreamWaitEvent(s.stream(), done_[n - 1], 0),
                                   "cuStreamWaitEvent");
      !st.ok())
    s.recordError(st);
}

void HostTier::flush() {
  Session &s = Session::get();
  if (!s.status().ok() || issued_ == 0) return;
  if (Status st = s.driver().check(
          s.driver().api().cuStreamWaitEvent(s.stream(), done_[issued_ - 1], 0),
          "cuStreamWaitEvent");
      !st.ok())
    s.recordError(st);
}

void setHostTier(HostTier *tier) { g_tier = tier; }

}  // namespace stepc::rt::cuda

namespace {

stepc::rt::cuda::CUdeviceptr devicePointer(const stepc::rt::F32View &view) {
  return reinterpret_cast<stepc::rt::cuda::CUdeviceptr>(view.data());
}

}  // namespace

extern "C" void _mlir_ciface_stepc_cuda_offload_fetch(int64_t id, int64_t layer,
                                                      StepcUnrankedF32 *slot) {
  stepc::rt::F32View view(*slot);
  stepc::rt::cuda::current().fetch(id, layer, devicePointer(view), view.elements());
}

extern "C" void _mlir_ciface_stepc_cuda_offload_store(int64_t id, int64_t layer,
                                                      StepcUnrankedF32 *slot) {
  stepc::rt::F32View view(*slot);
  stepc::rt::cuda::current().store(id, layer, devicePointer(view), view.elements());
}

extern "C" void stepc_cuda_offload_wait(int64_t id, int64_t layer) {
  stepc::rt::cuda::current().wait(id, layer);
}

extern "C" void stepc_cuda_offload_flush() { stepc::rt::cuda::current().flush(); }
