//===- CompiledProgram.cpp - a StepProgram backed by compiled entry points ===//
#include "runtime/hal/CompiledProgram.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "runtime/hal/Device.h"
#include "runtime/hal/Gemm.h"
#include "runtime/hal/cpu/DebugChecks.h"
#include "runtime/hal/cpu/ThreadPool.h"
#include "runtime/hal/cuda/Session.h"

namespace stepc::rt {

CompiledProgram::CompiledProgram(ProgramDescription description, PackedEntry train,
                                 PackedEntry eval)
    : description_(std::move(description)), train_(train), eval_(eval) {}

Status CompiledProgram::create(const std::string &text, PackedEntry train, PackedEntry eval,
                               std::unique_ptr<CompiledProgram> &out) {
  ProgramDescription d;
  if (Status s = parseProgramDescription(text, d); !s.ok()) return s;
  for (const Binding &b : d.train.results)
    if (b.kind == Binding::Kind::kBatch || b.kind == Binding::Kind::kStep)
      return Status::error("program description: the train step cannot return a batch or step");
  std::unique_ptr<FarStore> far;
  if (!d.info.offload.empty())
    if (Status s = FarStore::open(d.info, far); !s.ok()) return s.withContext("offload");
  out.reset(new CompiledProgram(std::move(d), train, eval));
  out->far_ = std::move(far);
  return {};
}

Status CompiledProgram::invoke(PackedEntry fn) {
  if (!far_) {
    fn(args_.data());
    return {};
  }
  if (Status s = far_->begin(); !s.ok()) return s;
  setFarStore(far_.get());
  fn(args_.data());
  setFarStore(nullptr);
  return far_->end();
}

std::string CompiledProgram::describeOffload() const {
  if (!far_) return "";
  OffloadStats s = far_->stats();
  char text[256];
  std::snprintf(text, sizeof text,
                "%s; so far %.1f MiB read and %.1f MiB written in %lld transfers, %.3f s of I/O, "
                "%.3f s of it exposed",
                far_->where().c_str(), s.fetchedBytes / 1048576.0, s.storedBytes / 1048576.0,
                static_cast<long long>(s.transfers), s.ioSeconds, s.exposedSeconds);
  return text;
}

Status CompiledProgram::attachCuda(const std::string &text, PackedEntry train,
                                   PackedEntry eval) {
  auto d = std::make_unique<ProgramDescription>();
  if (Status s = parseProgramDescription(text, *d); !s.ok()) return s.withContext("CUDA step");
  if (d->info.fingerprint != description_.info.fingerprint)
    return Status::error("the CUDA step was compiled from another program than the CPU step");
  cudaDescription_ = std::move(d);
  cudaTrain_ = train;
  cudaEval_ = eval;
  return {};
}

std::string CompiledProgram::describeGpu() const { return stepc::rt::describeGpu(); }

Status CompiledProgram::selectDevice(const std::string &device) {
  if (!cudaDescription_) return selectCpuStepDevice(device);  // a CPU step only
  useCuda_ = false;
  if (device == "cpu") return {};
  if (device != "cuda" && device != "auto")
    return Status::error("expected cpu, cuda or auto, found '" + device + "'");
  cuda::Session &session = cuda::Session::get();
  bool ready = session.status().ok();
  if (ranks_ && ranks_->size() > 1) {
    // The ranks take the same device, or the GPU ranks would wait in NCCL for CPU ones.
    // The count of ready ranks, through the ranks' tree sum (id -1: no step's reduction).
    float count = ready ? 1.0f : 0.0f;
    std::vector<float> scratch;
    if (Status s = allReduceSum(*ranks_, &count, 1, -1, scratch); !s.ok())
      return s.withContext("choosing the device");
    if (ready && count != static_cast<float>(ranks_->size())) {
      if (device == "cuda")
        return Status::error("another rank has no GPU it can use (it says why); every rank "
                             "must have one for --device=cuda");
      std::fprintf(stderr, "stepc: another rank has no GPU; every rank runs the step on the "
                           "CPU\n");
      return {};
    }
  }
  if (!ready) {
    if (device == "cuda") return session.status();
    std::fprintf(stderr, "stepc: no GPU (%s); running the step on the CPU\n",
                 session.status().message().c_str());
    return {};
  }
  if (ranks_) {
    // Every rank that mpirun started joins NCCL on its own GPU (one rank too: the same path,
    // a sum over one); one that cannot fails the run (mpirun ends the others) rather than
    // falling back to the CPU alone.
    if (Status s = cuda::NcclCommunicator::open(*ranks_, nccl_); !s.ok()) return s;
    cuda::setNcclCommunicator(nccl_.get());
    std::fprintf(stderr, "stepc: rank %d of %d sums with %s on device %d\n", ranks_->rank(),
                 ranks_->size(), nccl_->version().c_str(), cuda::localRank());
  }
  useCuda_ = true;
  cudaStep_ = std::make_unique<cuda::CudaStep>();
  std::fprintf(stderr, "stepc: running the step on %s (%s)\n", session.device().name.c_str(),
               session.device().arch().c_str());
  return {};
}

std::string CompiledProgram::describeGemm() const {
  std::string name;
  Status s = selectGemmLibrary(&name);
  return s.ok() ? name : name + " (" + s.message() + ")";
}

Status CompiledProgram::setAllReduce(const std::string &mode) {
  // `mode` is "", "tree" or "fast" (the command line checks it).
  if (useCuda_ && nccl_ && mode == "tree")
    return Status::error("the CUDA step sums over its ranks with NCCL's all-reduce, in NCCL's "
                         "order: --all-reduce=tree (the CPU's fixed tree) is not built for it; "
                         "use --all-reduce=fast, or --device=cpu for the tree's bits");
  fastAllReduce_ = mode == "fast" || (useCuda_ && nccl_);
  setAllReduceMode(fastAllReduce_ ? AllReduceMode::kFast : AllReduceMode::kTree);
  return {};
}

Status CompiledProgram::setThreads(int threads) {
  // One pool runs both the tiled loop kernels and the GEMM blocks. Ranks on one machine share
  // its cores (mpirun places them; this is the default, not a binding).
  useSingleThreadedBlas();
  if (threads <= 0 && ranks_ && ranks_->size() > 1) {
    // Unbound ranks (mpirun --bind-to none) share this machine's CPUs with the others here.
    threads = availableCpus();
    const char *local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    int here = local ? std::atoi(local) : 1;
    if (here > 1 && threads == static_cast<int>(std::thread::hardware_concurrency()))
      threads = std::max(1, threads / here);
  }
  setPoolThreads(threads);
  return {};
}

Status CompiledProgram::attachRanks() {
  if (Status s = openCommunicator(ranks_); !s.ok()) return s;
  if (!ranks_) return {};
  // The caller's detachRanks(1) then ends every rank: none can train alone on its share.
  int size = ranks_->size();
  int64_t split = description_.info.dataParallelMicroBatches;
  if (size > 1 && split == 0)
    return Status::error("mpirun started " + std::to_string(size) +
                         " ranks, but this executable's step does not reduce over ranks: "
                         "compile it with `stepc compile --data-parallel`");
  if (size > 1 && (split % size != 0 || (size & (size - 1)) != 0))
    return Status::error("mpirun started " + std::to_string(size) + " ranks, but the step's " +
                         std::to_string(split) + " micro-batches do not split into " +
                         std::to_string(size) + " aligned blocks (each rank's block is a "
                         "subtree of the micro-batch tree): the rank count must be a power of "
                         "two that divides the micro-batches; compile with "
                         "--micro-batches=" + std::to_string(size) + " or a multiple of it");
  if (Status s = checkShards(); !s.ok()) return s;
  setCommunicator(ranks_.get());
  // A CUDA step's rank uses the GPU of its local rank on the node.
  if (size > 1) cuda::Session::useDevice(cuda::localRank());
  return {};
}

Status CompiledProgram::checkShards() const {
  int64_t shards = description_.info.shardedOver;
  int size = ranks_ ? ranks_->size() : 1;
  if (shards == 0 || size == shards) return {};
  return Status::error("this step splits its optimizer state over " + std::to_string(shards) +
                       " ranks (stepc compile --shard-optimizer=" + std::to_string(shards) +
                       "), and " + std::to_string(size) +
                       (size == 1 ? " process runs it" : " ranks run it") + ": train it with "
                       "`mpirun -np " + std::to_string(shards) +
                       "`, or compile without --shard-optimizer (checkpoints are the same)");
}

Status CompiledProgram::gatherBlocks(float *whole, int64_t blockElements, int64_t id) {
  if (!ranks_ || ranks_->size() == 1) return {};
  // This thread talks to the ranks now: the deferred gathers first.
  if (Status s = settleGathers(); !s.ok()) return s;
  // Ids below the step's (which count up from 0) name the checkpoint's tensors.
  return allGather(*ranks_, whole, blockElements, -1 - id).withContext("gathering a checkpoint");
}

void CompiledProgram::detachRanks(int exitCode) {
  if (!ranks_) return;
  if (exitCode == 0) (void)settleGathers();  // a failure was reported by the step already
  cuda::setNcclCommunicator(nullptr);
  if (nccl_ && exitCode != 0) nccl_->abort();
  nccl_.reset();
  setCommunicator(nullptr);
  if (exitCode != 0 && ranks_->size() > 1) ranks_->abort(exitCode);
  ranks_->finish();
  ranks_.reset();
}

Ranks CompiledProgram::ranks() const {
  Ranks r;
  if (ranks_) {
    r.rank = ranks_->rank();
    r.size = ranks_->size();
    r.launcher = ranks_->launcher();
    if (nccl_) {
      r.device = "its node's GPU of its local rank (" + cuda::Session::get().device().name + "; " +
                 nccl_->version() + ")";
      r.reduction = "by NCCL's all-reduce (the library's order, not the bits of one process)";
    } else {
      r.reduction = fastAllReduce_ ? "by MPI_Allreduce (--all-reduce=fast: the library's order, "
                                     "not the bits of one process)"
                                   : "in a fixed tree (the bits of one process)";
    }
  }
  return r;
}

Status CompiledProgram::call(const EntryDescription &entry, PackedEntry fn,
                             const StepBuffers &buffers, int64_t step) {
  if (!fn) return Status::error("this executable has no compiled '" + entry.symbol + "'");
  if (useCuda_) {
    const EntryDescription &cudaEntry =
        &entry == &description_.train ? cudaDescription_->train : cudaDescription_->eval;
    PackedEntry cudaFn = &entry == &description_.train ? cudaTrain_ : cudaEval_;
    if (cudaEntry.results.size() != entry.results.size())
      return Status::error("the CUDA step's results differ from the CPU step's");
    // The train step keeps params and state on the device (syncToHost brings them back),
    // unless an update comes back as a result instead of in place.
    bool resident = &entry == &description_.train &&
                    std::none_of(cudaEntry.results.begin(), cudaEntry.results.end(),
                                 [](const Binding &b) {
                                   return b.kind == Binding::Kind::kParam ||
                                          b.kind == Binding::Kind::kState;
                                 });
    // The CUDA step's own description: its offload ids (--device-memory) index its plan's list.
    return cudaStep_->call(cudaDescription_->info, cudaEntry, cudaFn, buffers, step, resident,
                           scratch_);
  }
  int64_t stepValue = step;
  args_.clear();
  for (const Binding &b : entry.args) {
    switch (b.kind) {
      case Binding::Kind::kParam: args_.push_back(buffers.params.at(b.index).data); break;
      case Binding::Kind::kState: args_.push_back(buffers.state.at(b.index).data); break;
      case Binding::Kind::kBatch: args_.push_back(buffers.batch.at(b.index).data); break;
      case Binding::Kind::kStep: args_.push_back(&stepValue); break;
      case Binding::Kind::kMetric:
      case Binding::Kind::kLogits:
      case Binding::Kind::kGrad:
      case Binding::Kind::kPosition:
      case Binding::Kind::kSampleState:
        return Status::error("program description: a train or eval step cannot take a " +
                             std::string(b.kind == Binding::Kind::kPosition ||
                                                 b.kind == Binding::Kind::kSampleState
                                             ? "sampling buffer"
                                             : "metric or logits"));
    }
  }
  scratch_.resize(entry.results.size());
  for (size_t i = 0; i < entry.results.size(); ++i) {
    const Binding &b = entry.results[i];
    int64_t n = b.kind == Binding::Kind::kParam || b.kind == Binding::Kind::kGrad
                    ? elementCount(info().params[b.index].shape)
                : b.kind == Binding::Kind::kState ? elementCount(localShape(info().state[b.index]))
                                                  : 1;
    scratch_[i].resize(static_cast<size_t>(n));
    args_.push_back(scratch_[i].data());
  }
  OffloadStats before = far_ ? far_->stats() : OffloadStats();
  if (Status s = invoke(fn); !s.ok()) return s;
  if (far_) {
    OffloadStats after = far_->stats();
    offloadExposedMs_ = (after.exposedSeconds - before.exposedSeconds) * 1e3;
    offloadIoMs_ = (after.ioSeconds - before.ioSeconds) * 1e3;
  }
  // --data-parallel: a reduction that failed (its error names the rank and the peer).
  if (std::string error; takeCollectiveError(error)) return Status::error(error);
  // --debug-nan: the first output of the step that held a NaN or Inf, by where it came from.
  NonFinite bad;
  if (takeNonFinite(bad)) {
    char what[96];
    std::snprintf(what, sizeof what, " produced %s at element %lld",
                  std::isnan(bad.value) ? "NaN" : bad.value > 0 ? "+Inf" : "-Inf",
                  static_cast<long long>(bad.element));
    std::string check = bad.check >= 0 && static_cast<size_t>(bad.check) < description_.debugChecks.size()
                            ? description_.debugChecks[static_cast<size_t>(bad.check)]
                            : "check " + std::to_string(bad.check);
    return Status::error(check + what +
                         ": the first non-finite value of this step (--debug-nan)");
  }
  return {};
}

Status CompiledProgram::syncToHost(const StepBuffers &buffers) {
  // --shard-optimizer: the last step's gathers write the parameters the host reads next.
  if (Status s = settleGathers(); !s.ok()) return s;
  return useCuda_ ? cudaStep_->syncToHost(cudaTrain_, buffers) : Status();
}

Status CompiledProgram::run(const StepBuffers &buffers, int64_t step, StepMetrics &metrics) {
  const EntryDescription &entry = description_.train;
  if (Status s = checkShards(); !s.ok()) return s;  // one process, no mpirun
  if (Status s = call(entry, train_, buffers, step); !s.ok()) return s;
  metrics = emptyMetrics(info());
  for (size_t i = 0; i < entry.results.size(); ++i) {
    const Binding &b = entry.results[i];
    const std::vector<float> &value = scratch_[i];
    if (b.kind == Binding::Kind::kParam || b.kind == Binding::Kind::kState) {
      const TensorBuffer &dst =
          b.kind == Binding::Kind::kParam ? buffers.params.at(b.index) : buffers.state.at(b.index);
      std::memcpy(dst.data, value.data(), value.size() * sizeof(float));
    } else if (b.kind == Binding::Kind::kGrad) {
      grads_.resize(info().params.size());
      grads_[b.index] = value;
    } else {
      setMetric(metrics, b.metric, value[0]);
    }
  }
  // On the GPU, the step's device time (CUDA events) too.
  if (useCuda_ && cudaStep_->lastDeviceMs() >= 0)
    metrics.extra.emplace_back("device_ms", cudaStep_->lastDeviceMs());
  // --device-memory: the step's time waiting for transfers (not overlapped), and the I/O
  // thread's time in them.
  if (far_) {
    metrics.extra.emplace_back("offload_exposed_ms", offloadExposedMs_);
    metrics.extra.emplace_back("offload_io_ms", offloadIoMs_);
  }
  return {};
}

Status CompiledProgram::bindSampling(const EntryDescription &entry, const StepBuffers &buffers,
                                     void *tokens, int32_t *position, std::vector<float> &logits) {
  const InputSpec &input = info().inputs.at(0);
  logits.assign(static_cast<size_t>(input.shape.at(0) * input.vocab), 0.0f);
  auto state = [&](std::vector<std::vector<float>> &states, int index) -> float * {
    return index >= 0 && static_cast<size_t>(index) < states.size() ? states[index].data() : nullptr;
  };
  args_.clear();
  for (const Binding &b : entry.args) {
    void *arg = nullptr;
    if (b.kind == Binding::Kind::kParam) arg = buffers.params.at(b.index).data;
    else if (b.kind == Binding::Kind::kBatch) arg = tokens ? tokens : buffers.batch.at(b.index).data;
    else if (b.kind == Binding::Kind::kPosition) arg = position;
    else if (b.kind == Binding::Kind::kSampleState) arg = state(sampleState_, b.index);
    if (!arg)
      return Status::error("program description: " + entry.symbol +
                           " takes params, tokens, a position and (incremental) its states");
    args_.push_back(arg);
  }
  for (const Binding &b : entry.results) {
    void *arg = b.kind == Binding::Kind::kLogits        ? logits.data()
                : b.kind == Binding::Kind::kSampleState ? state(nextSampleState_, b.index)
                                                        : nullptr;
    if (!arg)
      return Status::error("program description: " + entry.symbol +
                           " returns the logits and (incremental) its states");
    args_.push_back(arg);
  }
  return {};
}

Status CompiledProgram::sampleLogits(const StepBuffers &buffers, int64_t position,
                                     std::vector<float> &logits) {
  if (!canSample()) return StepProgram::sampleLogits(buffers, position, logits);
  if (Status s = settleGathers(); !s.ok()) return s;  // it reads the parameters
  // On the CPU step, whatever --device chose: one token at a time is launch-bound on a GPU.
  int32_t at = static_cast<int32_t>(position);
  if (Status s = bindSampling(description_.sample, buffers, nullptr, &at, logits); !s.ok())
    return s;
  return invoke(sample_);
}

Status CompiledProgram::resetSampleState() {
  if (!canSampleIncrementally()) return StepProgram::resetSampleState();
  sampleState_.resize(description_.sampleState.size());
  nextSampleState_.resize(description_.sampleState.size());
  for (size_t i = 0; i < sampleState_.size(); ++i) {
    size_t n = static_cast<size_t>(elementCount(description_.sampleState[i].shape));
    sampleState_[i].assign(n, 0.0f);  // zeros: before position 0 (a causal convolution's padding)
    nextSampleState_[i].assign(n, 0.0f);
  }
  return {};
}

Status CompiledProgram::sampleStep(const StepBuffers &buffers, const std::vector<int32_t> &tokens,
                                   int64_t position, std::vector<float> &logits) {
  if (!canSampleIncrementally()) return StepProgram::sampleStep(buffers, tokens, position, logits);
  if (Status s = settleGathers(); !s.ok()) return s;  // it reads the parameters
  if (sampleState_.size() != description_.sampleState.size())
    return Status::error("sampleStep before resetSampleState");
  if (static_cast<int64_t>(tokens.size()) != info().inputs.at(0).shape.at(0))
    return Status::error("sampleStep takes one token per row of the batch");
  int32_t at = static_cast<int32_t>(position);
  if (Status s = bindSampling(description_.sampleStep, buffers,
                              const_cast<int32_t *>(tokens.data()), &at, logits);
      !s.ok())
    return s;
  if (Status s = invoke(sampleStep_); !s.ok()) return s;
  std::swap(sampleState_, nextSampleState_);
  return {};
}

Status CompiledProgram::evaluate(const StepBuffers &buffers, int64_t step, double &loss) {
  const EntryDescription &entry = description_.eval;
  if (Status s = settleGathers(); !s.ok()) return s;  // it reads the parameters
  if (Status s = call(entry, eval_, buffers, step); !s.ok()) return s;
  for (size_t i = 0; i < entry.results.size(); ++i)
    if (entry.results[i].kind == Binding::Kind::kMetric && entry.results[i].metric == "loss")
      loss = scratch_[i][0];
  return {};
}

}  // namespace stepc::rt
