// Unit tests of the stage table that drives --emit and --dump-phases-to.
#include "compiler/Driver/Phases.h"

#include <gtest/gtest.h>

#include <set>

namespace stepc {
namespace {

TEST(Phases, NamesAreUniqueAndRoundTrip) {
  std::set<std::string> names;
  for (const PhaseInfo &info : allPhases()) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    std::optional<Phase> parsed = parsePhase(info.name);
    ASSERT_TRUE(parsed.has_value()) << info.name;
    EXPECT_EQ(*parsed, info.phase);
    EXPECT_STREQ(phaseInfo(info.phase).name, info.name);
  }
}

TEST(Phases, ModelIsTheFirstStage) {
  ASSERT_FALSE(allPhases().empty());
  EXPECT_EQ(allPhases().front().phase, Phase::Model);
}

TEST(Phases, UnknownNamesAreRejected) {
  EXPECT_FALSE(parsePhase("").has_value());
  EXPECT_FALSE(parsePhase("Model").has_value());
  EXPECT_FALSE(parsePhase("cubin").has_value());
}

}  // namespace
}  // namespace stepc
