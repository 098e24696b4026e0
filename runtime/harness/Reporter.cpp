//===- Reporter.cpp - training progress for people and for files ---------===//
#include "runtime/harness/Reporter.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

#include "runtime/base/FileIO.h"
#include "runtime/base/Json.h"

namespace stepc::rt {
namespace {

std::string number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

std::string printf1(const char *format, double value) {
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// Keeps the lines of `path` whose "step" is below `firstStep` (a resumed run rewrites the
// rest). A missing file is fine; unreadable lines (a line cut short by a kill) are dropped.
Status keepEarlierSteps(const std::string &path, int64_t firstStep) {
  if (::access(path.c_str(), F_OK) != 0) return {};
  std::vector<uint8_t> bytes;
  if (Status s = readFile(path, bytes); !s.ok()) return s;
  std::string kept;
  size_t begin = 0;
  while (begin < bytes.size()) {
    size_t end = begin;
    while (end < bytes.size() && bytes[end] != '\n') ++end;
    std::string_view line(reinterpret_cast<const char *>(bytes.data()) + begin, end - begin);
    JsonValue value;
    uint64_t step;
    if (end < bytes.size() && parseJson(line, value).ok() && value.isObject() &&
        value.find("step") && value.find("step")->toUint64(step) &&
        step < static_cast<uint64_t>(firstStep)) {
      kept.append(line);
      kept += '\n';
    }
    begin = end + 1;
  }
  return writeFileAtomically(path, {{kept.data(), kept.size()}});
}

}  // namespace

std::string formatRate(double value) {
  if (!std::isfinite(value) || value < 0) return "?";
  const char *suffix[] = {"", "k", "M", "G", "T"};
  int i = 0;
  while (value >= 999.5 && i < 4) {
    value /= 1000;
    ++i;
  }
  const char *format = value >= 99.95 ? "%.0f%s" : value >= 9.995 ? "%.1f%s" : "%.2f%s";
  char text[32];
  std::snprintf(text, sizeof text, format, value, suffix[i]);
  return text;
}

std::string formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0 || seconds > 1e9) return "?";
  long long s = static_cast<long long>(std::llround(seconds));
  char text[48];
  if (s >= 3600)
    std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(text, sizeof text, "%lld:%02lld", s / 60, s % 60);
  return text;
}

Reporter::Reporter(ReporterOptions options) : options_(std::move(options)) {
  mode_ = options_.mode;
  if (mode_ == ReporterOptions::Mode::kAuto)
    mode_ = options_.out && ::isatty(::fileno(options_.out)) ? ReporterOptions::Mode::kInteractive
                                                             : ReporterOptions::Mode::kPlain;
}

Reporter::~Reporter() {
  if (metrics_) std::fclose(metrics_);
}

double Reporter::now() const {
  if (options_.clock) return options_.clock();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Status Reporter::begin(const RunStart &start) {
  start_ = start;
  stepsDone_ = 0;
  lineOpen_ = false;
  lastDraw_ = -1e300;
  if (metrics_) std::fclose(metrics_);
  metrics_ = nullptr;
  if (!options_.metricsPath.empty()) {
    const std::string &path = options_.metricsPath;
    if (start.firstStep > 0) {
      if (Status s = keepEarlierSteps(path, start.firstStep); !s.ok())
        return s.withContext("metrics file");
    }
    metrics_ = std::fopen(path.c_str(), start.firstStep > 0 ? "a" : "w");
    if (!metrics_)
      return Status::error(path + ": cannot open the metrics file for writing: " +
                           std::strerror(errno));
  }
  startTime_ = now();
  return {};
}

std::string Reporter::metricsLine(int64_t step, const StepMetrics &metrics, double tokensPerS,
                                  double stepMs) {
  std::string line = "{\"step\":" + std::to_string(step);
  line += ",\"loss\":" + number(metrics.loss);
  line += ",\"lr\":" + number(metrics.lr);
  line += ",\"grad_norm\":" + number(metrics.gradNorm);
  line += ",\"tokens_per_s\":" + number(tokensPerS);
  line += ",\"step_ms\":" + number(stepMs);
  for (const auto &[name, value] : metrics.extra) {
    JsonValue key = JsonValue::string(name);
    line += "," + writeJson(key) + ":" + number(value);
  }
  line += "}";
  return line;
}

std::string Reporter::progressText(int64_t step, const StepMetrics &metrics) const {
  std::string text = "step " + std::to_string(step + 1) + "/" + std::to_string(start_.totalSteps);
  text += " | loss " + printf1("%.4f", metrics.loss);
  text += " | lr " + printf1("%.2e", metrics.lr);
  for (const auto &[name, value] : metrics.extra)
    if (name == "val_loss") text += " | val " + printf1("%.4f", value);
  double elapsed = now() - startTime_;
  int64_t done = stepsDone_ > 0 ? stepsDone_ : 1;
  if (elapsed > 0) {
    double rate = static_cast<double>(start_.tokensPerStep) * static_cast<double>(done) / elapsed;
    text += " | " + formatRate(rate) + " " + start_.rateUnit + "/s";
    int64_t remaining = start_.totalSteps - (step + 1);
    text += " | ETA " + formatDuration(elapsed / static_cast<double>(done) *
                                       static_cast<double>(remaining > 0 ? remaining : 0));
  } else {
    text += " | ? " + start_.rateUnit + "/s | ETA ?";
  }
  return text;
}

Status Reporter::step(int64_t step, const StepMetrics &metrics, double seconds) {
  ++stepsDone_;
  if (metrics_) {
    double rate = seconds > 0 ? static_cast<double>(start_.tokensPerStep) / seconds : 0.0;
    std::string line = metricsLine(step, metrics, rate, seconds * 1000.0) + "\n";
    if (std::fwrite(line.data(), 1, line.size(), metrics_) != line.size() ||
        std::fflush(metrics_) != 0)
      return Status::error(options_.metricsPath + ": cannot write the metrics file: " +
                           std::strerror(errno));
  }
  if (options_.onStep) options_.onStep(step, metrics);
  if (!options_.out || mode_ == ReporterOptions::Mode::kQuiet) return {};
  bool first = stepsDone_ == 1, last = step + 1 >= start_.totalSteps;
  if (mode_ == ReporterOptions::Mode::kInteractive) {
    double t = now();
    if (!first && !last && t - lastDraw_ < 0.1) return {};
    lastDraw_ = t;
    std::fprintf(options_.out, "\r%s\x1b[K", progressText(step, metrics).c_str());
    lineOpen_ = true;
  } else {
    int64_t every = options_.plainEvery;
    if (every <= 0) {
      int64_t steps = start_.totalSteps - start_.firstStep;
      every = steps <= 100 ? 1 : (steps + 99) / 100;
    }
    bool validated = std::any_of(metrics.extra.begin(), metrics.extra.end(),
                                 [](const auto &e) { return e.first == "val_loss"; });
    if (!first && !last && !validated && (step + 1) % every != 0) return {};
    std::fprintf(options_.out, "%s\n", progressText(step, metrics).c_str());
  }
  std::fflush(options_.out);
  return {};
}

void Reporter::clearLine() {
  if (lineOpen_ && options_.out) std::fprintf(options_.out, "\r\x1b[K");
  lineOpen_ = false;
}

void Reporter::note(const std::string &message) {
  if (!options_.out) return;
  clearLine();
  std::fprintf(options_.out, "%s\n", message.c_str());
  lastDraw_ = -1e300;  // the next step redraws the progress line below the note
  std::fflush(options_.out);
}

Status Reporter::finish() {
  if (lineOpen_ && options_.out) {
    std::fprintf(options_.out, "\n");
    std::fflush(options_.out);
  }
  lineOpen_ = false;
  if (metrics_) {
    FILE *file = metrics_;
    metrics_ = nullptr;
    if (std::fclose(file) != 0)
      return Status::error(options_.metricsPath + ": cannot close the metrics file: " +
                           std::strerror(errno));
  }
  return {};
}

}  // namespace stepc::rt
