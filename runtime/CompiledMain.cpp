//===- CompiledMain.cpp - main() of a training executable stepc links ===//
//
// `stepc compile MODEL -o NAME` emits an object that defines the symbols below and links it
// with this runtime archive; nothing else is generated.
//
//===----------------------------------------------------------------------===//
#include <cstdio>
#include <cstring>
#include <string>

#include <malloc.h>

#include "runtime/hal/CompiledProgram.h"
#include "runtime/hal/CpuCheck.h"
#include "runtime/hal/Gemm.h"
#include "runtime/harness/Main.h"
#include "runtime/hal/Profile.h"

extern "C" {
extern const char stepc_program_description[];
// What the compiled code needs of the CPU (compiler/Codegen/LLVMCPU/ObjectEmitter.cpp).
extern const char stepc_cpu_requirements[] __attribute__((weak));
void stepc_train_step(void **buffers);
void stepc_eval_loss(void **buffers);
// A language model's next-token logits (`NAME sample`); absent for other models.
void stepc_sample_logits(void **buffers) __attribute__((weak));
// Its forward one position at a time, for a model whose ops allow it (BuildSampleStep.cpp).
void stepc_sample_step(void **buffers) __attribute__((weak));
// The CUDA step, linked in by `stepc compile --target=cuda` (null otherwise).
extern const char stepc_cuda_program_description[] __attribute__((weak));
void stepc_cuda_train_step(void **buffers) __attribute__((weak));
void stepc_cuda_eval_loss(void **buffers) __attribute__((weak));
}

int main(int argc, char **argv) {
  // Before anything runs compiled code: a CPU without the instructions it uses would SIGILL.
  if (stepc_cpu_requirements != nullptr) {
    std::string error =
        stepc::rt::checkCpuRequirements(stepc_cpu_requirements, stepc::rt::hostHasCpuFeature);
    if (!error.empty()) {
      std::fprintf(stderr, "%s: error: %s\n", argc > 0 ? argv[0] : "stepc-program",
                   error.c_str());
      return 1;
    }
  }
  // A step allocates and frees the same large temporaries every time. Keep them in the heap
  // (no mmap/munmap, no trimming) so each step reuses the pages instead of faulting in fresh
  // zeroed ones.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  std::unique_ptr<stepc::rt::CompiledProgram> program;
  stepc::rt::Status status = stepc::rt::CompiledProgram::create(
      stepc_program_description, stepc_train_step, stepc_eval_loss, program);
  if (!status.ok()) {
    std::fprintf(stderr, "%s: error: %s (the executable is damaged; compile it again)\n",
                 argc > 0 ? argv[0] : "stepc-program", status.message().c_str());
    return 1;
  }
  program->attachSample(&stepc_sample_logits != nullptr ? stepc_sample_logits : nullptr,
                        &stepc_sample_step != nullptr ? stepc_sample_step : nullptr);
  if (&stepc_cuda_train_step != nullptr && stepc_cuda_program_description != nullptr) {
    status = program->attachCuda(stepc_cuda_program_description, stepc_cuda_train_step,
                                 stepc_cuda_eval_loss);
    if (!status.ok()) {
      std::fprintf(stderr, "%s: error: %s (the executable is damaged; compile it again)\n",
                   argc > 0 ? argv[0] : "stepc-program", status.message().c_str());
      return 1;
    }
  }
  // The GEMM library, before any step: a STEPC_GEMM that cannot be met stops here.
  if (status = stepc::rt::selectGemmLibrary(); !status.ok()) {
    std::fprintf(stderr, "%s: error: %s\n", argc > 0 ? argv[0] : "stepc-program",
                 status.message().c_str());
    return 1;
  }
  stepc::rt::initProfile(program->info().kernelNames, program->info().kernelBytes,
                         program->info().kernelFlops);
  // Under mpirun: join the run's ranks (a no-op for one process).
  status = program->attachRanks();
  if (!status.ok()) {
    std::fprintf(stderr, "%s: error: %s\n", argc > 0 ? argv[0] : "stepc-program",
                 status.message().c_str());
    program->detachRanks(1);
    return 1;
  }
  int code = stepc::rt::trainingMain(argc, argv, *program);
  program->detachRanks(code);
  return code;
}
