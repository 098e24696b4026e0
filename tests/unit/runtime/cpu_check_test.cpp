// The start-up check of what an executable's code needs of the CPU (runtime/hal/CpuCheck.h).
#include "runtime/hal/CpuCheck.h"

#include <gtest/gtest.h>

#include <set>

namespace stepc::rt {
namespace {

TEST(CpuCheck, AllPresentIsFine) {
  std::set<std::string> host = {"avx2", "fma", "avx512f"};
  auto has = [&](const std::string &f) { return host.count(f) > 0; };
  EXPECT_EQ(checkCpuRequirements("znver4:avx2,fma,avx512f", has), "");
  EXPECT_EQ(checkCpuRequirements("x86-64:", has), "");
  EXPECT_EQ(checkCpuRequirements("", has), "");
}

TEST(CpuCheck, MissingFeaturesAreNamedWithTheFix) {
  std::set<std::string> host = {"avx2", "fma"};
  auto has = [&](const std::string &f) { return host.count(f) > 0; };
  std::string error = checkCpuRequirements("znver5:avx2,avx512f,fma,avx512bw", has);
  EXPECT_EQ(error,
            "this executable was compiled for znver5 and uses avx512f, avx512bw, which this CPU "
            "lacks; compile it again with --cpu=native on this machine (or a CPU both have, such "
            "as --cpu=x86-64-v2)");
}

TEST(CpuCheck, ThisHostHasWhatItsOwnNativeBuildNeeds) {
  // Every x86-64 CPU this runs on has SSE2-era features at least; an unknown name is not there.
  EXPECT_FALSE(hostHasCpuFeature("no-such-feature"));
  // The predicate agrees with the compiler's names for what this machine reports.
  EXPECT_EQ(hostHasCpuFeature("avx2"), __builtin_cpu_supports("avx2") != 0);
}

}  // namespace
}  // namespace stepc::rt
