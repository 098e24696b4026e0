// The training executable's command line: every flag, clear errors for bad ones, and main()'s
// exit codes and output.
#include "runtime/harness/Cli.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>

#include "runtime/harness/Main.h"
#include "tests/unit/runtime/TestFiles.h"
#include "tests/unit/runtime/ToyPrograms.h"

namespace stepc::rt {
namespace {

using testing::SoftmaxRegression;
using testing::TempDir;

Status parse(std::vector<std::string> args, CommandLine &cl) {
  return parseCommandLine(args, cl);
}

std::string parseError(std::vector<std::string> args) {
  CommandLine cl;
  Status s = parseCommandLine(args, cl);
  EXPECT_FALSE(s.ok());
  return s.message();
}

TEST(Cli, TrainWithEveryFlag) {
  CommandLine cl;
  Status s = parse({"train", "--data", "d.bin", "--steps", "100", "--seed=42", "--threads", "2",
                    "--checkpoint-dir", "ck", "--checkpoint-every=10", "--resume", "--metrics",
                    "m.jsonl", "--save-params", "p.safetensors"},
                   cl);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(cl.command, Command::kTrain);
  EXPECT_EQ(cl.train.data, "d.bin");
  EXPECT_EQ(cl.train.steps, 100);
  EXPECT_EQ(cl.train.seed, 42u);
  EXPECT_EQ(cl.train.threads, 2);
  EXPECT_EQ(cl.train.checkpointDir, "ck");
  EXPECT_EQ(cl.train.checkpointEvery, 10);
  EXPECT_TRUE(cl.train.resume);
  EXPECT_EQ(cl.metricsPath, "m.jsonl");
  EXPECT_EQ(cl.train.saveParams, "p.safetensors");
  ASSERT_TRUE(parse({"train", "--init-from", "i.safetensors", "--seed", "18446744073709551615"},
                    cl)
                  .ok());
  EXPECT_EQ(cl.train.initFrom, "i.safetensors");
  EXPECT_EQ(cl.train.seed, UINT64_MAX);
  ASSERT_TRUE(parse({"train"}, cl).ok());
  EXPECT_EQ(cl.train.steps, 0);  // the program's default
}

TEST(Cli, EvalInfoAndHelp) {
  CommandLine cl;
  ASSERT_TRUE(parse({"eval", "--batches", "3", "--checkpoint-dir", "ck"}, cl).ok());
  EXPECT_EQ(cl.command, Command::kEval);
  EXPECT_EQ(cl.eval.batches, 3);
  EXPECT_EQ(cl.eval.checkpointDir, "ck");
  ASSERT_TRUE(parse({"info"}, cl).ok());
  EXPECT_EQ(cl.command, Command::kInfo);
  for (std::vector<std::string> args : {std::vector<std::string>{"--help"}, {"-h"}, {"help"}}) {
    ASSERT_TRUE(parse(args, cl).ok());
    EXPECT_EQ(cl.command, Command::kHelp);
    EXPECT_EQ(cl.helpFor, Command::kHelp);
  }
  ASSERT_TRUE(parse({"train", "--steps", "5", "--help"}, cl).ok());
  EXPECT_EQ(cl.command, Command::kHelp);
  EXPECT_EQ(cl.helpFor, Command::kTrain);
  ASSERT_TRUE(parse({"help", "eval"}, cl).ok());
  EXPECT_EQ(cl.helpFor, Command::kEval);
  std::string train = usageText("byte_lm_residual", Command::kTrain);
  for (const char *flag : {"--data", "--steps", "--seed", "--threads", "--checkpoint-dir",
                           "--checkpoint-every", "--resume", "--metrics", "--init-from",
                           "--save-params"})
    EXPECT_NE(train.find(flag), std::string::npos) << flag;
  EXPECT_EQ(usageText("byte_lm_residual").rfind("usage: byte_lm_residual COMMAND", 0), 0u);
}

TEST(Cli, BadCommandLinesNameTheFlagAndWhatWasExpected) {
  EXPECT_EQ(parseError({}), "no command given: expected train, eval, sample, info or --help");
  EXPECT_EQ(parseError({"trian"}),
            "unknown command 'trian' (expected train, eval, sample, info or --help)");
  EXPECT_EQ(parseError({"--steps", "3"}),
            "expected a command (train, eval, sample, info) before the flag '--steps'");
  EXPECT_EQ(parseError({"train", "--stpes", "3"}),
            "unknown flag '--stpes' for 'train' (see 'train --help')");
  EXPECT_EQ(parseError({"train", "--steps"}),
            "--steps: expected a value after it, found the end of the command line");
  EXPECT_EQ(parseError({"train", "--steps", "ten"}),
            "--steps: expected a positive integer, found 'ten'");
  EXPECT_EQ(parseError({"train", "--steps=0"}), "--steps: expected a positive integer, found '0'");
  EXPECT_EQ(parseError({"train", "--steps", "-5"}),
            "--steps: expected a positive integer, found '-5'");
  EXPECT_EQ(parseError({"train", "--steps", "1e3"}),
            "--steps: expected a positive integer, found '1e3'");
  EXPECT_EQ(parseError({"train", "--seed", "18446744073709551616"}),
            "--seed: expected an integer in [0, 2^64), found '18446744073709551616'");
  EXPECT_EQ(parseError({"train", "--threads", "0"}),
            "--threads: expected a thread count in [1, 4096], found '0'");
  EXPECT_EQ(parseError({"train", "--data="}), "--data: expected a file name, found ''");
  EXPECT_EQ(parseError({"train", "--resume=yes"}), "--resume: takes no value, found 'yes'");
  EXPECT_EQ(parseError({"train", "--steps", "3", "--steps", "4"}),
            "--steps: given more than once");
  EXPECT_EQ(parseError({"train", "steps"}),
            "train: unexpected argument 'steps' (flags start with --)");
  EXPECT_EQ(parseError({"train", "--resume"}),
            "--resume: needs --checkpoint-dir (where the checkpoints are)");
  EXPECT_EQ(parseError({"train", "--checkpoint-every", "5"}),
            "--checkpoint-every: needs --checkpoint-dir (where to write them)");
  EXPECT_EQ(parseError({"train", "--resume", "--checkpoint-dir", "d", "--init-from", "x"}),
            "--init-from: cannot be combined with --resume (a resumed run takes its parameters "
            "from the checkpoint)");
  EXPECT_EQ(parseError({"eval", "--steps", "3"}),
            "unknown flag '--steps' for 'eval' (see 'eval --help')");
  EXPECT_EQ(parseError({"info", "--data", "x"}),
            "unknown flag '--data' for 'info' (see 'info --help')");
  EXPECT_EQ(parseError({"help", "fly"}),
            "help: unknown command 'fly' (expected train, eval, sample or info)");
}

// Runs trainingMain with captured output; returns the exit code.
struct MainRun {
  int code = -1;
  std::string out, err;
};

std::string readAll(FILE *f) {
  std::fflush(f);
  std::rewind(f);
  std::string text;
  int c;
  while ((c = std::fgetc(f)) != EOF) text += static_cast<char>(c);
  std::fclose(f);
  return text;
}

MainRun runMain(StepProgram &program, std::vector<std::string> args) {
  std::vector<const char *> argv = {"/path/to/toy"};
  for (const std::string &a : args) argv.push_back(a.c_str());
  FILE *out = std::tmpfile(), *err = std::tmpfile();
  MainRun run;
  run.code = trainingMain(static_cast<int>(argv.size()), argv.data(), program, out, err);
  run.out = readAll(out);
  run.err = readAll(err);
  return run;
}

TEST(Main, ExitCodesAndMessages) {
  TempDir dir;
  SoftmaxRegression program;
  MainRun run = runMain(program, {"train", "--steps", "many"});
  EXPECT_EQ(run.code, kUsageExitCode);
  EXPECT_EQ(run.err,
            "toy: error: --steps: expected a positive integer, found 'many'\n"
            "Run 'toy --help' for usage.\n");

  run = runMain(program, {"--help"});
  EXPECT_EQ(run.code, 0);
  EXPECT_EQ(run.out.rfind("usage: toy COMMAND", 0), 0u) << run.out;

  run = runMain(program, {"train", "--steps", "3", "--metrics", dir.path("m.jsonl")});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.err.find("step 3/3 | loss "), std::string::npos) << run.err;
  EXPECT_EQ(testing::readBytes(dir.path("m.jsonl")).empty(), false);

  run = runMain(program, {"train", "--checkpoint-dir", dir.path("none"), "--resume"});
  EXPECT_EQ(run.code, kFailureExitCode);
  EXPECT_EQ(run.err.rfind("toy: error: --resume: no checkpoint in", 0), 0u) << run.err;

  run = runMain(program, {"info"});
  EXPECT_EQ(run.code, 0);
  EXPECT_NE(run.out.find("model toy_softmax\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("parameters 36 (144 B)\n  linear.w [8, 4] F32 = normal\n"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("data [16, 8] F32 = classification(classes = 4)"), std::string::npos)
      << run.out;

  // Ctrl-C stops after the step with a checkpoint and exit code 130.
  SoftmaxRegression interrupted;
  interrupted.beforeStep = [](int64_t step) {
    if (step == 2) std::raise(SIGINT);
    return Status();
  };
  run = runMain(interrupted, {"train", "--steps", "10", "--checkpoint-dir", dir.path("int")});
  EXPECT_EQ(run.code, kInterruptedExitCode);
  EXPECT_NE(run.err.find("toy: error: interrupted after step 3 of 10; checkpoint "),
            std::string::npos)
      << run.err;

  run = runMain(program, {"eval", "--batches", "2"});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.out.rfind("eval loss ", 0), 0u) << run.out;
}

}  // namespace
}  // namespace stepc::rt
