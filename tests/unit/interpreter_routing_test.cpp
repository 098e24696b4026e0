// Interpreter: top_k, route_tokens, route_experts and gather_rows by hand — the rules every
// compiled routing is checked against (ties, capacity overflow, empty experts, the greedy
// expert choice, the maps' agreement).
#include "interpreter_test_util.h"

namespace stepc::interp::testing {
namespace {

using Routing = InterpreterTest;

std::vector<Tensor> runMulti(InterpreterTest &t, const std::string &op, std::vector<Tensor> args,
                             const std::vector<std::string> &results) {
  std::string source = InterpreterTest::oneOpFunction(op, args, results);
  return t.run(source, std::move(args));
}

TEST_F(Routing, TopKLargestFirstTiesToTheLowerIndex) {
  // Row 0 ties 3.0 at indices 1 and 3 (and 1.0 at 0 and 4): the lower index comes first.
  Tensor x = tensor("tensor<2x5xf64>", {1, 3, 2, 3, 1, -1, -5, 0.5, -2, 7});
  std::vector<Tensor> out =
      runMulti(*this, "step.top_k %a0 {k = 3}", {x}, {"tensor<2x3xf64>", "tensor<2x3xi32>"});
  ASSERT_EQ(out.size(), 2u);
  expectValues(out[0], {3, 3, 2, 7, 0.5, -1});
  expectValues(out[1], {1, 3, 2, 4, 2, 0});
}

TEST_F(Routing, TopKNanRanksFirst) {
  Tensor x = tensor("tensor<1x4xf64>", {1, std::nan(""), 5, 2});
  std::vector<Tensor> out =
      runMulti(*this, "step.top_k %a0 {k = 2}", {x}, {"tensor<1x2xf64>", "tensor<1x2xi32>"});
  ASSERT_EQ(out.size(), 2u);
  expectValues(out[1], {1, 2});
}

TEST_F(Routing, RouteTokensFirstChoicesFirstAndOverflowDropped) {
  // 4 tokens, k = 2, 3 experts, capacity ceil(0.75 * 4 * 2 / 3) = 2. First choices (token
  // order): 0→e0, 1→e0, 2→e0 (full: dropped), 3→e1. Second choices: 0→e1, 1→e2, 2→e1 (full:
  // dropped), 3→e2. Expert 0 gets choices 0 (t0 j0) and 2 (t1 j0), expert 1 choices 6 (t3 j0)
  // and 1 (t0 j1), expert 2 choices 3 (t1 j1) and 7 (t3 j1).
  Tensor experts = tensor("tensor<4x2xi32>", {0, 1, 0, 2, 0, 1, 1, 2});
  std::vector<Tensor> out =
      runMulti(*this, "step.route_tokens %a0 {num_experts = 3, capacity_factor = 0.75}",
               {experts}, {"tensor<3x2xi32>", "tensor<4x2xi32>"});
  ASSERT_EQ(out.size(), 2u);
  expectValues(out[0], {0, 2, 6, 1, 3, 7});
  expectValues(out[1], {0, 3, 1, 4, -1, -1, 2, 5});
}

TEST_F(Routing, RouteTokensLeavesAnUnchosenExpertEmpty) {
  Tensor experts = tensor("tensor<3x1xi32>", {2, 0, 2});
  std::vector<Tensor> out = runMulti(*this, "step.route_tokens %a0 {num_experts = 3}", {experts},
                                     {"tensor<3x1xi32>", "tensor<3x1xi32>"});
  ASSERT_EQ(out.size(), 2u);
  // Capacity 1: expert 0 takes token 1, expert 1 nothing, expert 2 token 0 (token 2 dropped).
  expectValues(out[0], {1, -1, 0});
  expectValues(out[1], {2, 0, -1});
  std::string source = oneOpFunction("step.route_tokens %a0 {num_experts = 2}", {experts},
                                     {"tensor<2x2xi32>", "tensor<3x1xi32>"});
  EXPECT_FALSE(tryRun(source, {experts}).has_value());
  std::string errors = errors_;
  EXPECT_NE(errors.find("out of range for 2 experts"), std::string::npos) << errors;
}

TEST_F(Routing, RouteExpertsGreedyBalancedTiesToTheLowerToken) {
  // 4 tokens, 2 experts, k = 1: capacity 2. Expert 0 scores 0.9 0.5 0.5 0.1: it takes token 0
  // and, of the tied tokens 1 and 2, token 1. Expert 1 takes what is left: tokens 2 and 3.
  Tensor scores = tensor("tensor<4x2xf32>", {0.9, 0.1, 0.5, 0.5, 0.5, 0.5, 0.1, 0.9});
  std::vector<Tensor> out =
      runMulti(*this, "step.route_experts %a0 {k = 1}", {scores},
               {"tensor<2x2xi32>", "tensor<4x1xi32>", "tensor<4x1xi32>"});
  ASSERT_EQ(out.size(), 3u);
  expectValues(out[0], {0, 1, 2, 3});
  expectValues(out[1], {0, 1, 2, 3});
  expectValues(out[2], {0, 0, 1, 1});
}

TEST_F(Routing, RouteExpertsKTwoGivesEveryTokenTwoExperts) {
  // 3 tokens, 3 experts, k = 2: capacity 2; expert 2 is left exactly the tokens short of two.
  Tensor scores = tensor("tensor<3x3xf32>", {3, 2, 1, 2, 3, 1, 1, 1, 3});
  std::vector<Tensor> out =
      runMulti(*this, "step.route_experts %a0 {k = 2}", {scores},
               {"tensor<3x2xi32>", "tensor<3x2xi32>", "tensor<3x2xi32>"});
  ASSERT_EQ(out.size(), 3u);
  // e0 takes t0, t1; e1 takes t0 (3 > ... t1 3, t0 2): t1 and t0; e2: t2 only (t0, t1 full).
  expectValues(out[2], {0, 1, 0, 1, 2, -1});
  expectValues(out[0], {0, 2, 1, 3, 4, -1});
}

TEST_F(Routing, GatherRowsByGroupAndZeroForEmpty) {
  Tensor source = tensor("tensor<2x2xf64>", {1, 2, 3, 4});
  // 2 source rows × group 2 = 4 virtual rows; positions 0..2 read virtual rows 3, 0, (empty).
  Tensor ids = tensor("tensor<3xi32>", {3, 0, -1});
  Tensor inverse = tensor("tensor<2x2xi32>", {1, -1, -1, 0});
  expectValues(runOp("step.gather_rows %a0, %a1, %a2 {group = 2}", {source, ids, inverse},
                     "tensor<3x2xf64>"),
               {3, 4, 1, 2, 0, 0});
}

TEST_F(Routing, GatherRowsRefusesMapsThatDisagree) {
  Tensor source = tensor("tensor<2x2xf64>", {1, 2, 3, 4});
  Tensor ids = tensor("tensor<2xi32>", {1, 0});
  Tensor wrong = tensor("tensor<2xi32>", {0, 1});  // the inverse of ids is {1, 0}
  std::string errors = runOpError("step.gather_rows %a0, %a1, %a2", {source, ids, wrong},
                                  "tensor<2x2xf64>");
  EXPECT_NE(errors.find("the inverse maps that row to"), std::string::npos) << errors;
  Tensor missing = tensor("tensor<2xi32>", {1, -1});
  Tensor one = tensor("tensor<2xi32>", {0, 0});  // row 0 is not read by position 0
  errors = runOpError("step.gather_rows %a0, %a1, %a2", {source, missing, one}, "tensor<2x2xf64>");
  EXPECT_NE(errors.find("which does not read it"), std::string::npos) << errors;
}

}  // namespace
}  // namespace stepc::interp::testing
