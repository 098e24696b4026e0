//===- Main.h - the training executable's main() ----------------*- C++ -*-===//
//
// What a linked training executable's main() calls with its compiled step program:
//
//   int main(int argc, char **argv) {
//     CompiledStep program;
//     return stepc::rt::trainingMain(argc, argv, program);
//   }
//
// It parses the command line (Cli.h), runs train / eval / info, prints errors as
// "NAME: error: ..." and returns the exit code (0, kFailureExitCode or kUsageExitCode).
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_MAIN_H
#define STEPC_RUNTIME_MAIN_H

#include <cstdio>
#include <string>

#include "runtime/harness/StepProgram.h"

namespace stepc::rt {

/// Runs the executable's command line on `program`. `out` takes help, info and eval results;
/// `err` takes progress, notes and errors.
int trainingMain(int argc, const char *const *argv, StepProgram &program, FILE *out = stdout,
                 FILE *err = stderr);

/// The text of `NAME info`.
std::string infoText(const StepProgram &program);

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_MAIN_H
