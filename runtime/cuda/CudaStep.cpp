//===- CudaStep.cpp - one call of a compiled CUDA step --------------------===//
#include "runtime/cuda/CudaStep.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/cuda/Session.h"

namespace stepc::rt::cuda {

CudaStep::~CudaStep() {
  Session &s = Session::get();
  if (!s.status().ok()) return;
  for (auto &[fn, graph] : graphs_)
    if (graph.exec) s.driver().api().cuGraphExecDestroy(graph.exec);
  for (auto &[pointer, bytes] : device_)
    if (pointer) s.driver().api().cuMemFree(pointer);
  for (auto &[pointer, bytes] : pinned_)
    if (pointer) s.driver().api().cuMemFreeHost(pointer);
}

Status CudaStep::launch(void (*fn)(void **), std::vector<void *> &args) {
  Session &s = Session::get();
  const Api &api = s.driver().api();
  Graph &graph = graphs_[fn];
  const char *env = std::getenv("STEPC_CUDA_GRAPH");
  bool graphs = !(env && std::string(env) == "0") && !graph.disabled;
  ++graph.calls;
  if (graphs && graph.exec)
    return s.driver().check(api.cuGraphLaunch(graph.exec, s.stream()), "cuGraphLaunch");
  if (!graphs || graph.calls == 1) {
    fn(args.data());
    return {};
  }
  // Capture mode 0: global, the strictest; anything not capturable fails the capture.
  CUgraph captured = nullptr;
  Status st = s.driver().check(api.cuStreamBeginCapture(s.stream(), 0), "cuStreamBeginCapture");
  if (st.ok()) {
    fn(args.data());
    st = s.driver().check(api.cuStreamEndCapture(s.stream(), &captured), "cuStreamEndCapture");
    if (Status launched = s.takeError(); st.ok() && !launched.ok()) st = launched;
  }
  if (st.ok())
    st = s.driver().check(api.cuGraphInstantiate(&graph.exec, captured, 0),
                          "cuGraphInstantiateWithFlags");
  if (captured) api.cuGraphDestroy(captured);
  if (!st.ok()) {
    // Nothing of the captured step ran: run it directly, now and from now on.
    graph.disabled = true;
    graph.exec = nullptr;
    std::fprintf(stderr, "stepc: the step could not be captured as a CUDA graph (%s); "
                 "launching its kernels one by one\n", st.message().c_str());
    fn(args.data());
    return {};
  }
  return s.driver().check(api.cuGraphLaunch(graph.exec, s.stream()), "cuGraphLaunch");
}

void *CudaStep::pinned(size_t slot, size_t bytes) {
  Session &s = Session::get();
  if (pinned_.size() <= slot) pinned_.resize(slot + 1, {nullptr, 0});
  auto &[pointer, size] = pinned_[slot];
  if (size < bytes) {
    if (pointer) s.driver().api().cuMemFreeHost(pointer);
    pointer = nullptr;
    size = 0;
    if (s.driver().api().cuMemHostAlloc(&pointer, bytes, 0) != kSuccess) return nullptr;
    size = bytes;
  }
  return pointer;
}

Status CudaStep::mirror(size_t slot, size_t bytes, CUdeviceptr &out) {
  Session &s = Session::get();
  if (device_.size() <= slot) device_.resize(slot + 1, {0, 0});
  auto &[pointer, size] = device_[slot];
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

Status CudaStep::call(const ProgramInfo &info, const EntryDescription &entry,
                      void (*fn)(void **), const StepBuffers &buffers, int64_t step,
                      std::vector<std::vector<float>> &results) {
  Session &s = Session::get();
  if (!s.status().ok()) return s.status();
  const Api &api = s.driver().api();
  CUstream stream = s.stream();
  std::vector<void *> args;
  size_t slot = 0;
  auto in = [&](const void *host, size_t bytes) -> Status {
    CUdeviceptr d = 0;
    if (Status st = mirror(slot++, bytes, d); !st.ok()) return st;
    if (Status st = s.driver().check(api.cuMemcpyHtoDAsync(d, host, bytes, stream),
                                     "cuMemcpyHtoDAsync");
        !st.ok())
      return st;
    args.push_back(reinterpret_cast<void *>(d));
    return {};
  };
  int64_t stepValue = step;
  for (const Binding &b : entry.args) {
    Status st;
    switch (b.kind) {
      case Binding::Kind::kParam: {
        const TensorBuffer &t = buffers.params.at(b.index);
        st = in(t.data, static_cast<size_t>(t.elements()) * 4);
        break;
      }
      case Binding::Kind::kState: {
        const TensorBuffer &t = buffers.state.at(b.index);
        st = in(t.data, static_cast<size_t>(t.elements()) * 4);
        break;
      }
      case Binding::Kind::kBatch: {
        // Through a pinned staging buffer, so that the copy is asynchronous.
        const TensorBuffer &t = buffers.batch.at(b.index);
        size_t bytes = static_cast<size_t>(t.elements()) * 4;
        const void *source = t.data;
        if (void *staging = pinned(slot, bytes)) {
          std::memcpy(staging, t.data, bytes);
          source = staging;
        }
        st = in(source, bytes);
        break;
      }
      case Binding::Kind::kStep: st = in(&stepValue, sizeof stepValue); break;
      case Binding::Kind::kMetric:
        return Status::error("program description: a metric cannot be an argument");
    }
    if (!st.ok()) return st;
  }
  size_t firstResult = slot;
  results.resize(entry.results.size());
  for (size_t i = 0; i < entry.results.size(); ++i) {
    const Binding &b = entry.results[i];
    int64_t n = b.kind == Binding::Kind::kParam   ? elementCount(info.params[b.index].shape)
                : b.kind == Binding::Kind::kState ? elementCount(info.state[b.index].shape)
                                                  : 1;
    results[i].assign(static_cast<size_t>(n), 0.0f);
    CUdeviceptr d = 0;
    if (Status st = mirror(slot++, static_cast<size_t>(n) * 4, d); !st.ok()) return st;
    args.push_back(reinterpret_cast<void *>(d));
  }
  (void)s.takeError();  // a stale error of an earlier, failed step is not this one's
  if (Status st = launch(fn, args); !st.ok()) return st;
  // Params and state were updated in place on the device: bring them back.
  slot = 0;
  for (const Binding &b : entry.args) {
    const TensorBuffer *t = b.kind == Binding::Kind::kParam   ? &buffers.params.at(b.index)
                            : b.kind == Binding::Kind::kState ? &buffers.state.at(b.index)
                                                              : nullptr;
    if (t)
      if (Status st = s.driver().check(
              api.cuMemcpyDtoHAsync(t->data, device_[slot].first,
                                    static_cast<size_t>(t->elements()) * 4, stream),
              "cuMemcpyDtoHAsync");
          !st.ok())
        return st;
    ++slot;
  }
  for (size_t i = 0; i < entry.results.size(); ++i)
    if (Status st = s.driver().check(
            api.cuMemcpyDtoHAsync(results[i].data(), device_[firstResult + i].first,
                                  results[i].size() * 4, stream),
            "cuMemcpyDtoHAsync");
        !st.ok())
      return st;
  if (Status st = s.driver().check(api.cuStreamSynchronize(stream), "cuStreamSynchronize");
      !st.ok())
    return st;
  return s.takeError();
}

}  // namespace stepc::rt::cuda
