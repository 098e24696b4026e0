//===- CollectiveStream.cpp - a CUDA step's collectives on a stream of their own --===//
#include "runtime/hal/cuda/CollectiveStream.h"

#include "runtime/hal/cuda/Session.h"

namespace stepc::rt::cuda {
namespace {

constexpr unsigned kEventDisableTiming = 0x2;  // CU_EVENT_DISABLE_TIMING
constexpr unsigned kStreamNonBlocking = 0x1;   // CU_STREAM_NON_BLOCKING

}  // namespace

Status CollectiveStream::open(std::unique_ptr<CollectiveStream> &out) {
  Session &s = Session::get();
  if (!s.status().ok()) return s.status();
  auto stream = std::make_unique<CollectiveStream>();
  if (Status st = s.driver().check(s.driver().api().cuStreamCreate(&stream->stream_,
                                                                   kStreamNonBlocking),
                                   "cuStreamCreate (the collectives' stream)");
      !st.ok())
    return st;
  out = std::move(stream);
  return {};
}

Status CollectiveStream::start(const float *data, int64_t n,
                               const std::function<Status(CUstream)> &collective) {
  Session &s = Session::get();
  const Api &api = s.driver().api();
  if (waited_ == started_.size()) {  // every earlier start waited for: a new step
    started_.clear();
    waited_ = 0;
  }
  size_t i = started_.size();
  while (ready_.size() <= i) {
    CUevent ready = nullptr, done = nullptr;
    for (CUevent *e : {&ready, &done})
      if (Status st = s.driver().check(api.cuEventCreate(e, kEventDisableTiming), "cuEventCreate");
          !st.ok())
        return st;
    ready_.push_back(ready);
    done_.push_back(done);
  }
  started_.push_back({data, n, false});
  Status st = s.driver().check(api.cuEventRecord(ready_[i], s.stream()), "cuEventRecord");
  if (st.ok())
    st = s.driver().check(api.cuStreamWaitEvent(stream_, ready_[i], 0), "cuStreamWaitEvent");
  if (st.ok()) st = collective(stream_);
  // The done-event is recorded even after a failed collective, so that the wait still joins
  // the collectives' stream back (a graph capture needs it); the step fails with `st`.
  Status recorded = s.driver().check(api.cuEventRecord(done_[i], stream_), "cuEventRecord");
  return st.ok() ? recorded : st;
}

Status CollectiveStream::wait(const float *data, int64_t &elements) {
  elements = -1;
  // The newest first: a buffer reused after its collective was waited for may start another.
  for (size_t i = started_.size(); i-- > 0;) {
    Started &r = started_[i];
    if (r.data != data) continue;
    elements = r.elements;
    Session &s = Session::get();
    if (Status st = s.driver().check(s.driver().api().cuStreamWaitEvent(s.stream(), done_[i], 0),
                                     "cuStreamWaitEvent");
        !st.ok())
      return st;
    if (!r.waited) {
      r.waited = true;
      ++waited_;
    }
    return {};
  }
  return {};
}

}  // namespace stepc::rt::cuda
