//===- Reporter.h - training progress for people and for files --*- C++ -*-===//
//
// What a training run shows while it runs:
//
//   * a progress line:  "step 120/1000 | loss 2.3456 | lr 1.00e-03 | 45.2k tok/s | ETA 1:23"
//     On a terminal it is rewritten in place ("\r" and erase-to-end-of-line, at most every
//     0.1 s and always for the last step); when the output is piped or redirected the same text
//     is printed as plain lines, for every step of short runs and about 100 lines in all for
//     long ones (the first and last steps always), so logs stay readable. Notes (checkpoints
//     written, warnings) go on their own lines without breaking the progress line.
//   * a metrics file (JSON Lines), one object per step, flushed as it is written:
//       {"step":0,"loss":5.54,"lr":0.001,"grad_norm":1.2,"tokens_per_s":45210,"step_ms":1.41}
//     plus the program's extra metrics (e.g. "sam_loss"). "step" is the step index the program
//     ran (0 for the first). Numbers are printed with 9 significant digits (every f32 exactly);
//     a non-finite value is written as null (JSON has no NaN). On resume from step K the lines
//     of steps >= K left by the interrupted run are dropped first, so the file reads as if the
//     run had never stopped.
//
// Time comes from a clock the caller may replace (tests use a fake clock to get identical
// files); everything else the reporter writes is a function of the metrics.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_REPORTER_H
#define STEPC_RUNTIME_REPORTER_H

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "runtime/base/Status.h"
#include "runtime/harness/StepProgram.h"

namespace stepc::rt {

struct ReporterOptions {
  enum class Mode {
    kAuto,         // in place if `out` is a terminal, else plain lines
    kInteractive,  // in place
    kPlain,        // plain lines
    kQuiet,        // no progress output (notes still print)
  };
  Mode mode = Mode::kAuto;
  /// Where progress and notes go; not owned.
  FILE *out = stderr;
  /// The metrics JSONL file; empty: none.
  std::string metricsPath;
  /// Seconds on a monotonic clock; empty: std::chrono::steady_clock.
  std::function<double()> clock;
  /// Plain mode prints every this many steps (and the first and last); 0: every step for runs
  /// of up to 100 steps, else about 100 lines.
  int64_t plainEvery = 0;
  /// If set, called with every step's index and metrics (in any mode, kQuiet included): a
  /// front end's own per-step output (`stepc run` prints one line of metrics per step).
  std::function<void(int64_t step, const StepMetrics &metrics)> onStep;
};

/// What a run is about to do, for the progress line.
struct RunStart {
  int64_t firstStep = 0;   // the first step index this run executes (> 0 after a resume)
  int64_t totalSteps = 0;  // the step count the run ends at
  /// Tokens (or examples, for classification) a step consumes, for tokens_per_s.
  int64_t tokensPerStep = 0;
  /// "tok" or "ex": the unit of the progress line's rate.
  std::string rateUnit = "tok";
};

class Reporter {
 public:
  explicit Reporter(ReporterOptions options = {});
  ~Reporter();
  Reporter(const Reporter &) = delete;
  Reporter &operator=(const Reporter &) = delete;

  /// The clock, in seconds.
  double now() const;

  /// Starts a run: opens the metrics file (truncating it, or on resume keeping only the lines
  /// of steps before `start.firstStep`). Errors name the metrics file.
  Status begin(const RunStart &start);

  /// Reports step `step` (its index), which took `seconds`: a metrics line and the progress
  /// line. Errors: the metrics file could not be written.
  Status step(int64_t step, const StepMetrics &metrics, double seconds);

  /// A message on its own line (checkpoint written, a warning), keeping the progress line.
  void note(const std::string &message);

  /// Ends the run: finishes the progress line and closes the metrics file.
  Status finish();

  /// The progress text for a step (what both modes print), for tests and custom front ends.
  std::string progressText(int64_t step, const StepMetrics &metrics) const;

  /// The metrics JSON object of a step (one line, no newline).
  static std::string metricsLine(int64_t step, const StepMetrics &metrics, double tokensPerS,
                                 double stepMs);

  /// Whether progress is rewritten in place (resolved from Mode::kAuto at construction).
  bool interactive() const { return mode_ == ReporterOptions::Mode::kInteractive; }

 private:
  void clearLine();

  ReporterOptions options_;
  ReporterOptions::Mode mode_;
  RunStart start_;
  FILE *metrics_ = nullptr;
  double startTime_ = 0;      // when begin() was called
  double lastDraw_ = -1e300;  // when the in-place line was last drawn
  bool lineOpen_ = false;     // an in-place line is on screen without a newline
  int64_t stepsDone_ = 0;     // steps reported since begin()
};

/// "1.23k", "45.2M": a rate with 3 significant digits and an SI suffix.
std::string formatRate(double value);
/// "0:07", "12:34", "1:02:03": a duration in whole seconds ("?" if not finite or negative).
std::string formatDuration(double seconds);

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_REPORTER_H
