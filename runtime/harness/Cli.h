//===- Cli.h - the training executable's command line -----------*- C++ -*-===//
//
//   NAME train [--data FILE] [--steps N] [--seed S] [--threads T] [--checkpoint-dir D]
//              [--checkpoint-every N] [--resume] [--metrics FILE.jsonl] [--init-from F]
//              [--save-params F]
//   NAME eval  [--data FILE] [--seed S] [--threads T] [--batches N]
//              [--init-from F | --checkpoint-dir D]
//   NAME info
//   NAME --help | NAME help | NAME COMMAND --help
//
// Flags take their value as the next argument or after '=' (--steps=100). No flag library:
// the runtime has no dependencies. A bad command line gives a Status whose message names the
// flag and what was expected ("--steps: expected a positive integer, found 'ten'"); the
// executable prints it with a hint to --help and exits with kUsageExitCode.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_CLI_H
#define STEPC_RUNTIME_CLI_H

#include <string>
#include <vector>

#include "runtime/base/Status.h"
#include "runtime/harness/Sampling.h"
#include "runtime/harness/TrainingLoop.h"

namespace stepc::rt {

/// Exit codes of the executable: 0 success, 1 a run that failed (data, files, NaN), 2 a bad
/// command line (as getopt-style tools do), 130 training stopped by SIGINT/SIGTERM (128 + 2,
/// as shells report an interrupted command).
constexpr int kFailureExitCode = 1;
constexpr int kUsageExitCode = 2;
constexpr int kInterruptedExitCode = 130;

enum class Command { kHelp, kTrain, kEval, kInfo, kSample };

struct CommandLine {
  Command command = Command::kHelp;
  /// The command whose help was asked for (`NAME train --help`); kHelp for the overview.
  Command helpFor = Command::kHelp;
  TrainOptions train;
  EvalOptions eval;
  SampleOptions sample;
  std::string metricsPath;  // train --metrics
};

/// Parses `args` (argv without the program name). Errors name the flag or word at fault.
Status parseCommandLine(const std::vector<std::string> &args, CommandLine &out);

/// The help text for `command` (kHelp: the overview), with `program` as the executable's name.
std::string usageText(const std::string &program, Command command = Command::kHelp);

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_CLI_H
