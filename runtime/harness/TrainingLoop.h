//===- TrainingLoop.h - the training executable's `train` and `eval` -*- C++ -*-===//
//
// Drives a StepProgram (StepProgram.h) through a training run on host buffers:
//
//   1. parameters: from the program's initialisers (Init.h) with --seed, or from
//      --init-from FILE.safetensors (by name), or, with --resume, from the newest checkpoint in
//      --checkpoint-dir (params, optimizer state, step, seed and data position; a checkpoint of
//      another model is refused). Optimizer state starts at zero.
//   2. batches: BatchSource.h, a pure function of (seed, step).
//   3. steps: from the first step not yet done to --steps (a total: a run resumed at step K of
//      --steps N runs N - K more). A non-finite loss stops the run with an error.
//   4. checkpoints: CHECKPOINT_DIR/checkpoint-<step, 10 digits>.safetensors after every
//      --checkpoint-every steps and at the end, written atomically (Checkpoint.h); the newest
//      `keepCheckpoints` are kept. A run without --resume refuses a directory that already
//      holds checkpoints, rather than mixing two runs.
//   5. --save-params FILE.safetensors at the end: the parameters by name, F32, for PyTorch.
//   6. an interruption (TrainOptions::interrupted, e.g. Ctrl-C) stops after the current step
//      with a checkpoint, so no finished step is lost.
//
// A resumed run is bit-identical to the uninterrupted one: the checkpoint holds the exact F32
// params and state, and the batch and the step's randomness depend only on (seed, step).
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_TRAININGLOOP_H
#define STEPC_RUNTIME_TRAININGLOOP_H

#include <csignal>
#include <functional>
#include <cstdint>
#include <string>

#include "runtime/harness/Reporter.h"
#include "runtime/base/Status.h"
#include "runtime/harness/StepProgram.h"

namespace stepc::rt {

struct TrainOptions {
  std::string data;              // --data FILE; empty: built-in data
  int64_t steps = 0;             // --steps: total steps; 0: ProgramInfo::defaultSteps
  uint64_t seed = 0;             // --seed (ignored on resume: the checkpoint's seed continues)
  int threads = 0;               // --threads; 0: the program's choice
  std::string allReduce;         // --all-reduce: tree, fast; "": the device's default
  std::string device = "auto";   // --device: cpu, cuda or auto (runtime/hal/Device.h)
  std::string checkpointDir;     // --checkpoint-dir; empty: no checkpoints
  int64_t checkpointEvery = 0;   // --checkpoint-every; 0: only at the end
  bool resume = false;           // --resume: continue from the newest checkpoint
  std::string initFrom;          // --init-from FILE.safetensors
  std::string saveParams;        // --save-params FILE.safetensors
  std::string saveGrads;         // --save-grads FILE.safetensors: the last step's gradients
  int keepCheckpoints = 2;       // checkpoints kept in checkpointDir (>= 1)
  double valFraction = 0.05;     // --val-fraction: the tail of --data held out (BatchSource.h)
  int64_t evalEvery = 0;         // --eval-every: validate every N steps (and at the end); 0: never
  int64_t evalBatches = 10;      // --eval-batches: held-out batches per validation
  bool checkpointBest = false;   // --checkpoint-best: keep DIR/best.safetensors (best val loss)
  /// If set, polled after every step: once non-zero (a SIGINT handler sets it), the run stops,
  /// writes a checkpoint (with --checkpoint-dir) and returns an error saying how to resume.
  const volatile std::sig_atomic_t *interrupted = nullptr;
};

/// What a run did.
struct TrainResult {
  int64_t firstStep = 0;  // the first step this run executed
  int64_t endStep = 0;    // steps completed at the end (the total)
  double lastLoss = 0;    // the loss of the last step run (0 if none ran)
  double bestValLoss = 0;  // the lowest validation loss of this run (with --eval-every)
  int64_t bestValStep = -1;  // steps done when it was measured; -1: no validation ran
  std::string lastCheckpoint;  // the last checkpoint written, if any
};

/// Runs `options` on `program`, reporting through `reporter`. Errors name the flag or file at
/// fault; a failure after some steps leaves the checkpoints written so far.
Status train(StepProgram &program, const TrainOptions &options, Reporter &reporter,
             TrainResult *result = nullptr);

struct EvalOptions {
  std::string data;           // --data FILE; empty: built-in data
  uint64_t seed = 0;          // --seed: the batches (and, without a source, the initial params)
  int threads = 0;            // --threads
  std::string device = "auto";  // --device
  std::string initFrom;       // --init-from FILE.safetensors
  std::string checkpointDir;  // --checkpoint-dir: the params of its newest checkpoint
  int64_t batches = 10;       // --batches: held-out batches 0..N-1 (or the seed's training ones)
  double valFraction = 0.05;  // --val-fraction: as for train (it must match to be held out)
  bool trainingSplit = false;  // --split train: score training batches 0..N-1 instead
};

/// The mean loss of `options.batches` batches under program.evaluate, with params from
/// --init-from, the newest checkpoint, or the initialisers. `split`, if given, receives what
/// was scored (BatchSource::describeHeldOut, or the training batches).
Status evaluate(StepProgram &program, const EvalOptions &options, double &meanLoss,
                std::string *split = nullptr);

/// Calls `use` with host buffers holding the parameters of the newest checkpoint in
/// `checkpointDir`, of the safetensors file `initFrom`, or (neither given) the initialisers'
/// with `seed`; what eval and sample run on. `program` (if given) may lend the memory of the
/// tensors it keeps in its own host tier (StepProgram::hostTensor).
Status withParameters(const ProgramInfo &info, const std::string &checkpointDir,
                      const std::string &initFrom, uint64_t seed,
                      const std::function<Status(const StepBuffers &)> &use,
                      StepProgram *program = nullptr);

/// CHECKPOINT_DIR/best.safetensors: the checkpoint of the best validation loss.
std::string bestCheckpointPath(const std::string &dir);

/// CHECKPOINT_DIR/checkpoint-<step, 10 digits>.safetensors.
std::string checkpointPath(const std::string &dir, int64_t step);

/// The newest checkpoint in `dir` by the step in its name (path empty if there is none; a
/// missing directory has none). Errors: `dir` exists but cannot be listed.
Status findLatestCheckpoint(const std::string &dir, std::string &path, int64_t &step);

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_TRAININGLOOP_H
