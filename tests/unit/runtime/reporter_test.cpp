// The progress line (plain and in place) and the metrics JSONL file.
#include "runtime/harness/Reporter.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "runtime/base/Json.h"
#include "tests/unit/runtime/TestFiles.h"

namespace stepc::rt {
namespace {

using testing::readBytes;
using testing::TempDir;
using testing::writeText;

// Captures what a Reporter prints to its FILE*.
class Capture {
 public:
  Capture() { file_ = std::tmpfile(); }
  ~Capture() { std::fclose(file_); }
  FILE *file() { return file_; }
  std::string text() {
    std::fflush(file_);
    std::rewind(file_);
    std::string out;
    int c;
    while ((c = std::fgetc(file_)) != EOF) out += static_cast<char>(c);
    return out;
  }

 private:
  FILE *file_;
};

StepMetrics metricsOf(double loss) {
  StepMetrics m;
  m.loss = loss;
  m.lr = 0.001;
  m.gradNorm = 0.5;
  return m;
}

TEST(Reporter, PlainLinesWhenNotATerminal) {
  Capture out;
  double t = 0;
  ReporterOptions o;
  o.out = out.file();  // a regular file: kAuto picks plain lines
  o.clock = [&] { return t; };
  Reporter r(o);
  EXPECT_FALSE(r.interactive());
  RunStart start;
  start.totalSteps = 3;
  start.tokensPerStep = 2048;
  ASSERT_TRUE(r.begin(start).ok());
  t = 1.0;
  ASSERT_TRUE(r.step(0, metricsOf(5.5), 1.0).ok());
  r.note("checkpoint: /tmp/x");
  t = 2.0;
  ASSERT_TRUE(r.step(1, metricsOf(4.25), 1.0).ok());
  t = 4.0;
  ASSERT_TRUE(r.step(2, metricsOf(3.125), 2.0).ok());
  ASSERT_TRUE(r.finish().ok());
  EXPECT_EQ(out.text(),
            "step 1/3 | loss 5.5000 | lr 1.00e-03 | 2.05k tok/s | ETA 0:02\n"
            "checkpoint: /tmp/x\n"
            "step 2/3 | loss 4.2500 | lr 1.00e-03 | 2.05k tok/s | ETA 0:01\n"
            "step 3/3 | loss 3.1250 | lr 1.00e-03 | 1.54k tok/s | ETA 0:00\n");
}

TEST(Reporter, PlainLinesThinOutOnLongRuns) {
  Capture out;
  double t = 0;
  ReporterOptions o;
  o.out = out.file();
  o.mode = ReporterOptions::Mode::kPlain;
  o.clock = [&] { return t; };
  Reporter r(o);
  RunStart start;
  start.totalSteps = 1000;
  start.tokensPerStep = 10;
  start.rateUnit = "ex";
  ASSERT_TRUE(r.begin(start).ok());
  for (int64_t s = 0; s < 1000; ++s) {
    t += 0.01;
    ASSERT_TRUE(r.step(s, metricsOf(1.0), 0.01).ok());
  }
  ASSERT_TRUE(r.finish().ok());
  std::string text = out.text();
  size_t lines = 0;
  for (char c : text) lines += c == '\n';
  EXPECT_EQ(lines, 101u);  // step 1, then every 10th
  EXPECT_EQ(text.rfind("step 1/1000 | loss 1.0000 | lr 1.00e-03 | 1.00k ex/s | ETA 0:10\n", 0), 0u)
      << text.substr(0, 80);
  EXPECT_NE(text.find("step 1000/1000 "), std::string::npos);
  EXPECT_EQ(text.find('\r'), std::string::npos);
}

TEST(Reporter, InPlaceOnATerminal) {
  Capture out;
  double t = 0;
  ReporterOptions o;
  o.out = out.file();
  o.mode = ReporterOptions::Mode::kInteractive;
  o.clock = [&] { return t; };
  Reporter r(o);
  EXPECT_TRUE(r.interactive());
  RunStart start;
  start.totalSteps = 3;
  start.tokensPerStep = 100;
  ASSERT_TRUE(r.begin(start).ok());
  t = 1;
  ASSERT_TRUE(r.step(0, metricsOf(2), 1).ok());
  t = 1.05;  // within 0.1 s of the last draw: not redrawn
  ASSERT_TRUE(r.step(1, metricsOf(1.5), 0.05).ok());
  r.note("checkpoint: c");
  t = 1.1;
  ASSERT_TRUE(r.step(2, metricsOf(1), 0.05).ok());  // the last step is always drawn
  ASSERT_TRUE(r.finish().ok());
  EXPECT_EQ(out.text(),
            "\rstep 1/3 | loss 2.0000 | lr 1.00e-03 | 100 tok/s | ETA 0:02\x1b[K"
            "\r\x1b[Kcheckpoint: c\n"
            "\rstep 3/3 | loss 1.0000 | lr 1.00e-03 | 273 tok/s | ETA 0:00\x1b[K\n");
}

// Mode::kAuto draws in place on a terminal (a pseudo-terminal here) and prints plain lines to
// anything else.
TEST(Reporter, AutoModeFollowsIsatty) {
  int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0)
    GTEST_SKIP() << "no pseudo-terminals here";
  FILE *terminal = std::fopen(::ptsname(master), "w");
  ASSERT_NE(terminal, nullptr);
  {
    ReporterOptions o;
    o.out = terminal;
    EXPECT_TRUE(Reporter(o).interactive());
  }
  std::fclose(terminal);
  ::close(master);
  Capture file;
  ReporterOptions o;
  o.out = file.file();
  EXPECT_FALSE(Reporter(o).interactive());
}

TEST(Reporter, MetricsLinesHoldTheRequiredKeys) {
  TempDir dir;
  ReporterOptions o;
  o.mode = ReporterOptions::Mode::kQuiet;
  o.metricsPath = dir.path("m.jsonl");
  Reporter r(o);
  RunStart start;
  start.totalSteps = 2;
  start.tokensPerStep = 64;
  ASSERT_TRUE(r.begin(start).ok());
  StepMetrics m = metricsOf(2.5);
  m.extra = {{"sam_loss", 2.75}, {"odd \"name\"", NAN}};
  ASSERT_TRUE(r.step(0, m, 0.25).ok());
  ASSERT_TRUE(r.finish().ok());
  std::vector<uint8_t> bytes = readBytes(dir.path("m.jsonl"));
  std::string text(bytes.begin(), bytes.end());
  EXPECT_EQ(text,
            "{\"step\":0,\"loss\":2.5,\"lr\":0.001,\"grad_norm\":0.5,\"tokens_per_s\":256,"
            "\"step_ms\":250,\"sam_loss\":2.75,\"odd \\\"name\\\"\":null}\n");
  JsonValue value;
  ASSERT_TRUE(parseJson(text, value).ok());
  for (const char *key : {"step", "loss", "lr", "grad_norm", "tokens_per_s", "step_ms"})
    EXPECT_TRUE(value.find(key) && value.find(key)->isNumber()) << key;
}

TEST(Reporter, ResumeDropsTheLinesOfStepsToBeRedone) {
  TempDir dir;
  std::string path = dir.path("m.jsonl");
  writeText(path,
            "{\"step\":0,\"loss\":1}\n{\"step\":1,\"loss\":1}\n{\"step\":2,\"loss\":1}\n"
            "{\"step\":3,\"loss\":1}\n{\"step\":4,\"lo");  // cut short by a kill
  ReporterOptions o;
  o.mode = ReporterOptions::Mode::kQuiet;
  o.metricsPath = path;
  Reporter r(o);
  RunStart start;
  start.firstStep = 2;
  start.totalSteps = 3;
  ASSERT_TRUE(r.begin(start).ok());
  StepMetrics m;
  ASSERT_TRUE(r.step(2, m, 0).ok());
  ASSERT_TRUE(r.finish().ok());
  std::vector<uint8_t> bytes = readBytes(path);
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()),
            "{\"step\":0,\"loss\":1}\n{\"step\":1,\"loss\":1}\n"
            "{\"step\":2,\"loss\":0,\"lr\":0,\"grad_norm\":0,\"tokens_per_s\":0,\"step_ms\":0}\n");
}

TEST(Reporter, UnwritableMetricsFile) {
  TempDir dir;
  ReporterOptions o;
  o.mode = ReporterOptions::Mode::kQuiet;
  o.metricsPath = dir.path("no/such/dir/m.jsonl");
  Reporter r(o);
  Status s = r.begin(RunStart());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(o.metricsPath + ": cannot open the metrics file"), std::string::npos)
      << s.message();
}

TEST(Reporter, Formats) {
  EXPECT_EQ(formatRate(0), "0.00");
  EXPECT_EQ(formatRate(12.345), "12.3");
  EXPECT_EQ(formatRate(999.4), "999");
  EXPECT_EQ(formatRate(999.6), "1.00k");
  EXPECT_EQ(formatRate(45210), "45.2k");
  EXPECT_EQ(formatRate(3.2e6), "3.20M");
  EXPECT_EQ(formatRate(NAN), "?");
  EXPECT_EQ(formatDuration(7), "0:07");
  EXPECT_EQ(formatDuration(754), "12:34");
  EXPECT_EQ(formatDuration(3723), "1:02:03");
  EXPECT_EQ(formatDuration(INFINITY), "?");
}

}  // namespace
}  // namespace stepc::rt
