//===- CompiledProgram.h - a StepProgram backed by compiled entry points -*- C++ -*-===//
//
// The step program of an executable that `stepc compile` linked: the compiled train and eval
// entry points (packed: `void f(void **buffers)`, see ProgramDescription.h) and the description
// the compiler embedded next to them. The buffers a step writes (new params, new state,
// metrics) go to scratch buffers first and are copied back after the call, so a compiled
// function never sees its inputs change under it.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_COMPILEDPROGRAM_H
#define STEPC_RUNTIME_COMPILEDPROGRAM_H

#include <memory>
#include <vector>

#include "runtime/formats/ProgramDescription.h"
#include "runtime/harness/StepProgram.h"
#include "runtime/hal/cpu/Collectives.h"
#include "runtime/hal/cpu/Offload.h"
#include "runtime/hal/cuda/CudaStep.h"
#include "runtime/hal/cuda/Nccl.h"

namespace stepc::rt {

using PackedEntry = void (*)(void **buffers);

class CompiledProgram : public StepProgram {
 public:
  /// Parses `description`; `train` and `eval` are the entry points it describes.
  static Status create(const std::string &description, PackedEntry train, PackedEntry eval,
                       std::unique_ptr<CompiledProgram> &out);
  /// The language model's @sample_logits and @sample_step entry points (null: none).
  void attachSample(PackedEntry sample, PackedEntry sampleStep) {
    sample_ = sample;
    sampleStep_ = sampleStep;
  }

  /// Adds the CUDA step of a --target=cuda executable (its own description and entry points).
  Status attachCuda(const std::string &description, PackedEntry train, PackedEntry eval);
  /// With a CUDA step: cpu runs the CPU step, cuda the CUDA one (or refuses in one line
  /// without a GPU), auto the CUDA one when the GPU answers and else the CPU one, saying so.
  Status selectDevice(const std::string &device) override;
  std::string describeGpu() const override;

  /// Joins the data-parallel run mpirun started, if any (Collectives.h). More than one rank
  /// needs a step compiled with --data-parallel. Call before the first step.
  Status attachRanks();
  /// Leaves the run at exit: normally for exit code 0, else ends every rank (a rank that
  /// failed must not leave the others waiting in a reduction).
  void detachRanks(int exitCode);
  Ranks ranks() const override;
  Status gatherBlocks(float *whole, int64_t blockElements, int64_t id) override;

  const ProgramInfo &info() const override { return description_.info; }
  const ProgramDescription &description() const { return description_; }
  Status setThreads(int threads) override;
  Status setAllReduce(const std::string &mode) override;
  float *hostTensor(bool state, int index) override {
    return far_ ? far_->hostTensor(state, index) : nullptr;
  }
  std::string describeOffload() const override;
  std::string describeGemm() const override;
  Status run(const StepBuffers &buffers, int64_t step, StepMetrics &metrics) override;
  Status syncToHost(const StepBuffers &buffers) override;
  bool canEvaluate() const override { return true; }
  Status evaluate(const StepBuffers &buffers, int64_t step, double &loss) override;
  const std::vector<std::vector<float>> *lastGradients() const override {
    return grads_.empty() ? nullptr : &grads_;
  }
  bool canSample() const override { return sample_ && !description_.sample.symbol.empty(); }
  Status sampleLogits(const StepBuffers &buffers, int64_t position,
                      std::vector<float> &logits) override;
  bool canSampleIncrementally() const override {
    return sampleStep_ && !description_.sampleStep.symbol.empty();
  }
  Status resetSampleState() override;
  Status sampleStep(const StepBuffers &buffers, const std::vector<int32_t> &tokens,
                    int64_t position, std::vector<float> &logits) override;

 private:
  CompiledProgram(ProgramDescription description, PackedEntry train, PackedEntry eval);
  // --shard-optimizer: a run needs exactly the ranks the state is split over.
  Status checkShards() const;
  Status call(const EntryDescription &entry, PackedEntry fn, const StepBuffers &buffers,
              int64_t step);
  // Runs a compiled entry with its offload transfers served (and all of them done after).
  Status invoke(PackedEntry fn);
  // A sampling entry's buffers (@sample_logits, @sample_step) into args_: params, the tokens
  // (`tokens`, or the batch buffer when null), the position and the states read, then the
  // logits (zeroed) and the states written.
  Status bindSampling(const EntryDescription &entry, const StepBuffers &buffers, void *tokens,
                      int32_t *position, std::vector<float> &logits);

  ProgramDescription description_;
  PackedEntry train_, eval_, sample_ = nullptr, sampleStep_ = nullptr;
  // @sample_step's states: what the next call reads, and where it writes the next ones.
  std::vector<std::vector<float>> sampleState_, nextSampleState_;
  // The CUDA step, if linked in, and whether this run uses it.
  std::unique_ptr<ProgramDescription> cudaDescription_;
  PackedEntry cudaTrain_ = nullptr, cudaEval_ = nullptr;
  bool useCuda_ = false;
  std::unique_ptr<cuda::CudaStep> cudaStep_;
  std::unique_ptr<Communicator> ranks_;
  std::unique_ptr<cuda::NcclCommunicator> nccl_;  // a data-parallel CUDA step's
  bool fastAllReduce_ = false;
  // --device-memory: the host tier of the offloaded buffers (a file), and the exposed transfer
  // time of the steps so far.
  std::unique_ptr<FarStore> far_;
  double offloadExposedMs_ = 0, offloadIoMs_ = 0;
  std::vector<std::vector<float>> scratch_;  // one per result of the entry being called
  std::vector<std::vector<float>> grads_;    // the last step's gradients (--export-grads)
  std::vector<void *> args_;
};

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_COMPILEDPROGRAM_H
