// The VJP of every differentiable step op, checked element by element against central finite
// differences in float64.
//
// Each case is a few ops on arguments %a0, %a1, ...; the last top-level op defines %y (or
// %y:N). The harness appends one fixed random weight %rK per float result of that op and the
// loss  L = Σ_K sum(%y#K * %rK),  marks the function `step.differentiate`, runs
// --step-differentiate, and interprets the result in float64 (Precision::F64). Every element of
// every float argument's gradient (including the weights %rK, whose gradient is the op's
// output) is compared with (L(x + h e_i) - L(x - h e_i)) / 2h computed by running the ORIGINAL,
// un-differentiated function, h = 1e-6 · max(1, |x_i|). Arguments come from a seed derived
// from the case name. Inputs of kinked ops are kept away from their kinks by construction:
// |x| >= 0.1 for relu/abs/leaky_relu, operands of max/min on offset lattices (|a - b| >= 0.3),
// distinct values spaced 0.3 apart for reduce_max; log/sqrt/rsqrt and non-integer powers get
// positive inputs.
//
// Not covered, by design: slice with strides other than 1 (its VJP rejects it with an error,
// see tests/lit/compiler/Autodiff/invalid_differentiate.mlir) and matmul transpose_lhs with a left operand of rank
// > 2 (rejected by the shape rule). A coverage test below requires >= 3 cases for every op that
// has a gradient rule, and for repeat and custom_grad; a harness test checks that a wrong
// gradient (a custom_grad with a doubled backward) is caught.
//
// Set STEPC_FD_VERBOSE=1 to print the max abs/rel error of every case.
#include <cstdlib>
#include <iostream>
#include <set>

#include "fd_util.h"

namespace stepc::gradtest {
namespace {

// ---- Tolerance table -------------------------------------------------------------------------
//
// A case passes when |analytic - fd| <= atol + rtol·|fd| for every element.
// Central differences with h = 1e-6·max(1,|x|) have truncation error ~h²|f'''|/6 (<= 1e-11 on
// the domains used) and rounding noise ~ε·Σ|terms of L|/h: 1e-10 .. 3e-9 for the losses here
// (<= ~130 terms of size <= ~3). A wrong VJP gives errors of order 1e-3 .. 1.
//
//   class       rtol    atol    ops
//   kSmooth     1e-6    1e-8    every op but cast: elementwise unary, pow, binary, select,
//                               sum, mean, reduce_max, cumsum, reshape, transpose, broadcast,
//                               slice, pad, split, concat, dropout, jitter, iota, matmul, batch_matmul,
//                               embedding, conv1d, softmax, log_softmax, layer_norm, rms_norm,
//                               cross_entropy, repeat, custom_grad (largest error seen:
//                               3.1e-9, conv1d)
//   kCast       1e-5    1e-6    cast f64->f32->f64: the forward rounds to f32 (ulp 2^-23·|x|), so
//                               FD uses h = 0.1·max(1,|x|), which is exact for this linear map up
//                               to ulp/(2h) ~ 1.2e-6·|r|; the adjoint is rounded to f32 (6e-8)
constexpr Tolerance kSmooth{1e-6, 1e-8};
constexpr Tolerance kCast{1e-5, 1e-6};
constexpr double kStep = 1e-6;
constexpr double kCastStep = 0.1;

// ---- Argument generators ---------------------------------------------------------------------

struct Gen {
  enum Kind { Uniform, SignedAway, Lattice, Distinct, Int, Bool } kind;
  double a = 0, b = 0;
};
/// Uniform in [lo, hi).
Gen U(double lo, double hi) { return {Gen::Uniform, lo, hi}; }
/// A random sign times uniform [lo, hi): away from 0.
Gen Away(double lo, double hi) { return {Gen::SignedAway, lo, hi}; }
/// k + offset + 0.1·u with integer k in [-2, 2]: two lattices with offsets 0.5 apart differ by
/// at least 0.4 everywhere, so max/min never tie.
Gen Lattice(double offset) { return {Gen::Lattice, offset, 0}; }
/// A random permutation of equally spaced values (spacing s) plus noise < 0.1·s: all distinct.
Gen Distinct(double spacing) { return {Gen::Distinct, spacing, 0}; }
/// Integers in [lo, hi).
Gen Ints(int64_t lo, int64_t hi) { return {Gen::Int, double(lo), double(hi)}; }
Gen Bools() { return {Gen::Bool}; }

std::vector<double> generate(const Gen &g, int64_t n, Rng &rng) {
  std::vector<double> v(n);
  switch (g.kind) {
    case Gen::Uniform:
      for (double &x : v) x = rng.uniform(g.a, g.b);
      break;
    case Gen::SignedAway:
      for (double &x : v) x = (rng.below(2) ? 1.0 : -1.0) * rng.uniform(g.a, g.b);
      break;
    case Gen::Lattice:
      for (double &x : v) x = static_cast<double>(rng.below(5) - 2) + g.a + 0.1 * rng.uniform();
      break;
    case Gen::Distinct: {
      std::vector<int64_t> perm(n);
      for (int64_t i = 0; i < n; ++i) perm[i] = i;
      for (int64_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[rng.below(i + 1)]);
      for (int64_t i = 0; i < n; ++i)
        v[i] = (static_cast<double>(perm[i]) - (n - 1) / 2.0) * g.a + 0.1 * g.a * rng.uniform();
      break;
    }
    case Gen::Int:
      for (double &x : v) x = g.a + static_cast<double>(rng.below(int64_t(g.b - g.a)));
      break;
    case Gen::Bool:
      for (double &x : v) x = static_cast<double>(rng.below(2));
      break;
  }
  return v;
}

// ---- Cases -----------------------------------------------------------------------------------

struct Arg {
  std::string type;
  Gen gen;
};

struct Case {
  std::string name;        // unique: the test's name
  std::string op;          // the op under test (its mnemonic), for the coverage check
  std::vector<Arg> args;   // %a0, %a1, ...
  std::string body;        // ops on the arguments; the last top-level op defines %y or %y:N
  Tolerance tol = kSmooth;
  double fdStep = kStep;
  std::set<int> unused = {};  // results of %y left out of the loss
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

std::string F(const std::string &shape) {
  return shape.empty() ? "tensor<f64>" : "tensor<" + shape + "xf64>";
}
std::string I32(const std::string &shape) {
  return shape.empty() ? "tensor<i32>" : "tensor<" + shape + "xi32>";
}
std::string I1(const std::string &shape) {
  return shape.empty() ? "tensor<i1>" : "tensor<" + shape + "xi1>";
}
std::string tag(const std::string &shape) { return shape.empty() ? "scalar" : shape; }
std::string list(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}
std::string tagList(const std::vector<int64_t> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "_" : "") + (v[i] < 0 ? "m" + std::to_string(-v[i]) : std::to_string(v[i]));
  return s;
}

void addUnary(std::vector<Case> &cs, const std::string &op, const std::string &attrs,
              const std::string &variant, Gen g) {
  for (std::string s : {"", "5", "2x3", "2x3x4"})
    cs.push_back({op + variant + "_" + tag(s), op, {{F(s), g}},
                  "%y = step." + op + " %a0" + attrs + " : " + F(s)});
}

std::vector<Case> allCases() {
  std::vector<Case> cs;

  // Elementwise unary.
  addUnary(cs, "neg", "", "", U(-2, 2));
  addUnary(cs, "abs", "", "", Away(0.1, 2));
  addUnary(cs, "exp", "", "", U(-2, 2));
  addUnary(cs, "log", "", "", U(0.5, 3));
  addUnary(cs, "sqrt", "", "", U(0.5, 3));
  addUnary(cs, "rsqrt", "", "", U(0.5, 3));
  addUnary(cs, "tanh", "", "", U(-2, 2));
  addUnary(cs, "sigmoid", "", "", U(-3, 3));
  addUnary(cs, "relu", "", "", Away(0.1, 2));
  addUnary(cs, "leaky_relu", "", "", Away(0.1, 2));
  addUnary(cs, "leaky_relu", " {alpha = 0.2}", "_alpha0_2", Away(0.1, 2));
  addUnary(cs, "silu", "", "", U(-3, 3));
  addUnary(cs, "erf", "", "", U(-2, 2));
  addUnary(cs, "sin", "", "", U(-3, 3));
  addUnary(cs, "cos", "", "", U(-3, 3));
  addUnary(cs, "gelu", "", "_default", U(-3, 3));
  addUnary(cs, "gelu", " {approximate = \"tanh\"}", "_tanh", U(-3, 3));
  addUnary(cs, "gelu", " {approximate = \"erf\"}", "_erf", U(-3, 3));

  // pow: integer exponents on signed inputs, others on positive inputs.
  struct PowCase { const char *shape; const char *exp; const char *name; Gen g; };
  for (const PowCase &p : std::vector<PowCase>{{"2x3", "2.0", "2", U(-2, 2)},
                                               {"4", "3.0", "3", U(-2, 2)},
                                               {"2x3x2", "3.0", "3", U(-2, 2)},
                                               {"2x3", "0.5", "0_5", U(0.5, 3)},
                                               {"5", "-1.5", "m1_5", U(0.5, 3)},
                                               {"2x2x3", "2.5", "2_5", U(0.5, 3)},
                                               {"", "1.0", "1", U(-2, 2)}})
    cs.push_back({std::string("pow_e") + p.name + "_" + tag(p.shape), "pow", {{F(p.shape), p.g}},
                  "%y = step.pow %a0 {exponent = " + std::string(p.exp) + "} : " + F(p.shape)});

  // Binary with broadcasting.
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"2x3", "2x3"}, {"2x3", "3"}, {"4x1x3", "2x1"}, {"", "2x3"}, {"2x1", "1x3"}};
  struct BinOp { const char *op; Gen lhs, rhs; };
  for (const BinOp &b : std::vector<BinOp>{{"add", U(-2, 2), U(-2, 2)},
                                           {"sub", U(-2, 2), U(-2, 2)},
                                           {"mul", U(-2, 2), U(-2, 2)},
                                           {"div", U(-2, 2), Away(0.5, 2)},
                                           {"max", Lattice(0), Lattice(0.5)},
                                           {"min", Lattice(0), Lattice(0.5)}})
    for (auto [sa, sb] : pairs)
      cs.push_back({std::string(b.op) + "_" + tag(sa) + "_" + tag(sb), b.op,
                    {{F(sa), b.lhs}, {F(sb), b.rhs}},
                    "%y = step." + std::string(b.op) + " %a0, %a1 : " + F(sa) + ", " + F(sb)});
  // One operand used twice (fan-out accumulates).
  cs.push_back({"mul_self_2x3", "mul", {{F("2x3"), U(-2, 2)}},
                "%y = step.mul %a0, %a0 : " + F("2x3") + ", " + F("2x3")});
  cs.push_back({"div_self_rhs_2x3", "div", {{F("2x3"), Away(0.5, 2)}, {F("3"), Away(0.5, 2)}},
                "%q = step.div %a0, %a1 : " + F("2x3") + ", " + F("3") +
                    "\n  %y = step.div %q, %a0 : " + F("2x3") + ", " + F("2x3")});

  // select: both branches, broadcasting all three operands.
  struct Sel { const char *c, *t, *f; };
  for (const Sel &s : std::vector<Sel>{{"2x3", "2x3", "2x3"},
                                       {"2x3", "3", ""},
                                       {"4x1", "1x3", "4x3"},
                                       {"2x1x3", "3x1", "1"}})
    cs.push_back({"select_" + tag(s.c) + "_" + tag(s.t) + "_" + tag(s.f), "select",
                  {{I1(s.c), Bools()}, {F(s.t), U(-2, 2)}, {F(s.f), U(-2, 2)}},
                  "%y = step.select %a0, %a1, %a2 : " + I1(s.c) + ", " + F(s.t) + ", " +
                      F(s.f)});

  // Reductions.
  struct Red { const char *shape; std::vector<int64_t> axes; bool keepdim; };
  const std::vector<Red> reds = {{"2x3", {1}, false},
                                 {"2x3x4", {0, 2}, false},
                                 {"2x3x4", {1}, true},
                                 {"3x4", {0, 1}, false},
                                 {"2x3", {-1}, true},
                                 {"2x3x4", {-1, 0}, true}};
  for (const char *op : {"sum", "mean", "reduce_max"})
    for (const Red &r : reds) {
      Gen g = std::string(op) == "reduce_max" ? Distinct(0.3) : U(-2, 2);
      cs.push_back({std::string(op) + "_" + r.shape + "_ax" + tagList(r.axes) +
                        (r.keepdim ? "_keep" : ""),
                    op, {{F(r.shape), g}},
                    "%y = step." + std::string(op) + " %a0 {axes = " + list(r.axes) +
                        (r.keepdim ? ", keepdim" : "") + "} : " + F(r.shape)});
    }

  // cumsum, both directions.
  struct Cum { const char *shape; int64_t axis; bool reverse; };
  for (const Cum &c : std::vector<Cum>{{"5", 0, false},
                                       {"2x4", 1, false},
                                       {"3x4", 0, false},
                                       {"2x3x4", 1, true},
                                       {"3x4", -1, true},
                                       {"4", 0, true}})
    cs.push_back({std::string("cumsum_") + c.shape + "_ax" + tagList({c.axis}) +
                      (c.reverse ? "_rev" : ""),
                  "cumsum", {{F(c.shape), U(-2, 2)}},
                  "%y = step.cumsum %a0 {axis = " + std::to_string(c.axis) +
                      (c.reverse ? ", reverse" : "") + "} : " + F(c.shape)});

  // Shape ops.
  struct Attr1 { const char *shape; std::string attrs; const char *name; };
  auto addShapeOp = [&](const std::string &op, const std::vector<Attr1> &v) {
    for (const Attr1 &a : v)
      cs.push_back({op + "_" + tag(a.shape) + "_" + a.name, op, {{F(a.shape), U(-2, 2)}},
                    "%y = step." + op + " %a0 {" + a.attrs + "} : " + F(a.shape)});
  };
  addShapeOp("reshape", {{"2x3", "shape = [3, 2]", "3x2"},
                         {"2x3x4", "shape = [6, -1]", "6xm1"},
                         {"4x6", "shape = [2, 2, 6]", "2x2x6"},
                         {"2x3", "shape = [6]", "6"},
                         {"2x3x4", "shape = [0, 12]", "0x12"}});
  addShapeOp("transpose", {{"2x3", "perm = [1, 0]", "p10"},
                           {"2x3x4", "perm = [2, 0, 1]", "p201"},
                           {"2x3x4", "perm = [1, 2, 0]", "p120"},
                           {"2x3x4x2", "perm = [0, 2, 1, 3]", "p0213"}});
  addShapeOp("broadcast", {{"3", "shape = [2, 3]", "2x3"},
                           {"2x1", "shape = [2, 4]", "2x4"},
                           {"1x3", "shape = [2, 4, 3]", "2x4x3"},
                           {"", "shape = [2, 2]", "2x2"}});
  addShapeOp("slice", {{"5", "start = [1], limit = [4]", "1to4"},
                       {"4x5", "start = [1, 0], limit = [3, 5]", "rows1to3"},
                       {"2x3x4", "start = [0, 1, 1], limit = [2, 3, 3], strides = [1, 1, 1]",
                        "inner"},
                       {"3x3", "start = [0, 0], limit = [1, 3]", "row0"}});
  addShapeOp("pad", {{"3", "low = [1], high = [2], value = 0.0", "l1h2"},
                     {"2x3", "low = [1, 0], high = [0, 2], value = 1.5", "mixed"},
                     {"2x2x3", "low = [0, 2, 1], high = [1, 0, 0], value = -0.5", "3d"}});
  // split: every part in the loss, or some left unused (their adjoint is zero).
  struct SplitCase { const char *shape; int64_t axis, parts; std::set<int> unused; const char *name; };
  for (const SplitCase &s : std::vector<SplitCase>{{"2x6", -1, 3, {}, "axm1_p3"},
                                                   {"4x3", 0, 2, {}, "ax0_p2"},
                                                   {"2x4x2", 1, 2, {1}, "ax1_p2_unused1"},
                                                   {"6", 0, 3, {0, 2}, "ax0_p3_unused02"}})
    cs.push_back({std::string("split_") + s.shape + "_" + s.name, "split", {{F(s.shape), U(-2, 2)}},
                  "%y:" + std::to_string(s.parts) + " = step.split %a0 {axis = " +
                      std::to_string(s.axis) + ", parts = " + std::to_string(s.parts) + "} : " +
                      F(s.shape),
                  kSmooth, kStep, s.unused});
  // concat.
  cs.push_back({"concat_2x3_2x2_ax1", "concat", {{F("2x3"), U(-2, 2)}, {F("2x2"), U(-2, 2)}},
                "%y = step.concat %a0, %a1 {axis = 1} : " + F("2x3") + ", " + F("2x2")});
  cs.push_back({"concat_three_ax0", "concat",
                {{F("1x3"), U(-2, 2)}, {F("2x3"), U(-2, 2)}, {F("1x3"), U(-2, 2)}},
                "%y = step.concat %a0, %a1, %a2 {axis = 0} : " + F("1x3") + ", " + F("2x3") +
                    ", " + F("1x3")});
  cs.push_back({"concat_2x2x3_2x1x3_axm2", "concat",
                {{F("2x2x3"), U(-2, 2)}, {F("2x1x3"), U(-2, 2)}},
                "%y = step.concat %a0, %a1 {axis = -2} : " + F("2x2x3") + ", " + F("2x1x3")});
  cs.push_back({"concat_self_2x3_ax0", "concat", {{F("2x3"), U(-2, 2)}},
                "%y = step.concat %a0, %a0 {axis = 0} : " + F("2x3") + ", " + F("2x3")});

  // cast f64 -> f32 -> f64 (see kCast).
  for (std::string s : {"5", "2x3", "2x2x3"})
    cs.push_back({"cast_f32_roundtrip_" + s, "cast", {{F(s), U(-2, 2)}},
                  "%c = step.cast %a0 {to = f32} : " + F(s) + "\n  %y = step.cast %c {to = f64} : " +
                      "tensor<" + s + "xf32>",
                  kCast, kCastStep});

  // quantize and exact_scale (exact reversible streams) differentiate as the maps they stand
  // for, x and x * num/den: finite differences over h = 0.1 see them so, up to the grid
  // 2^-32 / h ~ 1e-9 (kCast's tolerances). The buffer is an integer: the loss reads the value.
  for (std::string s : {"5", "2x3", "2x2x3"})
    cs.push_back({"quantize_b32_" + s, "quantize", {{F(s), U(-2, 2)}},
                  "%y = step.quantize %a0 {bits = 32} : " + F(s), kCast, kCastStep});
  struct Exact { const char *shape, *buffer, *attrs, *name; };
  for (const Exact &e : std::vector<Exact>{{"5", "0", "num = 9, den = 10", "9_10"},
                                           {"2x3", "7", "num = 3, den = 4", "3_4_buffer7"},
                                           {"2x2x3", "12", "num = 9, den = 10, inverse", "inverse"}}) {
    std::string buffer = std::string("tensor<") + e.shape + "xi64>";
    cs.push_back({std::string("exact_scale_") + e.name, "exact_scale", {{F(e.shape), U(-2, 2)}},
                  "%q = step.quantize %a0 {bits = 32} : " + F(e.shape) +
                      "\n  %b = step.constant {value = dense<" + e.buffer + "> : " + buffer +
                      "}\n  %s:2 = step.exact_scale %q, %b {" + e.attrs + ", bits = 32} : " +
                      F(e.shape) + ", " + buffer + "\n  %y = step.neg %s#0 : " + F(e.shape),
                  kCast, kCastStep});
  }

  // dropout: the same counter-based mask in the forward and the adjoint.
  struct Drop { const char *shape, *rate, *seed, *name; };
  for (const Drop &d : std::vector<Drop>{{"2x3", "0.3", "7", "r0_3"},
                                         {"4x5", "0.5", "1", "r0_5"},
                                         {"2x3x4", "0.1", "42", "r0_1"}})
    cs.push_back({std::string("dropout_") + d.shape + "_" + d.name, "dropout", {{F(d.shape), U(-2, 2)}},
                  "%y = step.dropout %a0 {rate = " + std::string(d.rate) + ", seed = " + d.seed +
                      "} : " + F(d.shape)});

  // jitter: the same counter-based factors in the forward and the adjoint, with and without a
  // step counter (a constant operand: the gradient check perturbs only a0).
  struct Jit { const char *shape, *eps, *step, *name; };
  for (const Jit &j : std::vector<Jit>{{"2x3", "0.01", "", "e0_01"},
                                       {"4x5", "0.5", "3", "e0_5_step3"},
                                       {"2x3x4", "0.9", "1000", "e0_9_step1000"}})
    cs.push_back({std::string("jitter_") + j.shape + "_" + j.name, "jitter",
                  {{F(j.shape), U(-2, 2)}},
                  *j.step ? "%s = step.constant {value = dense<" + std::string(j.step) +
                                "> : tensor<i64>}\n  %y = step.jitter %a0, %s {eps = " +
                                j.eps + ", seed = 11} : " + F(j.shape) + ", tensor<i64>"
                          : "%y = step.jitter %a0 {eps = " + std::string(j.eps) + ", seed = 11} : " +
                                F(j.shape)});

  // iota: reads only its operand's shape (no gradient through it); x / (position + 1).
  struct Iota { const char *shape; int64_t axis; };
  for (const Iota &i : std::vector<Iota>{{"2x4", 1}, {"3x2", 0}, {"2x3x2", 2}})
    cs.push_back({std::string("iota_div_") + i.shape + "_ax" + std::to_string(i.axis), "iota",
                  {{F(i.shape), U(-2, 2)}},
                  "%p = step.iota %a0 {axis = " + std::to_string(i.axis) +
                      ", dtype = f64, offset = 1} : " + F(i.shape) + "\n  %y = step.div %a0, %p : " +
                      F(i.shape) + ", " + F(i.shape)});

  // matmul: the four transpose combinations, 2-D and 3-D / 4-D left operands.
  struct Mm { const char *lhs, *rhs, *attrs, *name; };
  for (const Mm &m : std::vector<Mm>{
           {"3x4", "4x5", "", "nn"},
           {"4x3", "4x5", " {transpose_lhs}", "tn"},
           {"3x4", "5x4", " {transpose_rhs}", "nt"},
           {"4x3", "5x4", " {transpose_lhs, transpose_rhs}", "tt"},
           // transpose_lhs needs a rank-2 left operand (a shape rule), so a 3-D / 4-D left
           // operand comes with transpose_rhs or none.
           {"2x3x4", "4x5", "", "nn"},
           {"2x3x4", "5x4", " {transpose_rhs}", "nt"},
           {"2x2x3x4", "4x2", "", "nn"},
           {"2x2x3x4", "2x4", " {transpose_rhs}", "nt"},
           {"1x3x4", "4x4", "", "nn"}})
    cs.push_back({std::string("matmul_") + m.name + "_" + m.lhs + "_" + m.rhs, "matmul",
                  {{F(m.lhs), U(-1.5, 1.5)}, {F(m.rhs), U(-1.5, 1.5)}},
                  "%y = step.matmul %a0, %a1" + std::string(m.attrs) + " : " + F(m.lhs) + ", " +
                      F(m.rhs)});
  for (const Mm &m : std::vector<Mm>{
           {"2x3x4", "2x4x5", "", "nn"},
           {"2x4x3", "2x4x5", " {transpose_lhs}", "tn"},
           {"2x3x4", "2x5x4", " {transpose_rhs}", "nt"},
           {"2x4x3", "2x5x4", " {transpose_lhs, transpose_rhs}", "tt"},
           {"2x2x3x4", "2x2x4x3", "", "nn"},
           {"2x2x4x3", "2x2x3x4", " {transpose_lhs, transpose_rhs}", "tt"}})
    cs.push_back({std::string("batch_matmul_") + m.name + "_" + m.lhs + "_" + m.rhs,
                  "batch_matmul", {{F(m.lhs), U(-1.5, 1.5)}, {F(m.rhs), U(-1.5, 1.5)}},
                  "%y = step.batch_matmul %a0, %a1" + std::string(m.attrs) + " : " + F(m.lhs) +
                      ", " + F(m.rhs)});

  // embedding: the table's gradient (repeated ids accumulate; unused rows get zero).
  struct Emb { const char *table, *ids; int64_t maxId; };
  for (const Emb &e : std::vector<Emb>{{"5x3", "4", 5}, {"4x2", "2x3", 4}, {"6x4", "3x2x2", 3}})
    cs.push_back({std::string("embedding_") + e.table + "_ids" + e.ids, "embedding",
                  {{F(e.table), U(-2, 2)}, {I32(e.ids), Ints(0, e.maxId)}},
                  "%y = step.embedding %a0, %a1 : " + F(e.table) + ", " + I32(e.ids)});
  cs.push_back({"embedding_5x3_ids2x4_i64", "embedding",
                {{F("5x3"), U(-2, 2)}, {"tensor<2x4xi64>", Ints(0, 5)}},
                "%y = step.embedding %a0, %a1 : " + F("5x3") + ", tensor<2x4xi64>"});

  // Ids that are positions (an iota, as GPT-2's wpe reads them): the table's gradient is a sum
  // over the other dims instead of a scatter; the whole table, a window of it (offset 1: rows
  // 0 and 5 get zero), and positions along the first axis.
  cs.push_back({"embedding_positions_4x3", "embedding", {{F("4x3"), U(-2, 2)}},
                "%p = step.iota {shape = [2, 4], axis = 1, dtype = i32}\n"
                "%y = step.embedding %a0, %p : " + F("4x3") + ", tensor<2x4xi32>"});
  cs.push_back({"embedding_positions_offset_6x3", "embedding", {{F("6x3"), U(-2, 2)}},
                "%p = step.iota {shape = [3, 4], axis = 1, dtype = i32, offset = 1}\n"
                "%y = step.embedding %a0, %p : " + F("6x3") + ", tensor<3x4xi32>"});
  cs.push_back({"embedding_positions_axis0_5x2", "embedding", {{F("5x2"), U(-2, 2)}},
                "%p = step.iota {shape = [3, 2, 2], axis = 0, dtype = i32}\n"
                "%y = step.embedding %a0, %p : " + F("5x2") + ", tensor<3x2x2xi32>"});

  // top_k: the values' gradient lands at the chosen positions (distinct inputs: no tie within
  // the finite-difference step; ties are a kink, their rule is tested in interpreter_routing_test).
  struct TopK { const char *shape; int64_t k; };
  for (const TopK &t : std::vector<TopK>{{"2x5", 2}, {"3x4", 1}, {"2x2x6", 3}, {"2x3", 3}}) {
    // The indices are integers (no loss term): the case squares the values instead.
    std::string shape = t.shape, kept = shape.substr(0, shape.rfind('x') + 1) + std::to_string(t.k);
    cs.push_back({std::string("top_k_") + t.shape + "_k" + std::to_string(t.k), "top_k",
                  {{F(t.shape), Distinct(0.3)}},
                  "%v, %i = step.top_k %a0 {k = " + std::to_string(t.k) + "} : " + F(t.shape) +
                      "\n%y = step.mul %v, %v : " + F(kept) + ", " + F(kept)});
  }

  // gather_rows through real routings (the router's inputs distinct, so the routing is fixed
  // within the step): token choice with dropped choices (capacity 2 for 12 choices) and a whole
  // top-2 layer (gates through top_k's values), expert choice with empty slots (k = 1: 6
  // tokens in 8 slots) and with k = 2.
  const std::string topTwo = "%v, %e = step.top_k %a1 {k = 2} : " + F("6x4") + "\n";
  cs.push_back({"gather_rows_dispatch_dropped", "gather_rows",
                {{F("6x3"), U(-1.5, 1.5)}, {F("6x4"), Distinct(0.3)}},
                topTwo +
                    "%c, %s = step.route_tokens %e {num_experts = 4, capacity_factor = 0.5} : "
                    "tensor<6x2xi32>\n"
                    "%y = step.gather_rows %a0, %c, %s {group = 2} : " +
                    F("6x3") + ", tensor<4x2xi32>, tensor<6x2xi32>"});
  cs.push_back({"gather_rows_top2_layer", "gather_rows",
                {{F("6x3"), U(-1.5, 1.5)}, {F("6x4"), Distinct(0.3)}, {F("4x3x3"), U(-1, 1)}},
                topTwo +
                    "%c, %s = step.route_tokens %e {num_experts = 4, capacity_factor = 0.75} : "
                    "tensor<6x2xi32>\n"
                    "%xe = step.gather_rows %a0, %c, %s {group = 2} : " + F("6x3") +
                    ", tensor<4x3xi32>, tensor<6x2xi32>\n"
                    "%he = step.batch_matmul %xe, %a2 : " + F("4x3x3") + ", " + F("4x3x3") + "\n"
                    "%hf = step.reshape %he {shape = [12, 3]} : " + F("4x3x3") + "\n"
                    "%yk = step.gather_rows %hf, %s, %c : " + F("12x3") +
                    ", tensor<6x2xi32>, tensor<4x3xi32>\n"
                    "%g = step.reshape %v {shape = [6, 2, 1]} : " + F("6x2") + "\n"
                    "%y = step.mul %yk, %g : " + F("6x2x3") + ", " + F("6x2x1")});
  for (int64_t k : {1, 2}) {
    // C = ceil(6 k / 4) slots per expert: 2 for k = 1 (8 slots, 6 tokens), 3 for k = 2.
    int64_t capacity = k == 1 ? 2 : 3;
    std::string c = std::to_string(capacity), kk = std::to_string(k);
    std::string rows = std::to_string(4 * capacity), slotsShape = "4x" + c + "x3";
    std::string choices = "tensor<4x" + c + "xi32>", slots = "tensor<6x" + kk + "xi32>";
    cs.push_back({"gather_rows_expert_choice_k" + kk, "gather_rows",
                  {{F("6x3"), U(-1.5, 1.5)}, {F("6x4"), Distinct(0.3)}},
                  "%p = step.softmax %a1 {axis = -1} : " + F("6x4") + "\n"
                  "%pf = step.cast %p {to = f32} : " + F("6x4") + "\n"
                  "%c, %s, %x = step.route_experts %pf {k = " + kk + "} : tensor<6x4xf32>\n"
                  "%xe = step.gather_rows %a0, %c, %s {group = " + kk + "} : " + F("6x3") + ", " +
                      choices + ", " + slots + "\n"
                  "%xs = step.mul %xe, %xe : " + F(slotsShape) + ", " + F(slotsShape) + "\n"
                  "%hf = step.reshape %xs {shape = [" + rows + ", 3]} : " + F(slotsShape) + "\n"
                  "%y = step.gather_rows %hf, %s, %c : " + F(rows + "x3") + ", " + slots + ", " +
                      choices});
  }

  // conv1d: input and weight gradients, causal and valid, groups 1 and 2.
  struct Conv { const char *x, *w, *padding; int64_t groups; };
  for (const Conv &c : std::vector<Conv>{{"2x6x3", "3x3x4", "causal", 1},
                                         {"2x7x3", "3x3x2", "valid", 1},
                                         {"1x5x4", "2x2x6", "causal", 2},
                                         {"2x6x4", "3x2x4", "valid", 2},
                                         {"2x4x3", "1x3x2", "causal", 1},
                                         {"1x2x2", "3x2x3", "causal", 1}})
    cs.push_back({std::string("conv1d_") + c.padding + "_g" + std::to_string(c.groups) + "_" +
                      c.x + "_" + c.w,
                  "conv1d", {{F(c.x), U(-1.5, 1.5)}, {F(c.w), U(-1.5, 1.5)}},
                  "%y = step.conv1d %a0, %a1 {padding = \"" + std::string(c.padding) +
                      "\", groups = " + std::to_string(c.groups) + "} : " + F(c.x) + ", " +
                      F(c.w)});

  // softmax, log_softmax.
  struct Ax { const char *shape, *attrs, *name; };
  for (const char *op : {"softmax", "log_softmax"})
    for (const Ax &a : std::vector<Ax>{{"3x5", " {axis = -1}", "axm1"},
                                       {"2x3x4", " {axis = 1}", "ax1"},
                                       {"4x3", " {axis = 0}", "ax0"},
                                       {"6", "", "default"}})
      cs.push_back({std::string(op) + "_" + a.shape + "_" + a.name, op, {{F(a.shape), U(-2, 2)}},
                    "%y = step." + std::string(op) + " %a0" + a.attrs + " : " + F(a.shape)});

  // layer_norm (x, gamma, beta) and rms_norm (x, gamma).
  for (const Ax &a : std::vector<Ax>{{"3x5", "", "3x5"},
                                     {"2x3x4", "", "2x3x4"},
                                     {"1x6", "", "1x6"},
                                     {"3x5", " {eps = 0.1}", "3x5_eps0_1"}}) {
    std::string c = std::string(a.shape).substr(std::string(a.shape).rfind('x') + 1);
    cs.push_back({std::string("layer_norm_") + a.name, "layer_norm",
                  {{F(a.shape), U(-2, 2)}, {F(c), U(-1.5, 1.5)}, {F(c), U(-1, 1)}},
                  "%y = step.layer_norm %a0, %a1, %a2" + std::string(a.attrs) + " : " +
                      F(a.shape) + ", " + F(c) + ", " + F(c)});
    cs.push_back({std::string("rms_norm_") + a.name, "rms_norm",
                  {{F(a.shape), U(-2, 2)}, {F(c), U(-1.5, 1.5)}},
                  "%y = step.rms_norm %a0, %a1" + std::string(a.attrs) + " : " + F(a.shape) +
                      ", " + F(c)});
  }

  // cross_entropy: mean, sum, none.
  struct Ce { const char *logits, *targets, *reduction; int64_t classes; };
  for (const Ce &c : std::vector<Ce>{{"4x5", "4", "mean", 5},
                                     {"2x3x5", "2x3", "mean", 5},
                                     {"4x5", "4", "sum", 5},
                                     {"2x3x4", "2x3", "sum", 4},
                                     {"4x5", "4", "none", 5},
                                     {"2x3x4", "2x3", "none", 4}})
    cs.push_back({std::string("cross_entropy_") + c.reduction + "_" + c.logits, "cross_entropy",
                  {{F(c.logits), U(-2, 2)}, {I32(c.targets), Ints(0, c.classes)}},
                  "%y = step.cross_entropy %a0, %a1 {reduction = \"" + std::string(c.reduction) +
                      "\"} : " + F(c.logits) + ", " + I32(c.targets)});
  cs.push_back({"cross_entropy_mean_3x4_i64", "cross_entropy",
                {{F("3x4"), U(-2, 2)}, {"tensor<3xi64>", Ints(0, 4)}},
                "%y = step.cross_entropy %a0, %a1 : " + F("3x4") + ", tensor<3xi64>"});

  // repeat: a scan with `over` operands, stacked outputs, reverse, two carried values, a value
  // captured from outside the body, and an integer `over` operand.
  cs.push_back({"repeat_over_stacked", "repeat",
                {{F("2x3"), U(-1, 1)}, {F("3x3x3"), U(-1, 1)}},
                R"(%y:2 = step.repeat "layer" 3 (%c = %a0 : tensor<2x3xf64>) over (%w = %a1 : tensor<3x3x3xf64>) {
    %m = step.matmul %c, %w : tensor<2x3xf64>, tensor<3x3xf64>
    %t = step.tanh %m : tensor<2x3xf64>
    %s = step.sin %c : tensor<2x3xf64>
    step.yield %t, %s : tensor<2x3xf64>, tensor<2x3xf64>
  })"});
  cs.push_back({"repeat_over_stacked_reverse", "repeat",
                {{F("1x4"), U(-1, 1)}, {F("2x4x4"), U(-1, 1)}},
                R"(%y:2 = step.repeat "layer" 2 (%c = %a0 : tensor<1x4xf64>) over (%w = %a1 : tensor<2x4x4xf64>) reverse {
    %m = step.matmul %c, %w : tensor<1x4xf64>, tensor<4x4xf64>
    %t = step.tanh %m : tensor<1x4xf64>
    %q = step.mul %c, %t : tensor<1x4xf64>, tensor<1x4xf64>
    step.yield %t, %q : tensor<1x4xf64>, tensor<1x4xf64>
  })"});
  cs.push_back({"repeat_two_carried_capture", "repeat",
                {{F("2x2"), U(-1, 1)}, {F(""), U(-1, 1)}, {F("4x2x2"), U(-1, 1)},
                 {F("4x2"), U(-1, 1)}, {F("2"), U(-1, 1)}},
                R"(%y:3 = step.repeat "cell" 4 (%c = %a0 : tensor<2x2xf64>, %acc = %a1 : tensor<f64>) over (%w = %a2 : tensor<4x2x2xf64>, %v = %a3 : tensor<4x2xf64>) {
    %m = step.matmul %c, %w : tensor<2x2xf64>, tensor<2x2xf64>
    %b = step.add %m, %a4 : tensor<2x2xf64>, tensor<2xf64>
    %t = step.tanh %b : tensor<2x2xf64>
    %q = step.mul %t, %v : tensor<2x2xf64>, tensor<2xf64>
    %s = step.sum %q {axes = [0, 1]} : tensor<2x2xf64>
    %acc2 = step.add %acc, %s : tensor<f64>, tensor<f64>
    %st = step.mul %c, %v : tensor<2x2xf64>, tensor<2xf64>
    step.yield %t, %acc2, %st : tensor<2x2xf64>, tensor<f64>, tensor<2x2xf64>
  })"});
  cs.push_back({"repeat_residual_reverse_no_stacked", "repeat",
                {{F("2x4"), U(-1, 1)}, {F("3x4x4"), U(-0.7, 0.7)}},
                R"(%y = step.repeat "res" 3 (%c = %a0 : tensor<2x4xf64>) over (%w = %a1 : tensor<3x4x4xf64>) reverse {
    %m = step.matmul %c, %w : tensor<2x4xf64>, tensor<4x4xf64>
    %g = step.gelu %m : tensor<2x4xf64>
    %n = step.add %c, %g : tensor<2x4xf64>, tensor<2x4xf64>
    step.yield %n : tensor<2x4xf64>
  })"});
  cs.push_back({"repeat_int_over_capture_table", "repeat",
                {{F("4x2"), U(-1, 1)}, {F("5x2"), U(-1, 1)}, {I32("3x4"), Ints(0, 5)}},
                R"(%y:2 = step.repeat "emb" 3 (%c = %a0 : tensor<4x2xf64>) over (%ids = %a2 : tensor<3x4xi32>) {
    %e = step.embedding %a1, %ids : tensor<5x2xf64>, tensor<4xi32>
    %n = step.mul %c, %e : tensor<4x2xf64>, tensor<4x2xf64>
    %t = step.tanh %n : tensor<4x2xf64>
    step.yield %t, %e : tensor<4x2xf64>, tensor<4x2xf64>
  })"});
  // A repeat nested in a repeat's body, reading the outer iteration's `over` slice.
  cs.push_back({"repeat_nested", "repeat",
                {{F("2x3"), U(-1, 1)}, {F("2x3x3"), U(-0.8, 0.8)}, {F("3"), U(-1, 1)}},
                R"(%y = step.repeat "outer" 2 (%c = %a0 : tensor<2x3xf64>) over (%w = %a1 : tensor<2x3x3xf64>) {
    %in = step.repeat "inner" 2 (%d = %c : tensor<2x3xf64>) {
      %m = step.matmul %d, %w : tensor<2x3xf64>, tensor<3x3xf64>
      %b = step.add %m, %a2 : tensor<2x3xf64>, tensor<3xf64>
      %t = step.tanh %b : tensor<2x3xf64>
      step.yield %t : tensor<2x3xf64>
    }
    %n = step.mul %in, %c : tensor<2x3xf64>, tensor<2x3xf64>
    step.yield %n : tensor<2x3xf64>
  })"});
  // The stacked weights are also used outside the repeat (fan-out into the repeat's adjoint),
  // and the carried init is a constant (no gradient flows into it).
  cs.push_back({"repeat_const_init_over_fanout", "repeat",
                {{F("3x2x2"), U(-1, 1)}},
                R"(%z = step.constant {value = dense<0.5> : tensor<2x2xf64>}
  %h = step.repeat "layer" 3 (%c = %z : tensor<2x2xf64>) over (%w = %a0 : tensor<3x2x2xf64>) {
    %m = step.matmul %c, %w : tensor<2x2xf64>, tensor<2x2xf64>
    %t = step.sin %m : tensor<2x2xf64>
    %n = step.add %t, %c : tensor<2x2xf64>, tensor<2x2xf64>
    step.yield %n : tensor<2x2xf64>
  }
  %q = step.sum %a0 {axes = [0]} : tensor<3x2x2xf64>
  %y = step.mul %h, %q : tensor<2x2xf64>, tensor<2x2xf64>)"});
  // The same nesting without fan-out: the inner repeat's init is used only by it.
  cs.push_back({"repeat_nested_no_fanout", "repeat",
                {{F("2x3"), U(-1, 1)}, {F("2x3x3"), U(-0.8, 0.8)}, {F("3"), U(-1, 1)}},
                R"(%y = step.repeat "outer" 2 (%c = %a0 : tensor<2x3xf64>) over (%w = %a1 : tensor<2x3x3xf64>) {
    %e = step.sin %c : tensor<2x3xf64>
    %in = step.repeat "inner" 2 (%d = %e : tensor<2x3xf64>) {
      %m = step.matmul %d, %w : tensor<2x3xf64>, tensor<3x3xf64>
      %b = step.add %m, %a2 : tensor<2x3xf64>, tensor<3xf64>
      %t = step.tanh %b : tensor<2x3xf64>
      step.yield %t : tensor<2x3xf64>
    }
    step.yield %in : tensor<2x3xf64>
  })"});
  // The smallest fan-out around a repeat: its init is also used after it (a residual).
  cs.push_back({"repeat_init_used_after", "repeat", {{F("2"), U(-1, 1)}},
                R"(%h = step.repeat "layer" 2 (%c = %a0 : tensor<2xf64>) {
    %m = step.mul %c, %c : tensor<2xf64>, tensor<2xf64>
    step.yield %m : tensor<2xf64>
  }
  %y = step.add %h, %a0 : tensor<2xf64>, tensor<2xf64>)"});
  // Only the stacked result in the loss, then only the carried one.
  for (int unused : {0, 1})
    cs.push_back({"repeat_unused_result" + std::to_string(unused), "repeat",
                  {{F("2x2"), U(-1, 1)}, {F("1x2x2"), U(-1, 1)}},
                  R"(%y:2 = step.repeat "one" 1 (%c = %a0 : tensor<2x2xf64>) over (%w = %a1 : tensor<1x2x2xf64>) {
    %m = step.matmul %c, %w : tensor<2x2xf64>, tensor<2x2xf64>
    %t = step.cos %m : tensor<2x2xf64>
    %e = step.exp %c : tensor<2x2xf64>
    step.yield %t, %e : tensor<2x2xf64>, tensor<2x2xf64>
  })",
                  kSmooth, kStep, {unused}});

  // custom_grad: autodiff inlines the given backward; with the exact derivative written there,
  // the result must match finite differences of the forward region.
  cs.push_back({"custom_grad_tanh_2x3", "custom_grad", {{F("2x3"), U(-2, 2)}},
                R"(%y = step.custom_grad (%a = %a0 : tensor<2x3xf64>) {
    %t = step.tanh %a : tensor<2x3xf64>
    step.yield %t : tensor<2x3xf64>
  } backward (%a2, %dy) {
    %t = step.tanh %a2 : tensor<2x3xf64>
    %one = step.constant {value = dense<1.0> : tensor<f64>}
    %tt = step.mul %t, %t : tensor<2x3xf64>, tensor<2x3xf64>
    %d = step.sub %one, %tt : tensor<f64>, tensor<2x3xf64>
    %g = step.mul %dy, %d : tensor<2x3xf64>, tensor<2x3xf64>
    step.yield %g : tensor<2x3xf64>
  })"});
  for (int unused : {-1, 1})
    cs.push_back({"custom_grad_two_in_two_out" + std::string(unused < 0 ? "" : "_unused1"),
                  "custom_grad", {{F("3"), U(-2, 2)}, {F("3"), U(-2, 2)}},
                  R"(%y:2 = step.custom_grad (%a = %a0 : tensor<3xf64>, %b = %a1 : tensor<3xf64>) {
    %p = step.mul %a, %b : tensor<3xf64>, tensor<3xf64>
    %s = step.sin %a : tensor<3xf64>
    step.yield %p, %s : tensor<3xf64>, tensor<3xf64>
  } backward (%a2, %b2, %dp, %ds) {
    %c = step.cos %a2 : tensor<3xf64>
    %u = step.mul %dp, %b2 : tensor<3xf64>, tensor<3xf64>
    %v = step.mul %ds, %c : tensor<3xf64>, tensor<3xf64>
    %da = step.add %u, %v : tensor<3xf64>, tensor<3xf64>
    %db = step.mul %dp, %a2 : tensor<3xf64>, tensor<3xf64>
    step.yield %da, %db : tensor<3xf64>, tensor<3xf64>
  })",
                  kSmooth, kStep, unused < 0 ? std::set<int>{} : std::set<int>{unused}});
  // Inside a repeat body (differentiated by the recomputing backward), input also used after.
  cs.push_back({"custom_grad_in_repeat_fanout", "custom_grad",
                {{F("2x2"), U(-1, 1)}, {F("3x2x2"), U(-1, 1)}},
                R"(%h = step.repeat "layer" 3 (%c = %a0 : tensor<2x2xf64>) over (%w = %a1 : tensor<3x2x2xf64>) {
    %m = step.matmul %c, %w : tensor<2x2xf64>, tensor<2x2xf64>
    %e = step.custom_grad (%a = %m : tensor<2x2xf64>) {
      %x = step.exp %a : tensor<2x2xf64>
      step.yield %x : tensor<2x2xf64>
    } backward (%a2, %dy) {
      %x = step.exp %a2 : tensor<2x2xf64>
      %g = step.mul %dy, %x : tensor<2x2xf64>, tensor<2x2xf64>
      step.yield %g : tensor<2x2xf64>
    }
    %n = step.add %e, %m : tensor<2x2xf64>, tensor<2x2xf64>
    %t = step.tanh %n : tensor<2x2xf64>
    step.yield %t : tensor<2x2xf64>
  }
  %y = step.mul %h, %h : tensor<2x2xf64>, tensor<2x2xf64>)"});
  return cs;
}

const std::vector<Case> &cases() {
  static const std::vector<Case> all = allCases();
  return all;
}

// ---- The loss function of a case -------------------------------------------------------------

struct LossSource {
  std::string text;                // func.func @f(...) -> tensor<f64> {step.differentiate}
  std::vector<std::string> names;  // every argument's name (%a0.., %r0..)
  std::vector<Gen> gens;           // and its generator
};

std::string signatureOf(const Case &c) {
  std::string s;
  for (size_t i = 0; i < c.args.size(); ++i)
    s += (i ? ", " : "") + ("%a" + std::to_string(i)) + ": " + c.args[i].type;
  return s;
}

/// The result types of the last op of the case's body, from parsing it in a probe function.
mlir::FailureOr<std::vector<mlir::RankedTensorType>> outputTypes(const Case &c,
                                                                 mlir::MLIRContext *ctx) {
  std::string probe = "func.func @probe(" + signatureOf(c) + ") {\n  " + c.body + "\n  return\n}\n";
  mlir::OwningOpRef<mlir::ModuleOp> module = parseModule(probe, ctx);
  if (!module) return mlir::failure();
  auto fn = module->lookupSymbol<mlir::func::FuncOp>("probe");
  mlir::Block &block = fn.getBody().front();
  if (&block.front() == block.getTerminator()) return mlir::failure();
  mlir::Operation *last = block.getTerminator()->getPrevNode();
  std::vector<mlir::RankedTensorType> types;
  for (mlir::Type t : last->getResultTypes())
    types.push_back(llvm::cast<mlir::RankedTensorType>(t));
  return types;
}

LossSource lossSource(const Case &c, llvm::ArrayRef<mlir::RankedTensorType> outs) {
  LossSource src;
  std::string params = signatureOf(c), body;
  for (size_t i = 0; i < c.args.size(); ++i) {
    src.names.push_back("%a" + std::to_string(i));
    src.gens.push_back(c.args[i].gen);
  }
  std::string total;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (c.unused.count(static_cast<int>(k))) continue;
    std::string t = typeString(outs[k]), ks = std::to_string(k);
    std::string y = outs.size() > 1 ? "%y#" + ks : "%y";
    params += ", %r" + ks + ": " + t;
    src.names.push_back("%r" + ks);
    src.gens.push_back(U(-1, 1));
    std::string term = "%t" + ks;
    if (outs[k].getRank() == 0) {
      body += "  " + term + " = step.mul " + y + ", %r" + ks + " : " + t + ", " + t + "\n";
    } else {
      std::vector<int64_t> axes;
      for (int64_t d = 0; d < outs[k].getRank(); ++d) axes.push_back(d);
      body += "  %p" + ks + " = step.mul " + y + ", %r" + ks + " : " + t + ", " + t + "\n";
      body += "  " + term + " = step.sum %p" + ks + " {axes = " + list(axes) + "} : " + t + "\n";
    }
    if (total.empty()) {
      total = term;
    } else {
      body += "  %l" + ks + " = step.add " + total + ", " + term +
              " : tensor<f64>, tensor<f64>\n";
      total = "%l" + ks;
    }
  }
  src.text = "func.func @f(" + params + ") -> tensor<f64> attributes {step.differentiate} {\n  " +
             c.body + "\n" + body + "  return " + total + " : tensor<f64>\n}\n";
  return src;
}

// ---- The test ----------------------------------------------------------------------------------

/// Differentiates and runs case `c`, adding every gradient element and its finite difference
/// to `cmp`; `details` gets the function before and after differentiation. Fails the test
/// (fatally) when the case does not parse, differentiate or run.
void runCase(const Case &c, GradientComparison &cmp, std::string &details) {
  auto ctx = makeContext();
  DiagnosticLog log(ctx.get());

  mlir::FailureOr<std::vector<mlir::RankedTensorType>> outs = outputTypes(c, ctx.get());
  ASSERT_TRUE(succeeded(outs)) << "the case body does not parse:\n" << log.text() << c.body;
  for (mlir::RankedTensorType t : *outs)
    ASSERT_TRUE(t.getElementType().isF64()) << "outputs must be f64, found " << typeString(t);
  LossSource src = lossSource(c, *outs);

  mlir::OwningOpRef<mlir::ModuleOp> original = parseModule(src.text, ctx.get());
  ASSERT_TRUE(original) << "parse failed:\n" << log.text() << src.text;
  mlir::OwningOpRef<mlir::ModuleOp> differentiated = parseModule(src.text, ctx.get());
  ASSERT_TRUE(differentiated);
  ASSERT_TRUE(succeeded(differentiate(*differentiated)))
      << "--step-differentiate failed:\n" << log.text() << "on:\n" << src.text;
  auto f0 = original->lookupSymbol<mlir::func::FuncOp>("f");
  auto f1 = differentiated->lookupSymbol<mlir::func::FuncOp>("f");
  ASSERT_TRUE(f0 && f1);
  std::string differentiatedText = printOp(f1);

  // Arguments from a seed derived from the case's name.
  Rng rng(hashName(c.name));
  std::vector<Tensor> args;
  size_t numFloat = 0;
  for (auto [i, type] : llvm::enumerate(f0.getArgumentTypes())) {
    auto t = llvm::cast<mlir::RankedTensorType>(type);
    args.push_back(Tensor{t, generate(src.gens[i], t.getNumElements(), rng)});
    if (isFloatTensor(t)) ++numFloat;
  }

  mlir::FailureOr<std::vector<Tensor>> results = runF64(f1, args);
  ASSERT_TRUE(succeeded(results)) << "the differentiated function does not run:\n"
                                  << log.text() << differentiatedText;
  ASSERT_EQ(results->size(), 1 + numFloat) << differentiatedText;
  mlir::FailureOr<std::vector<Tensor>> plain = runF64(f0, args);
  ASSERT_TRUE(succeeded(plain)) << log.text() << src.text;
  double loss = (*plain)[0].data[0];
  EXPECT_NEAR((*results)[0].data[0], loss, 1e-12 * std::max(1.0, std::fabs(loss)))
      << "differentiating changed the loss";

  auto lossAt = [&](const std::vector<Tensor> &a) {
    mlir::FailureOr<std::vector<Tensor>> r = runF64(f0, a);
    return succeeded(r) ? (*r)[0].data[0] : std::nan("");
  };
  details = "function:\n" + src.text + "differentiated:\n" + differentiatedText;
  size_t k = 1;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!isFloatTensor(args[i].type)) continue;
    const Tensor &grad = (*results)[k++];
    ASSERT_EQ(typeString(grad.type), typeString(args[i].type)) << "gradient of " << src.names[i];
    for (int64_t e = 0; e < args[i].numElements(); ++e)
      cmp.add(src.names[i], e, grad.data[e],
              centralDifference(args, i, e, c.fdStep, lossAt));
  }
}

class VjpFd : public ::testing::TestWithParam<Case> {};

TEST_P(VjpFd, GradientMatchesCentralDifferences) {
  const Case &c = GetParam();
  GradientComparison cmp(c.tol);
  std::string details;
  runCase(c, cmp, details);
  if (HasFatalFailure()) return;
  EXPECT_GT(cmp.checked(), 0);
  EXPECT_EQ(cmp.failures(), 0) << c.name << ": gradient differs from finite differences; "
                               << cmp.report() << details;
  if (std::getenv("STEPC_FD_VERBOSE"))
    std::cout << "[fd] " << c.name << " elements " << cmp.checked() << " max_abs " << cmp.maxAbs()
              << " max_rel " << cmp.maxRel() << " failures " << cmp.failures() << "\n";
}

INSTANTIATE_TEST_SUITE_P(Ops, VjpFd, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           std::string name = info.param.name;
                           for (char &ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

// The harness itself: a custom_grad whose backward is twice tanh's derivative must fail on
// every element of %a0 (6) and pass on the weights' gradient (tanh(x), 6 elements).
TEST(VjpFdHarness, DetectsAWrongGradient) {
  Case c{"wrong_backward", "custom_grad", {{F("2x3"), U(-2, 2)}},
         R"(%y = step.custom_grad (%a = %a0 : tensor<2x3xf64>) {
    %t = step.tanh %a : tensor<2x3xf64>
    step.yield %t : tensor<2x3xf64>
  } backward (%a2, %dy) {
    %t = step.tanh %a2 : tensor<2x3xf64>
    %one = step.constant {value = dense<1.0> : tensor<f64>}
    %two = step.constant {value = dense<2.0> : tensor<f64>}
    %tt = step.mul %t, %t : tensor<2x3xf64>, tensor<2x3xf64>
    %d = step.sub %one, %tt : tensor<f64>, tensor<2x3xf64>
    %g = step.mul %dy, %d : tensor<2x3xf64>, tensor<2x3xf64>
    %g2 = step.mul %g, %two : tensor<2x3xf64>, tensor<f64>
    step.yield %g2 : tensor<2x3xf64>
  })"};
  GradientComparison cmp(kSmooth);
  std::string details;
  runCase(c, cmp, details);
  if (HasFatalFailure()) return;
  EXPECT_EQ(cmp.checked(), 12);
  EXPECT_EQ(cmp.failures(), 6) << cmp.report() << details;
}

// Every op with a gradient rule (and repeat and custom_grad, differentiated by the engine) has
// at least three cases, so an op added later without a test fails here.
TEST(VjpFdCoverage, EveryDifferentiableOpHasThreeCases) {
  auto ctx = makeContext();
  std::map<std::string, int> counts;
  for (const Case &c : cases()) ++counts[c.op];
  std::set<std::string> names;
  for (const Case &c : cases()) EXPECT_TRUE(names.insert(c.name).second) << "duplicate " << c.name;
  int differentiable = 0;
  for (mlir::RegisteredOperationName op : ctx->getRegisteredOperations()) {
    if (op.getDialectNamespace() != "step") continue;
    if (!op.hasInterface<step::DifferentiableOpInterface>()) continue;
    ++differentiable;
    std::string mnemonic = op.getStringRef().drop_front(5).str();
    EXPECT_GE(counts[mnemonic], 3) << "step." << mnemonic << " has a VJP but "
                                   << counts[mnemonic] << " finite-difference cases";
  }
  EXPECT_GE(counts["repeat"], 3);
  EXPECT_GE(counts["custom_grad"], 3);
  EXPECT_GT(differentiable, 40);
  std::cout << "[fd] " << cases().size() << " cases over " << differentiable
            << " differentiable ops, repeat and custom_grad\n";
}

}  // namespace
}  // namespace stepc::gradtest
