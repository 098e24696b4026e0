// Unit tests of the stage table (compiler/Codegen/Pipelines.h) that drives --emit and
// --dump-phases-to for every target.
#include "compiler/Codegen/Pipelines.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace stepc::codegen {
namespace {

TEST(Stages, NamesAreUniqueAndRoundTripPerTarget) {
  for (const TargetInfo &target : allTargets()) {
    std::set<std::string> names;
    for (const Stage *stage : stagesOf(target.target)) {
      EXPECT_TRUE(names.insert(stage->name).second) << target.name << ": " << stage->name;
      EXPECT_EQ(findStage(target.target, stage->name), stage) << stage->name;
    }
  }
}

TEST(Stages, ModelIsFirstAndLLVMIsLastForEveryTarget) {
  for (const TargetInfo &target : allTargets()) {
    auto stages = stagesOf(target.target);
    ASSERT_GE(stages.size(), 2u) << target.name;
    EXPECT_STREQ(stages.front()->name, "model") << target.name;
    EXPECT_STREQ(stages.back()->name, "llvm") << target.name;
    EXPECT_EQ(stages.back()->kind, StageKind::IR) << target.name;
  }
}

TEST(Stages, EveryIRStageAfterModelHasARegisteredPipeline) {
  for (const TargetInfo &target : allTargets())
    for (const Stage *stage : stagesOf(target.target))
      if (stage->kind == StageKind::IR && std::string(stage->name) != "model") {
        EXPECT_NE(std::string(stage->pipeline), "") << stage->name;
        EXPECT_STREQ(stage->extension, "mlir") << stage->name;
      }
}

TEST(Stages, TheCudaStagesBelongToTheGpuTargets) {
  EXPECT_EQ(findStage(Target::CPU, "gpu"), nullptr);
  EXPECT_EQ(findStage(Target::CPU, "ptx"), nullptr);
  EXPECT_NE(findStage(Target::CUDA, "ptx"), nullptr);
  EXPECT_EQ(findStage(Target::CUDAEmulated, "ptx"), nullptr);
  EXPECT_NE(findStage(Target::CUDAEmulated, "emulated"), nullptr);
  EXPECT_EQ(firstTargetWith("gpu"), Target::CUDA);
  EXPECT_EQ(firstTargetWith("emulated"), Target::CUDAEmulated);
  EXPECT_EQ(firstTargetWith("buffers"), Target::CPU);
  // The two `llvm` stages are different pipelines.
  EXPECT_STRNE(findStage(Target::CPU, "llvm")->pipeline, findStage(Target::CUDA, "llvm")->pipeline);
}

TEST(Stages, UnknownNamesAreRejected) {
  for (const char *name : {"", "Model", "cubin", "LLVM"}) {
    EXPECT_EQ(findStage(Target::CPU, name), nullptr) << name;
    EXPECT_FALSE(firstTargetWith(name).has_value()) << name;
  }
}

TEST(Targets, ParseAndValidateOnce) {
  std::string error;
  EXPECT_EQ(parseTarget("cuda", error), Target::CUDA);
  EXPECT_FALSE(parseTarget("rocm", error).has_value());
  EXPECT_EQ(error, "--target expects cpu, cuda or cuda-emulated, found 'rocm'");
  StageOptions options;
  options.target = Target::CUDA;
  EXPECT_EQ(options.validate(), "");
  options.gpuArch = "gfx90a";
  EXPECT_NE(options.validate().find("--gpu-arch expects an NVIDIA architecture like sm_90, "
                                    "found 'gfx90a'"),
            std::string::npos);
  // The CPU target does not read --gpu-arch.
  options.target = Target::CPU;
  EXPECT_EQ(options.validate(), "");
}

}  // namespace
}  // namespace stepc::codegen
