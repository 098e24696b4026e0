//===- CudaStep.cpp - calls of a compiled CUDA step -----------------------===//
#include "runtime/hal/cuda/CudaStep.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/hal/cuda/Session.h"

namespace stepc::rt::cuda {

CudaStep::~CudaStep() {
  Session &s = Session::get();
  if (!s.status().ok()) return;
  const Api &api = s.driver().api();
  for (auto &[fn, m] : entries_) {
    if (m.graph) api.cuGraphExecDestroy(m.graph);
    for (auto &[pointer, bytes] : m.device)
      if (pointer) api.cuMemFree(pointer);
    for (auto &[pointer, bytes] : m.pinned)
      if (pointer) api.cuMemFreeHost(pointer);
  }
}

Status CudaStep::launch(Mirrors &m, Entry fn, std::vector<void *> &args) {
  Session &s = Session::get();
  const Api &api = s.driver().api();
  const char *env = std::getenv("STEPC_CUDA_GRAPH");
  bool graphs = !(env && std::string(env) == "0") && !m.graphDisabled;
  ++m.calls;
  if (graphs && m.graph)
    return s.driver().check(api.cuGraphLaunch(m.graph, s.stream()), "cuGraphLaunch");
  // The host plan, run directly or under capture: an offloading step's transfer calls go to
  // the host tier, and its copy stream joins the compute stream at the end.
  auto run = [&] {
    if (tier_) {
      setHostTier(tier_.get());
      tier_->beginStep();
    }
    fn(args.data());
    if (tier_) {
      tier_->endStep();
      setHostTier(nullptr);
    }
  };
  if (!graphs || m.calls == 1) {
    run();
    return {};
  }
  // Capture mode 0: global, the strictest; anything not capturable fails the capture.
  CUgraph captured = nullptr;
  Status st = s.driver().check(api.cuStreamBeginCapture(s.stream(), 0), "cuStreamBeginCapture");
  if (st.ok()) {
    run();
    st = s.driver().check(api.cuStreamEndCapture(s.stream(), &captured), "cuStreamEndCapture");
    if (Status launched = s.takeError(); st.ok() && !launched.ok()) st = launched;
  }
  if (st.ok())
    st = s.driver().check(api.cuGraphInstantiate(&m.graph, captured, 0),
                          "cuGraphInstantiateWithFlags");
  if (captured) api.cuGraphDestroy(captured);
  if (!st.ok()) {
    // Nothing of the captured step ran: run it directly, now and from now on.
    m.graphDisabled = true;
    m.graph = nullptr;
    std::fprintf(stderr, "stepc: the step could not be captured as a CUDA graph (%s); "
                 "launching its kernels one by one\n", st.message().c_str());
    run();
    return {};
  }
  return s.driver().check(api.cuGraphLaunch(m.graph, s.stream()), "cuGraphLaunch");
}

void *CudaStep::pinned(Mirrors &m, size_t slot, size_t bytes) {
  Session &s = Session::get();
  if (m.pinned.size() <= slot) m.pinned.resize(slot + 1, {nullptr, 0});
  auto &[pointer, size] = m.pinned[slot];
  if (size < bytes) {
    if (pointer) s.driver().api().cuMemFreeHost(pointer);
    pointer = nullptr;
    size = 0;
    if (s.driver().api().cuMemHostAlloc(&pointer, bytes, 0) != kSuccess) return nullptr;
    size = bytes;
  }
  return pointer;
}

Status CudaStep::mirror(Mirrors &m, size_t slot, size_t bytes, CUdeviceptr &out) {
  Session &s = Session::get();
  if (m.device.size() <= slot) m.device.resize(slot + 1, {0, 0});
  auto &[pointer, size] = m.device[slot];
  if (size < bytes) {
    if (pointer) s.driver().api().cuMemFree(pointer);
    pointer = 0;
    size = 0;
    if (Status st = s.driver().check(s.driver().api().cuMemAlloc(&pointer, bytes), "cuMemAlloc");
        !st.ok())
      return st;
    size = bytes;
  }
  out = pointer;
  return {};
}

namespace {

// The host buffer of a param or state binding, or null.
const TensorBuffer *persistent(const Binding &b, const StepBuffers &buffers) {
  if (b.kind == Binding::Kind::kParam) return &buffers.params.at(b.index);
  if (b.kind == Binding::Kind::kState) return &buffers.state.at(b.index);
  return nullptr;
}

}  // namespace

Status CudaStep::call(const ProgramInfo &info, const EntryDescription &entry, Entry fn,
                      const StepBuffers &buffers, int64_t step, bool resident,
                      std::vector<std::vector<float>> &results) {
  Session &s = Session::get();
  if (!s.status().ok()) return s.status();
  const Api &api = s.driver().api();
  CUstream stream = s.stream();
  Mirrors &m = entries_[fn];
  m.entry = &entry;
  // An offloading step's host tier, shared by its entries (pinned, opened once).
  if (!info.offload.empty() && !tier_)
    if (Status st = HostTier::open(info, tier_); !st.ok()) return st;
  bool upload = !(resident && m.resident);  // resident params and state are on the device
  std::vector<void *> args;
  int64_t stepValue = step;
  for (size_t slot = 0; slot < entry.args.size(); ++slot) {
    const Binding &b = entry.args[slot];
    const void *host = nullptr;
    size_t bytes = 0;
    bool copy = true;
    if (const TensorBuffer *t = persistent(b, buffers)) {
      host = t->data;
      bytes = static_cast<size_t>(t->elements()) * 4;
      copy = upload;
      // Offloaded: the plan reaches it only through the host tier's transfers, so it has no
      // device mirror (its argument is null); its values go into the tier instead.
      if (int id = offloadId(b); id >= 0) {
        if (tier_->bytes(id) != bytes)
          return Status::error("program description: an offloaded buffer's size differs from "
                               "its tensor's");
        if (upload) std::memcpy(tier_->tensor(id), t->data, bytes);
        args.push_back(nullptr);
        continue;
      }
    } else if (b.kind == Binding::Kind::kBatch) {
      // Through a pinned staging buffer, so that the copy is asynchronous.
      const TensorBuffer &t = buffers.batch.at(b.index);
      bytes = static_cast<size_t>(t.elements()) * 4;
      host = t.data;
      if (void *staging = pinned(m, slot, bytes)) {
        std::memcpy(staging, t.data, bytes);
        host = staging;
      }
    } else if (b.kind == Binding::Kind::kStep) {
      host = &stepValue;
      bytes = sizeof stepValue;
    } else {
      return Status::error("program description: a metric cannot be an argument");
    }
    CUdeviceptr d = 0;
    if (Status st = mirror(m, slot, bytes, d); !st.ok()) return st;
    if (copy)
      if (Status st = s.driver().check(api.cuMemcpyHtoDAsync(d, host, bytes, stream),
                                       "cuMemcpyHtoDAsync");
          !st.ok())
        return st;
    args.push_back(reinterpret_cast<void *>(d));
  }
  size_t firstResult = entry.args.size();
  results.resize(entry.results.size());
  for (size_t i = 0; i < entry.results.size(); ++i) {
    const Binding &b = entry.results[i];
    int64_t n = b.kind == Binding::Kind::kParam   ? elementCount(info.params[b.index].shape)
                : b.kind == Binding::Kind::kState ? elementCount(localShape(info.state[b.index]))  // a rank's block (--shard-optimizer)
                                                  : 1;
    results[i].assign(static_cast<size_t>(n), 0.0f);
    CUdeviceptr d = 0;
    if (Status st = mirror(m, firstResult + i, static_cast<size_t>(n) * 4, d); !st.ok()) return st;
    args.push_back(reinterpret_cast<void *>(d));
  }
  (void)s.takeError();  // a stale error of an earlier, failed step is not this one's
  if (!start_)
    for (CUevent *e : {&start_, &end_})
      if (Status st = s.driver().check(api.cuEventCreate(e, 0), "cuEventCreate"); !st.ok())
        return st;
  if (Status st = s.driver().check(api.cuEventRecord(start_, stream), "cuEventRecord"); !st.ok())
    return st;
  if (Status st = launch(m, fn, args); !st.ok()) return st;
  if (Status st = s.driver().check(api.cuEventRecord(end_, stream), "cuEventRecord"); !st.ok())
    return st;
  m.resident = resident;
  for (size_t i = 0; i < entry.results.size(); ++i)
    if (Status st = s.driver().check(
            api.cuMemcpyDtoHAsync(results[i].data(), m.device[firstResult + i].first,
                                  results[i].size() * 4, stream),
            "cuMemcpyDtoHAsync");
        !st.ok())
      return st;
  if (Status st = s.driver().check(api.cuStreamSynchronize(stream), "cuStreamSynchronize");
      !st.ok())
    return st;
  float ms = 0;
  if (Status st = s.driver().check(api.cuEventElapsedTime(&ms, start_, end_), "cuEventElapsedTime");
      !st.ok())
    return st;
  deviceMs_ = ms;
  return s.takeError();
}

Status CudaStep::syncToHost(Entry fn, const StepBuffers &buffers) {
  auto it = entries_.find(fn);
  if (it == entries_.end() || !it->second.resident) return {};
  Mirrors &m = it->second;
  Session &s = Session::get();
  const Api &api = s.driver().api();
  for (size_t slot = 0; slot < m.entry->args.size(); ++slot) {
    const TensorBuffer *t = persistent(m.entry->args[slot], buffers);
    // An offloaded one is in the host tier: copied after the stream is done.
    if (!t || offloadId(m.entry->args[slot]) >= 0) continue;
    if (Status st = s.driver().check(
            api.cuMemcpyDtoHAsync(t->data, m.device[slot].first,
                                  static_cast<size_t>(t->elements()) * 4, s.stream()),
            "cuMemcpyDtoHAsync");
        !st.ok())
      return st;
  }
  if (Status st = s.driver().check(api.cuStreamSynchronize(s.stream()), "cuStreamSynchronize");
      !st.ok())
    return st;
  for (size_t slot = 0; slot < m.entry->args.size(); ++slot)
    if (const TensorBuffer *t = persistent(m.entry->args[slot], buffers))
      if (int id = offloadId(m.entry->args[slot]); id >= 0)
        std::memcpy(t->data, tier_->tensor(id), tier_->bytes(id));
  return {};
}

int CudaStep::offloadId(const Binding &b) const {
  if (!tier_ || (b.kind != Binding::Kind::kParam && b.kind != Binding::Kind::kState)) return -1;
  return tier_->idOf(b.kind == Binding::Kind::kState, b.index);
}

}  // namespace stepc::rt::cuda
