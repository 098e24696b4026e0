//===- CpuCheck.cpp - does this CPU run the executable's code? ------------===//
#include "runtime/hal/CpuCheck.h"

#include <sstream>
#include <vector>

namespace stepc::rt {

bool hostHasCpuFeature(const std::string &f) {
  // __builtin_cpu_supports takes a string literal: one case per name the compiler records.
  __builtin_cpu_init();
  if (f == "sse4.2") return __builtin_cpu_supports("sse4.2");
  if (f == "avx") return __builtin_cpu_supports("avx");
  if (f == "avx2") return __builtin_cpu_supports("avx2");
  if (f == "fma") return __builtin_cpu_supports("fma");
  if (f == "bmi2") return __builtin_cpu_supports("bmi2");
  if (f == "f16c") return __builtin_cpu_supports("f16c");
  if (f == "avx512f") return __builtin_cpu_supports("avx512f");
  if (f == "avx512bw") return __builtin_cpu_supports("avx512bw");
  if (f == "avx512dq") return __builtin_cpu_supports("avx512dq");
  if (f == "avx512vl") return __builtin_cpu_supports("avx512vl");
  if (f == "avx512vnni") return __builtin_cpu_supports("avx512vnni");
  if (f == "avx512bf16") return __builtin_cpu_supports("avx512bf16");
  return false;  // a name this runtime does not know: do not pretend it is there
}

std::string checkCpuRequirements(const std::string &requirements,
                                 const std::function<bool(const std::string &)> &has) {
  size_t colon = requirements.find(':');
  std::string cpu = requirements.substr(0, colon);
  std::vector<std::string> missing;
  if (colon != std::string::npos) {
    std::stringstream list(requirements.substr(colon + 1));
    for (std::string feature; std::getline(list, feature, ',');)
      if (!feature.empty() && !has(feature)) missing.push_back(feature);
  }
  if (missing.empty()) return "";
  std::string names;
  for (const std::string &m : missing) names += (names.empty() ? "" : ", ") + m;
  return "this executable was compiled for " + cpu + " and uses " + names +
         ", which this CPU lacks; compile it again with --cpu=native on this machine (or a "
         "CPU both have, such as --cpu=x86-64-v2)";
}

}  // namespace stepc::rt
