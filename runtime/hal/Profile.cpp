//===- Profile.cpp - the per-kernel profile of a compiled step ------------===//
#include "runtime/hal/Profile.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace stepc::rt {
namespace {

struct Entry {
  std::string name;
  int64_t calls = 0;
  double seconds = 0;
  double bytes = 0, flops = 0;  // per call (0: unknown)
  double flopsRun = 0;          // over the calls: `flops` each, or what the call reported
};

struct State {
  bool enabled = false;
  bool warmupLeftOut = false;
  std::vector<Entry> entries;
  std::chrono::steady_clock::time_point start;
  double reported = -1;  // FLOPs the call in progress reported running (-1: none)
};

State &state() {
  static State s;
  return s;
}

void printAtExit() {
  std::fputs(profileReport().c_str(), stderr);
}

}  // namespace

void initProfile(const std::vector<std::string> &names, const std::vector<double> &bytes,
                 const std::vector<double> &flops) {
  const char *env = std::getenv("STEPC_PROFILE");
  State &s = state();
  s.enabled = env && *env && std::strcmp(env, "0") != 0;
  s.entries.clear();
  for (size_t i = 0; i < names.size(); ++i)
    s.entries.push_back({names[i], 0, 0, i < bytes.size() ? bytes[i] : 0,
                         i < flops.size() ? flops[i] : 0});
  if (s.enabled) std::atexit(printAtExit);
}

std::string profileReport() {
  State &s = state();
  std::vector<const Entry *> order;
  double total = 0;
  for (const Entry &e : s.entries)
    if (e.calls) {
      order.push_back(&e);
      total += e.seconds;
    }
  std::sort(order.begin(), order.end(),
            [](const Entry *a, const Entry *b) { return a->seconds > b->seconds; });
  std::string out = "profile (STEPC_PROFILE): " + std::to_string(order.size()) +
                    " kernels and library calls, " + std::to_string(total * 1e3) + " ms in all" +
                    (s.warmupLeftOut ? " (step 1, the warm-up, left out)" : "") + "\n";
  char line[512];
  std::snprintf(line, sizeof line, "%10s %10s %7s  %s\n", "total ms", "calls", "share", "kernel");
  out += line;
  for (const Entry *e : order) {
    // The rate goes after the name, so that a line still starts "ms calls share% name".
    char rate[64] = "";
    double seconds = std::max(e->seconds, 1e-12), n = static_cast<double>(e->calls);
    if (e->flops > 0)
      std::snprintf(rate, sizeof rate, "  (%.1f GFLOP/s)", e->flopsRun / seconds / 1e9);
    else if (e->bytes > 0)
      std::snprintf(rate, sizeof rate, "  (%.1f GB/s)", e->bytes * n / seconds / 1e9);
    std::snprintf(line, sizeof line, "%10.1f %10lld %6.1f%%  %s%s\n", e->seconds * 1e3,
                  static_cast<long long>(e->calls), total > 0 ? 100.0 * e->seconds / total : 0.0,
                  e->name.c_str(), rate);
    out += line;
  }
  return out;
}

void profileFlopsRun(double flops) {
  State &s = state();
  if (!s.enabled) return;
  s.reported = std::max(s.reported, 0.0) + flops;
}

void profileWarmupDone() {
  State &s = state();
  if (!s.enabled) return;
  for (Entry &e : s.entries) {
    e.calls = 0;
    e.seconds = 0;
    e.flopsRun = 0;
  }
  s.warmupLeftOut = true;
}

}  // namespace stepc::rt

void stepc_profile_enter(int64_t id) {
  stepc::rt::State &s = stepc::rt::state();
  if (!s.enabled) return;
  (void)id;
  s.reported = -1;
  s.start = std::chrono::steady_clock::now();
}

void stepc_profile_exit(int64_t id) {
  stepc::rt::State &s = stepc::rt::state();
  if (!s.enabled || id < 0 || static_cast<size_t>(id) >= s.entries.size()) return;
  auto now = std::chrono::steady_clock::now();
  stepc::rt::Entry &e = s.entries[id];
  e.calls++;
  e.seconds += std::chrono::duration<double>(now - s.start).count();
  e.flopsRun += s.reported >= 0 ? s.reported : e.flops;
}
