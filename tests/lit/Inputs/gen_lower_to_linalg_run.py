#!/usr/bin/env python3
# Regenerates tests/lit/compiler/Conversion/StepToLinalg/lower_to_linalg_run_*.mlir, the numeric
# tests of --step-lower-to-linalg: writes each test's @main, lowers it with bazel-bin's stepc-opt,
# runs it through the registered pipeline lit.cfg.py's %linalg-to-llvm runs (stepc-runner-llvm)
# and mlir-cpu-runner, checks every printed value against a float64 Python reference (relative 2e-5), and only then writes the printed
# output as the test's CHECK lines. Run from anywhere after building stepc-opt:
#   python3 tests/lit/Inputs/gen_lower_to_linalg_run.py
import math, itertools, subprocess, sys, re, os, tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
B = "/usr/lib/llvm-19/bin"
LIB = "/usr/lib/llvm-19/lib"
# The registered pipeline lit.cfg.py's %linalg-to-llvm runs (compiler/Codegen/Pipelines.cpp).
PIPE = "stepc-runner-llvm"

def prod(s):
    p = 1
    for x in s: p *= x
    return p

def ttype(shape, dt="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dt + ">"

def idx(shape):
    return list(itertools.product(*[range(d) for d in shape]))

def flat_index(shape, i):
    f = 0
    for d, k in zip(shape, i): f = f * d + k
    return f

class T:
    def __init__(self, shape, data, dt="f32"):
        self.shape, self.data, self.dt = list(shape), list(data), dt
        assert len(self.data) == prod(shape)
    def at(self, i): return self.data[flat_index(self.shape, i)]

def bshape(*shapes):
    r = max(len(s) for s in shapes)
    out = []
    for k in range(r):
        ds = [s[len(s) - r + k] if len(s) - r + k >= 0 else 1 for s in shapes]
        m = max(ds); out.append(m)
    return out

def bmap(fn, *ts):
    shape = bshape(*[t.shape for t in ts])
    data = []
    for i in idx(shape):
        args = []
        for t in ts:
            off = len(shape) - len(t.shape)
            j = [0 if t.shape[k] == 1 else i[off + k] for k in range(len(t.shape))]
            args.append(t.at(j))
        data.append(fn(*args))
    return T(shape, data)

def dense(t):
    def fmt(v):
        if t.dt.startswith("i"): return str(int(v))
        return repr(float(v))
    def rec(shape, data):
        if not shape: return fmt(data[0])
        n = prod(shape[1:])
        return "[" + ", ".join(rec(shape[1:], data[k*n:(k+1)*n]) for k in range(shape[0])) + "]"
    return f"dense<{rec(t.shape, t.data)}> : {ttype(t.shape, t.dt)}"

class File:
    def __init__(self, name, header, prelude="", passes=("--step-lower-to-linalg",)):
        self.name, self.header, self.prelude, self.passes = name, header, prelude, list(passes)
        self.consts, self.body, self.cases = [], [], []
        self.n = 0
    def const(self, name, t):
        self.consts.append(f"  %{name} = arith.constant {dense(t)}")
        return (name, t)
    def case(self, comment, lines, result_type_shape, ref):
        # lines: step op text producing %r; result must be f32 (cast added by caller otherwise)
        self.n += 1
        r = f"r{self.n}"
        text = [l.replace("%R", "%" + r) for l in lines]
        self.body.append(f"  // {comment}")
        self.body += ["  " + l for l in text]
        self.body.append(f"  %u{self.n} = tensor.cast %{r} : {ttype(result_type_shape)} to tensor<*xf32>")
        self.body.append(f"  call @printMemrefF32(%u{self.n}) : (tensor<*xf32>) -> ()")
        self.cases.append((comment, ref))
    def module(self):
        return "\n".join(["func.func private @printMemrefF32(tensor<*xf32>)", "", self.prelude,
                          "func.func @main() {"] + self.consts + self.body + ["  return", "}"])
    def write(self):
        src = self.module()
        tmp = os.path.join(tempfile.mkdtemp(), self.name)
        open(tmp, "w").write(src + "\n")
        low = subprocess.run([f"{REPO}/bazel-bin/compiler/Driver/stepc-opt"] + self.passes + [tmp],
                             capture_output=True, text=True)
        if low.returncode: sys.exit(low.stderr)
        # A step op left over (an op, not the `step.scan` marker attribute on a loop).
        left = [l for l in low.stdout.splitlines() if re.search(r"(^|=)\s*\"?step\.\w+", l)]
        if left: sys.exit("not lowered:\n" + "\n".join(left))
        llvm = subprocess.run([f"{REPO}/bazel-bin/compiler/Driver/stepc-opt", f"--pass-pipeline=builtin.module({PIPE})"], input=low.stdout,
                              capture_output=True, text=True)
        if llvm.returncode: sys.exit(llvm.stderr)
        run = subprocess.run([f"{B}/mlir-cpu-runner", "-e", "main", "-entry-point-result=void",
                              f"-shared-libs={LIB}/libmlir_runner_utils.so,{LIB}/libmlir_c_runner_utils.so"],
                             input=llvm.stdout, capture_output=True, text=True)
        if run.returncode: sys.exit(run.stderr)
        # split prints
        blocks = re.split(r"^Unranked Memref base@ = 0x[0-9a-f]+ ", run.stdout, flags=re.M)[1:]
        assert len(blocks) == len(self.cases), (len(blocks), len(self.cases))
        checks = []
        bad = 0
        for (comment, ref), blk in zip(self.cases, blocks):
            lines = blk.rstrip("\n").split("\n")
            header = lines[0].strip()
            vals = [float(v) for v in re.findall(r"-?nan|-?inf|-?[0-9.]+(?:e[-+]?[0-9]+)?", "\n".join(lines[1:]))]
            assert len(vals) == len(ref.data), (comment, vals, ref.data)
            for v, w in zip(vals, ref.data):
                if math.isnan(w) and math.isnan(v): continue
                if not (abs(v - w) <= 2e-5 * max(1.0, abs(w))):
                    print(f"MISMATCH {self.name} {comment}: got {v} want {w}"); bad += 1
            # Offsets and strides depend on how a lowering lays out its result (a view into
            # a padded buffer is fine); the sizes and the values are what is checked.
            shape_txt = re.sub(r"offset = \d+", "offset = {{[0-9]+}}", header)
            shape_txt = re.sub(r"strides = \[[0-9, ]*\]", "strides = {{\\[[0-9, ]*\\]}}", shape_txt)
            checks.append(f"// CHECK-LABEL: {shape_txt}".replace("CHECK-LABEL", "CHECK"))
            for l in lines[1:]:
                checks.append("// CHECK-NEXT: " + l.strip().replace("[[", "{{\\[\\[}}"))
            checks[-len(lines)] = f"// {comment}\n" + checks[-len(lines)]
        if bad: sys.exit("mismatches")
        out = self.header + "\n" + src + "\n\n" + "\n".join(checks) + "\n"
        open(f"{REPO}/tests/lit/compiler/Conversion/StepToLinalg/{self.name}", "w").write(out)
        print(f"wrote {self.name}: {len(self.cases)} cases")

RUN = """// Generated by tests/lit/Inputs/gen_lower_to_linalg_run.py: edit that, then rerun it.
//
// RUN: %stepc-opt %s --step-lower-to-linalg | %linalg-to-llvm | %run-cpu | FileCheck %s
// RUN: %stepc-opt %s --step-lower-to-linalg | FileCheck %s --check-prefix=LOWERED
// LOWERED-NOT: {{step\.[a-z_]+ }}
"""

# ---------------- elementwise
import math
HEADER = """// Numeric tests of --step-lower-to-linalg for elementwise ops: every unary op (gelu in both
// forms), broadcasting binary ops, compare, select, cast (float/int/i1/f16/bf16) and constant
// are lowered, then taken to LLVM by stepc-opt's stepc-runner-llvm and run by mlir-cpu-runner; the printed
// values were checked against a float64 reference (6 significant digits as printed).
""" + RUN
f = File("lower_to_linalg_run_elementwise.mlir", HEADER)
X = T([2, 3], [-2.0, -0.5, 0.0, 0.5, 1.0, 2.0])
P = T([2, 3], [0.25, 0.5, 1.0, 2.0, 4.0, 9.0])
Bv = T([3], [10.0, 20.0, 30.0])
C = T([2, 1], [1.0, 2.0])
S = T([], [3.0])
f.const("x", X); f.const("p", P); f.const("b", Bv); f.const("c", C); f.const("s", S)
t23 = "tensor<2x3xf32>"
def sig(v): return 1 / (1 + math.exp(-v))
unary = [
  ("neg", "", X, lambda v: -v), ("abs", "", X, abs), ("exp", "", X, math.exp),
  ("log", "", P, math.log), ("sqrt", "", P, math.sqrt), ("rsqrt", "", P, lambda v: 1 / math.sqrt(v)),
  ("tanh", "", X, math.tanh), ("sigmoid", "", X, sig), ("relu", "", X, lambda v: max(v, 0.0)),
  ("silu", "", X, lambda v: v * sig(v)), ("erf", "", X, math.erf), ("sin", "", X, math.sin),
  ("cos", "", X, math.cos),
  ("gelu", "", X, lambda v: 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))),
  ("gelu", ' {approximate = "erf"}', X, lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2)))),
  ("leaky_relu", " {alpha = 0.2}", X, lambda v: v if v > 0 else 0.2 * v),
  ("pow", " {exponent = 3.0}", X, lambda v: v**3), ("pow", " {exponent = 2.0}", X, lambda v: v**2),
  ("pow", " {exponent = 1.5}", P, lambda v: v**1.5),
]
for name, attrs, inp, fn in unary:
    src = "x" if inp is X else "p"
    f.case(f"step.{name}{attrs}", [f"%R = step.{name} %{src}{attrs} : {t23}"], [2, 3], bmap(fn, inp))
binary = [("add", "x", "b", X, Bv, lambda a, b: a + b), ("sub", "c", "b", C, Bv, lambda a, b: a - b),
          ("mul", "x", "s", X, S, lambda a, b: a * b), ("div", "x", "c", X, C, lambda a, b: a / b),
          ("max", "x", "c", X, C, max), ("min", "c", "x", C, X, min)]
for name, a, b, ta, tb, fn in binary:
    f.case(f"step.{name} {ttype(ta.shape)} with {ttype(tb.shape)}",
           [f"%R = step.{name} %{a}, %{b} : {ttype(ta.shape)}, {ttype(tb.shape)}"], [2, 3], bmap(fn, ta, tb))
preds = {"lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
         "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b}
for p, fn in preds.items():
    f.case(f"step.compare {p} (as f32)",
           [f'%R_m = step.compare %x, %c {{predicate = "{p}"}} : {t23}, tensor<2x1xf32>',
            f"%R = step.cast %R_m {{to = f32}} : tensor<2x3xi1>"], [2, 3],
           bmap(lambda a, b: 1.0 if fn(a, b) else 0.0, X, C))
f.case("step.select of a broadcast mask",
       ['%R_m = step.compare %x, %c {predicate = "ge"} : tensor<2x3xf32>, tensor<2x1xf32>',
        "%R = step.select %R_m, %x, %b : tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>"], [2, 3],
       bmap(lambda a, c, b: a if a >= c else b, X, C, Bv))
Y = T([2, 3], [-2.7, -0.5, 0.0, 0.5, 1.9, 2.2])
f.const("y", Y)
f.case("step.cast f32 -> i32 truncates toward zero, -> f32",
       ["%R_i = step.cast %y {to = i32} : tensor<2x3xf32>", "%R = step.cast %R_i {to = f32} : tensor<2x3xi32>"],
       [2, 3], bmap(lambda v: float(math.trunc(v)), Y))
f.case("step.cast f32 -> i1 (nonzero) -> f32",
       ["%R_i = step.cast %y {to = i1} : tensor<2x3xf32>", "%R = step.cast %R_i {to = f32} : tensor<2x3xi1>"],
       [2, 3], bmap(lambda v: 1.0 if v != 0 else 0.0, Y))
f.case("step.cast f32 -> f64 -> i64 -> f32",
       ["%R_d = step.cast %y {to = f64} : tensor<2x3xf32>", "%R_i = step.cast %R_d {to = i64} : tensor<2x3xf64>",
        "%R = step.cast %R_i {to = f32} : tensor<2x3xi64>"],
       [2, 3], bmap(lambda v: float(math.trunc(v)), Y))
import struct
def f16(v): return struct.unpack("e", struct.pack("e", v))[0]
Th = T([3], [1.0 / 3.0, 1000.1, -2.0e-3])
f.const("h", Th)
f.case("step.cast f32 -> f16 rounds, -> f32",
       ["%R_h = step.cast %h {to = f16} : tensor<3xf32>", "%R = step.cast %R_h {to = f32} : tensor<3xf16>"],
       [3], bmap(f16, Th))
def bf16(v):
    b = struct.unpack("I", struct.pack("f", v))[0]
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("f", struct.pack("I", b))[0]
Tb = T([3], [0.3, 1.7, -2.0])
f.const("g", Tb)
f.case("step.exp in bf16 (computed in f32, rounded)",
       ["%R_h = step.cast %g {to = bf16} : tensor<3xf32>", "%R_e = step.exp %R_h : tensor<3xbf16>",
        "%R = step.cast %R_e {to = f32} : tensor<3xbf16>"],
       [3], bmap(lambda v: bf16(math.exp(bf16(v))), Tb))
I = T([2, 3], [-7, -2, 0, 1, 5, 9], "i32")
J = T([3], [2, -2, 4], "i32")
f.const("i", I); f.const("j", J)
for name, fn in [("div", lambda a, b: float(int(a / b))), ("max", max), ("min", min), ("sub", lambda a, b: a - b),
                 ("mul", lambda a, b: a * b)]:
    f.case(f"step.{name} on i32 (as f32)",
           [f"%R_i = step.{name} %i, %j : tensor<2x3xi32>, tensor<3xi32>",
            "%R = step.cast %R_i {to = f32} : tensor<2x3xi32>"], [2, 3], bmap(lambda a, b: float(fn(a, b)), I, J))
f.case("step.neg, step.abs on i32 (as f32)",
       ["%R_n = step.neg %i : tensor<2x3xi32>", "%R_a = step.abs %R_n : tensor<2x3xi32>",
        "%R_s = step.sub %R_n, %R_a : tensor<2x3xi32>, tensor<2x3xi32>",
        "%R = step.cast %R_s {to = f32} : tensor<2x3xi32>"], [2, 3], bmap(lambda v: float(-v - abs(v)), I))
f.case("step.compare gt on i32, select",
       ['%R_m = step.compare %i, %j {predicate = "gt"} : tensor<2x3xi32>, tensor<3xi32>',
        "%R = step.select %R_m, %x, %p : tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>"], [2, 3],
       bmap(lambda a, b, x, p: x if a > b else p, I, J, X, P))
f.case("step.constant",
       ["%R = step.constant {value = dense<[[1.5, -2.0], [0.25, 8.0]]> : tensor<2x2xf32>}"], [2, 2],
       T([2, 2], [1.5, -2.0, 0.25, 8.0]))
f.case("step.constant splat plus a scalar",
       ["%R_c = step.constant {value = dense<0.5> : tensor<f32>}",
        "%R = step.add %x, %R_c : tensor<2x3xf32>, tensor<f32>"], [2, 3], bmap(lambda v: v + 0.5, X))
f.write()

import math

def reduce(t, axes, fn, init, keep=False):
    r = len(t.shape)
    axes = [a % r for a in axes]
    oshape = [d for k, d in enumerate(t.shape) if k not in axes]
    acc = {}
    for i in idx(t.shape):
        o = tuple(i[k] for k in range(r) if k not in axes)
        acc[o] = fn(acc.get(o, init), t.at(i))
    data = [acc[o] for o in idx(oshape)] if oshape else [acc[()]]
    kshape = [1 if k in axes else d for k, d in enumerate(t.shape)] if keep else oshape
    return T(kshape, data)

# ---------------- reductions
H = """// Numeric tests of --step-lower-to-linalg for reductions: sum, mean and reduce_max over one,
// several, negative and all axes, with and without keepdim, an integer mean (truncating), a
// softmax composed of them, step.softmax / step.log_softmax along either axis,
// step.cross_entropy (none, mean, sum), step.layer_norm and step.rms_norm.
// Lowered, taken to LLVM by stepc-opt's stepc-runner-llvm, run by mlir-cpu-runner; printed values checked
// against a float64 reference.
""" + RUN
f = File("lower_to_linalg_run_reduction.mlir", H)
X = T([2, 3, 4], [((k * 7) % 11) * 0.5 - 2.0 for k in range(24)])
f.const("x", X)
t = "tensor<2x3x4xf32>"
add = lambda a, b: a + b
cases = [("sum", "[1]", [1], False, add, 0.0), ("sum", "[0, 2]", [0, 2], True, add, 0.0),
         ("sum", "[0, 1, 2]", [0, 1, 2], False, add, 0.0), ("sum", "[-1]", [-1], True, add, 0.0),
         ("reduce_max", "[1]", [1], False, max, -math.inf), ("reduce_max", "[0, 1, 2]", [0, 1, 2], True, max, -math.inf),
         ("reduce_max", "[-1, 0]", [-1, 0], False, max, -math.inf)]
for name, axes_txt, axes, keep, fn, init in cases:
    ref = reduce(X, axes, fn, init, keep)
    f.case(f"step.{name} axes = {axes_txt}{' keepdim' if keep else ''}",
           [f"%R = step.{name} %x {{axes = {axes_txt}{', keepdim' if keep else ''}}} : {t}"], ref.shape, ref)
for axes_txt, axes, keep in [("[2]", [2], False), ("[0, 1]", [0, 1], True), ("[0, 1, 2]", [0, 1, 2], False)]:
    s = reduce(X, axes, add, 0.0, keep)
    n = 1
    for a in axes: n *= X.shape[a]
    ref = T(s.shape, [v / n for v in s.data])
    f.case(f"step.mean axes = {axes_txt}{' keepdim' if keep else ''}",
           [f"%R = step.mean %x {{axes = {axes_txt}{', keepdim' if keep else ''}}} : {t}"], ref.shape, ref)
I = T([2, 3], [-7, 2, 4, 1, 5, 9], "i32")
f.const("i", I)
def softmax_rows(t):
    out = []
    for r in range(t.shape[0]):
        row = t.data[r * t.shape[1]:(r + 1) * t.shape[1]]
        m = max(row); e = [math.exp(v - m) for v in row]; z = sum(e)
        out += [v / z for v in e]
    return T(t.shape, out)
X2 = T([2, 4], [1.0, 2.0, 3.0, 4.0, -1.0, 0.0, 1.0, 10.0])
f.const("x2", X2)
f.case("a softmax composed of reduce_max keepdim, sub, exp, sum keepdim, div",
       ["%R_m = step.reduce_max %x2 {axes = [-1], keepdim} : tensor<2x4xf32>",
        "%R_d = step.sub %x2, %R_m : tensor<2x4xf32>, tensor<2x1xf32>",
        "%R_e = step.exp %R_d : tensor<2x4xf32>",
        "%R_s = step.sum %R_e {axes = [-1], keepdim} : tensor<2x4xf32>",
        "%R = step.div %R_e, %R_s : tensor<2x4xf32>, tensor<2x1xf32>"], [2, 4], softmax_rows(X2))
def log_softmax_rows(t):
    out = []
    for r in range(t.shape[0]):
        row = t.data[r * t.shape[1]:(r + 1) * t.shape[1]]
        m = max(row); z = math.log(sum(math.exp(v - m) for v in row))
        out += [v - m - z for v in row]
    return T(t.shape, out)
f.case("step.softmax (axis -1)", ["%R = step.softmax %x2 : tensor<2x4xf32>"], [2, 4], softmax_rows(X2))
f.case("step.log_softmax (axis -1)", ["%R = step.log_softmax %x2 : tensor<2x4xf32>"], [2, 4], log_softmax_rows(X2))
def cols(t):
    return T([t.shape[1], t.shape[0]], [t.at([i, j]) for j in range(t.shape[1]) for i in range(t.shape[0])])
f.case("step.softmax {axis = 0}", ["%R = step.softmax %x2 {axis = 0} : tensor<2x4xf32>"], [2, 4],
       cols(softmax_rows(cols(X2))))
f.case("step.log_softmax {axis = 0}", ["%R = step.log_softmax %x2 {axis = 0} : tensor<2x4xf32>"], [2, 4],
       cols(log_softmax_rows(cols(X2))))
def norm_rows(t, gamma, beta, eps, centre):
    out = []
    c = t.shape[-1]
    for r in range(len(t.data) // c):
        row = t.data[r * c:(r + 1) * c]
        mean = sum(row) / c if centre else 0.0
        ms = sum((v - mean) ** 2 for v in row) / c
        out += [(v - mean) / math.sqrt(ms + eps) * gamma[k] + (beta[k] if beta else 0.0)
                for k, v in enumerate(row)]
    return T(t.shape, out)
Gm = T([4], [1.0, 0.5, -2.0, 1.5]); f.const("gm", Gm)
Bt = T([4], [0.0, 0.25, -0.5, 1.0]); f.const("bt", Bt)
f.case("step.layer_norm {eps = 1.0e-5}",
       ["%R = step.layer_norm %x2, %gm, %bt {eps = 1.0e-5} : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>"],
       [2, 4], norm_rows(X2, Gm.data, Bt.data, 1e-5, True))
f.case("step.rms_norm {eps = 0.5} of [2, 3, 4] values",
       ["%R = step.rms_norm %x, %gm {eps = 0.5} : tensor<2x3x4xf32>, tensor<4xf32>"],
       [2, 3, 4], norm_rows(X, Gm.data, None, 0.5, False))
Tg = T([2], [3, 0], "i32"); f.const("tg", Tg)
ce = [-v for v in log_softmax_rows(X2).data]
ce = [ce[0 * 4 + 3], ce[1 * 4 + 0]]
f.case('step.cross_entropy {reduction = "none"}',
       ['%R = step.cross_entropy %x2, %tg {reduction = "none"} : tensor<2x4xf32>, tensor<2xi32>'], [2], T([2], ce))
f.case("step.cross_entropy (mean)", ["%R = step.cross_entropy %x2, %tg : tensor<2x4xf32>, tensor<2xi32>"], [],
       T([], [sum(ce) / 2]))
L3 = T([2, 2, 3], [0.5, -1.0, 2.0, 0.0, 0.0, 0.0, 3.0, 1.0, -2.0, -0.5, 0.25, 4.0]); f.const("l3", L3)
T3 = T([2, 2], [2, 1, 0, 1], "i64"); f.const("t3", T3)
rows = log_softmax_rows(T([4, 3], L3.data)).data
ce3 = [-rows[p * 3 + int(T3.data[p])] for p in range(4)]
f.case('step.cross_entropy {reduction = "sum"} of [2, 2, 3] logits, i64 targets',
       ['%R = step.cross_entropy %l3, %t3 {reduction = "sum"} : tensor<2x2x3xf32>, tensor<2x2xi64>'], [],
       T([], [sum(ce3)]))
f.case("step.mean on i32 axes = [1] truncates toward zero; step.reduce_max on i32",
       ["%R_m = step.mean %i {axes = [1]} : tensor<2x3xi32>", "%R_x = step.reduce_max %i {axes = [1]} : tensor<2x3xi32>",
        "%R_s = step.add %R_m, %R_x : tensor<2xi32>, tensor<2xi32>",
        "%R = step.cast %R_s {to = f32} : tensor<2xi32>"], [2],
       T([2], [float(int(-1 / 3) + 4), float(int(15 / 3) + 9)]))
f.write()

# ---------------- contractions
H = """// Numeric tests of --step-lower-to-linalg for contractions: matmul (2-D, transposed operands,
// 3-D lhs), batch_matmul (rank 3 plain and transposed, rank 4), a dense layer and embedding.
// Lowered, taken to LLVM by stepc-opt's stepc-runner-llvm, run by mlir-cpu-runner; printed values checked
// against a float64 reference.
""" + RUN
f = File("lower_to_linalg_run_contraction.mlir", H)
def mk(shape, seed):
    return T(shape, [(((k + seed) * 37) % 13) * 0.25 - 1.5 for k in range(prod(shape))])
def tr(t):  # swap last two
    s = t.shape[:-2] + [t.shape[-1], t.shape[-2]]
    return T(s, [t.at(list(i[:-2]) + [i[-1], i[-2]]) for i in idx(s)])
def mm(a, b, batched):
    M, K = a.shape[-2], a.shape[-1]; N = b.shape[-1]
    oshape = a.shape[:-2] + [M, N]
    data = []
    for i in idx(oshape):
        bi, m, n = list(i[:-2]), i[-2], i[-1]
        s = 0.0
        for k in range(K):
            s += a.at(bi + [m, k]) * b.at((bi if batched else []) + [k, n])
        data.append(s)
    return T(oshape, data)
names = {}
def c(name, t):
    names[name] = t; f.const(name, t); return t
A = c("a", mk([2, 3], 1)); W = c("w", mk([3, 4], 2)); At = c("at", tr(A)); Wt = c("wt", tr(W))
A3 = c("a3", mk([2, 2, 3], 3))
Bl = c("bl", mk([2, 2, 3], 4)); Br = c("br", mk([2, 3, 2], 5)); Brt = c("brt", tr(Br)); Blt = c("blt", tr(Bl))
Q = c("q", mk([2, 2, 2, 3], 6)); Kk = c("k", mk([2, 2, 2, 3], 7))
def case(desc, lhs, rhs, attrs, ref, op="matmul"):
    f.case(desc, [f"%R = step.{op} %{lhs}, %{rhs}{attrs} : {ttype(names[lhs].shape)}, {ttype(names[rhs].shape)}"],
           ref.shape, ref)
case("step.matmul [2, 3] x [3, 4]", "a", "w", "", mm(A, W, False))
case("step.matmul transpose_lhs [3, 2]^T x [3, 4]", "at", "w", " {transpose_lhs}", mm(A, W, False))
case("step.matmul transpose_rhs [2, 3] x [4, 3]^T", "a", "wt", " {transpose_rhs}", mm(A, W, False))
case("step.matmul transpose_lhs transpose_rhs", "at", "wt", " {transpose_lhs, transpose_rhs}", mm(A, W, False))
case("step.matmul 3-D lhs [2, 2, 3] x [3, 4]", "a3", "w", "", mm(A3, W, False))
case("step.batch_matmul [2, 2, 3] x [2, 3, 2]", "bl", "br", "", mm(Bl, Br, True), "batch_matmul")
case("step.batch_matmul transpose_rhs", "bl", "brt", " {transpose_rhs}", mm(Bl, Br, True), "batch_matmul")
case("step.batch_matmul transpose_lhs", "blt", "br", " {transpose_lhs}", mm(Bl, Br, True), "batch_matmul")
Bias = c("bias", T([4], [0.5, -0.5, 1.0, -3.0]))
ref = mm(A3, W, False)
ref = T(ref.shape, [max(0.0, v + Bias.data[k % 4]) for k, v in enumerate(ref.data)])
ref = reduce(ref, [0, 1], lambda a, b: a + b, 0.0)
f.case("a dense layer: sum over [0, 1] of relu(x @ w + bias)",
       ["%R_h = step.matmul %a3, %w : tensor<2x2x3xf32>, tensor<3x4xf32>",
        "%R_b = step.add %R_h, %bias : tensor<2x2x4xf32>, tensor<4xf32>",
        "%R_r = step.relu %R_b : tensor<2x2x4xf32>",
        "%R = step.sum %R_r {axes = [0, 1]} : tensor<2x2x4xf32>"], [4], ref)
Tab = c("table", mk([5, 3], 8)); Ids = c("ids", T([2, 2], [4, 0, 2, 4], "i32"))
f.case("step.embedding of [5, 3] rows by [2, 2] ids",
       ["%R = step.embedding %table, %ids : tensor<5x3xf32>, tensor<2x2xi32>"], [2, 2, 3],
       T([2, 2, 3], [Tab.at([int(i), d]) for i in Ids.data for d in range(3)]))
case("step.batch_matmul rank 4 transpose_rhs (attention scores)", "q", "k", " {transpose_rhs}", mm(Q, tr(Kk), True), "batch_matmul")
f.write()

# ---------------- shape ops
H = """// Numeric tests of --step-lower-to-linalg for shape ops: reshape (with 0 and -1 entries, to
// and from rank 0), transpose, broadcast, strided slice, pad, split, iota and concat. Lowered, taken to LLVM
// by stepc-opt's stepc-runner-llvm, run by mlir-cpu-runner; printed values checked against a reference.
""" + RUN
f = File("lower_to_linalg_run_shape.mlir", H)
X = T([2, 3, 4], [float(k) for k in range(24)]); f.const("x", X)
t = "tensor<2x3x4xf32>"
f.case("step.reshape {shape = [4, -1]}", [f"%R = step.reshape %x {{shape = [4, -1]}} : {t}"], [4, 6], T([4, 6], X.data))
f.case("step.reshape {shape = [0, 12]}", [f"%R = step.reshape %x {{shape = [0, 12]}} : {t}"], [2, 12], T([2, 12], X.data))
f.case("step.reshape {shape = [0, 3, 2, 2]}", [f"%R = step.reshape %x {{shape = [0, 3, 2, 2]}} : {t}"], [2, 3, 2, 2], T([2, 3, 2, 2], X.data))
f.const("one", T([1, 1], [7.5]))
f.case("step.reshape [1, 1] -> [] -> [1, 1, 1]",
       ["%R_s = step.reshape %one {shape = []} : tensor<1x1xf32>", "%R = step.reshape %R_s {shape = [1, 1, 1]} : tensor<f32>"],
       [1, 1, 1], T([1, 1, 1], [7.5]))
def transpose(t, perm):
    s = [t.shape[p] for p in perm]
    data = []
    for i in idx(s):
        j = [0] * len(s)
        for k, p in enumerate(perm): j[p] = i[k]
        data.append(t.at(j))
    return T(s, data)
for perm in ([2, 0, 1], [1, 0, 2], [0, 2, 1]):
    ref = transpose(X, perm)
    f.case(f"step.transpose {{perm = {perm}}}", [f"%R = step.transpose %x {{perm = {perm}}} : {t}"], ref.shape, ref)
Bv = T([3], [1.0, 2.0, 3.0]); f.const("b", Bv)
Cc = T([2, 1], [5.0, 6.0]); f.const("c", Cc)
f.case("step.broadcast [3] -> [2, 2, 3]", ["%R = step.broadcast %b {shape = [2, 2, 3]} : tensor<3xf32>"], [2, 2, 3],
       bmap(lambda a, z: a, Bv, T([2, 2, 3], [0.0] * 12)))
f.case("step.broadcast [2, 1] -> [3, 2, 4]", ["%R = step.broadcast %c {shape = [3, 2, 4]} : tensor<2x1xf32>"], [3, 2, 4],
       bmap(lambda a, z: a, Cc, T([3, 2, 4], [0.0] * 24)))
def slice_(t, start, limit, strides):
    s = [(l - a + st - 1) // st for a, l, st in zip(start, limit, strides)]
    return T(s, [t.at([a + k * st for a, k, st in zip(start, i, strides)]) for i in idx(s)])
f.case("step.slice start = [0, 1, 1] limit = [2, 3, 4]",
       [f"%R = step.slice %x {{start = [0, 1, 1], limit = [2, 3, 4]}} : {t}"], [2, 2, 3], slice_(X, [0, 1, 1], [2, 3, 4], [1, 1, 1]))
f.case("step.slice strided start = [1, 0, 0] limit = [2, 3, 4] strides = [1, 2, 3]",
       [f"%R = step.slice %x {{start = [1, 0, 0], limit = [2, 3, 4], strides = [1, 2, 3]}} : {t}"], [1, 2, 2],
       slice_(X, [1, 0, 0], [2, 3, 4], [1, 2, 3]))
M = T([2, 3], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]); f.const("m", M)
def pad(t, low, high, v):
    s = [d + a + b for d, a, b in zip(t.shape, low, high)]
    data = []
    for i in idx(s):
        j = [k - a for k, a in zip(i, low)]
        data.append(t.at(j) if all(0 <= jj < d for jj, d in zip(j, t.shape)) else v)
    return T(s, data)
f.case("step.pad low = [1, 0] high = [0, 2] value = -1.0",
       ["%R = step.pad %m {low = [1, 0], high = [0, 2], value = -1.0} : tensor<2x3xf32>"], [3, 5], pad(M, [1, 0], [0, 2], -1.0))
f.case("step.pad low = [0, 2] high = [1, 1] (value 0)",
       ["%R = step.pad %m {low = [0, 2], high = [1, 1]} : tensor<2x3xf32>"], [3, 6], pad(M, [0, 2], [1, 1], 0.0))
N = T([2, 2], [10.0, 20.0, 30.0, 40.0]); f.const("n", N)
f.case("step.concat axis = 1 ([2, 3], [2, 2], [2, 3])",
       ["%R = step.concat %m, %n, %m {axis = 1} : tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x3xf32>"], [2, 8],
       T([2, 8], M.data[0:3] + N.data[0:2] + M.data[0:3] + M.data[3:6] + N.data[2:4] + M.data[3:6]))
f.case("step.split axis = -1 parts = 2 (the second part)",
       [f"%R_a, %R = step.split %x {{axis = -1, parts = 2}} : {t}"], [2, 3, 2], slice_(X, [0, 0, 2], [2, 3, 4], [1, 1, 1]))
f.case("step.split axis = 1 parts = 3 (the first part)",
       [f"%R, %R_b, %R_c = step.split %x {{axis = 1, parts = 3}} : {t}"], [2, 1, 4], slice_(X, [0, 0, 0], [2, 1, 4], [1, 1, 1]))
f.case("step.iota shape = [2, 3] axis = 1 dtype = f32 offset = 1",
       ["%R = step.iota {shape = [2, 3], axis = 1, dtype = f32, offset = 1}"], [2, 3], T([2, 3], [1.0, 2.0, 3.0] * 2))
f.case("step.iota like %m axis = 0 dtype = i32 (as f32)",
       ["%R_i = step.iota %m {axis = 0, dtype = i32} : tensor<2x3xf32>", "%R = step.cast %R_i {to = f32} : tensor<2x3xi32>"],
       [2, 3], T([2, 3], [0.0] * 3 + [1.0] * 3))
f.case("step.concat axis = -2 ([2, 3], [2, 3])",
       ["%R = step.concat %m, %m {axis = -2} : tensor<2x3xf32>, tensor<2x3xf32>"], [4, 3], T([4, 3], M.data + M.data))
f.write()

# ---------------- scans and scatters (scf.for loops)
HEADER = """// Numeric tests of --step-lower-to-linalg for the ops lowered to scf.for loops on tensors:
// cumsum (forward and reverse, any axis, float and integer), embedding_grad (a scatter-add
// with repeated ids) and repeat (carried values, `over` slices, stacked results, reverse), lowered, taken to LLVM by stepc-opt's stepc-runner-llvm and run by mlir-cpu-runner;
// the printed values were checked against a float64 reference.
""" + RUN
f = File("lower_to_linalg_run_scan.mlir", HEADER)
Xs = T([2, 3, 4], [((k * 7) % 11) * 0.5 - 2.0 for k in range(24)]); f.const("x", Xs)
def cumsum(t, axis, reverse):
    axis %= len(t.shape)
    data = []
    for i in idx(t.shape):
        rng = range(i[axis], t.shape[axis]) if reverse else range(0, i[axis] + 1)
        data.append(sum(t.at(i[:axis] + (s,) + i[axis + 1:]) for s in rng))
    return T(t.shape, data)
ts = ttype(Xs.shape)
for axis, rev in [(0, False), (1, False), (2, False), (-1, True), (1, True), (0, True)]:
    attrs = f"axis = {axis}" + (", reverse" if rev else "")
    f.case(f"step.cumsum {{{attrs}}}", [f"%R = step.cumsum %x {{{attrs}}} : {ts}"], Xs.shape, cumsum(Xs, axis, rev))
Is = T([2, 3], [3, -1, 4, 1, -5, 9], "i32"); f.const("i", Is)
f.case("step.cumsum {axis = 1, reverse} on i32 (as f32)",
       ["%R_c = step.cumsum %i {axis = 1, reverse} : tensor<2x3xi32>", "%R = step.cast %R_c {to = f32} : tensor<2x3xi32>"],
       [2, 3], cumsum(Is, 1, True))
Xd = T([5], [0.1, 0.2, 0.3, 0.4, 0.5]); f.const("xd", Xd)
f.case("step.cumsum {axis = 0} on f64 (as f32)",
       ["%R_d = step.cast %xd {to = f64} : tensor<5xf32>", "%R_c = step.cumsum %R_d {axis = 0} : tensor<5xf64>",
        "%R = step.cast %R_c {to = f32} : tensor<5xf64>"], [5], cumsum(Xd, 0, False))
def embedding_grad(g, ids, vocab):
    d = g.shape[-1]
    out = [0.0] * (vocab * d)
    for n, v in enumerate(ids.data):
        for k in range(d): out[int(v) * d + k] += g.data[n * d + k]
    return T([vocab, d], out)
Ge = T([2, 3, 4], [((k * 5) % 13) * 0.25 - 1.5 for k in range(24)]); f.const("g", Ge)
Ie = T([2, 3], [2, 0, 2, 4, 2, 0], "i32"); f.const("ids", Ie)
f.case("step.embedding_grad {vocab = 5} with repeated i32 ids [2, 3] (rows 1 and 3 stay zero)",
       ["%R = step.embedding_grad %g, %ids {vocab = 5} : tensor<2x3x4xf32>, tensor<2x3xi32>"], [5, 4],
       embedding_grad(Ge, Ie, 5))
G1 = T([4, 3], [1.0, 2.0, 3.0, -1.0, 0.5, 0.25, 4.0, -2.0, 1.5, 0.0, 3.0, -3.0]); f.const("g1", G1)
I1 = T([4], [1, 1, 0, 1], "i64"); f.const("ids1", I1)
f.case("step.embedding_grad {vocab = 2} with i64 ids [4]",
       ["%R = step.embedding_grad %g1, %ids1 {vocab = 2} : tensor<4x3xf32>, tensor<4xi64>"], [2, 3],
       embedding_grad(G1, I1, 2))
# step.repeat: h' = tanh(h @ w[i] + b[i]), carried h and a running sum; h stacked per iteration.
Hr = T([2, 2], [0.5, -1.0, 1.5, 0.25]); f.const("h0", Hr)
Wr = T([3, 2, 2], [0.3, -0.2, 0.8, -1.1, 0.6, 0.1, -0.4, 0.9, 1.2, 0.5, -0.7, 0.2]); f.const("ws", Wr)
Br = T([3, 2], [0.1, -0.3, 0.2, 0.0, -0.5, 0.4]); f.const("bs", Br)
def repeat_ref(reverse):
    h = [Hr.data[0:2], Hr.data[2:4]]
    acc = [[0.0, 0.0], [0.0, 0.0]]
    saved = [None] * 3
    for it in (range(2, -1, -1) if reverse else range(3)):
        saved[it] = [v for row in h for v in row]
        w = [[Wr.at([it, k, j]) for j in range(2)] for k in range(2)]
        h = [[math.tanh(sum(h[i][k] * w[k][j] for k in range(2)) + Br.at([it, j])) for j in range(2)] for i in range(2)]
        acc = [[acc[i][j] + h[i][j] for j in range(2)] for i in range(2)]
    return (T([2, 2], [v for row in h for v in row]), T([2, 2], [v for row in acc for v in row]),
            T([3, 2, 2], [v for blk in saved for v in blk]))
t22 = "tensor<2x2xf32>"
for rev in (False, True):
    body = [f"%R_h, %R_acc, %R_saved = step.repeat \"layer\" 3 (%R_a = %h0 : {t22}, %R_s = %z : {t22}) over (%R_w = %ws : tensor<3x2x2xf32>, %R_b = %bs : tensor<3x2xf32>){' reverse' if rev else ''} {{",
            f"  %R_m = step.matmul %R_a, %R_w : {t22}, {t22}",
            f"  %R_p = step.add %R_m, %R_b : {t22}, tensor<2xf32>",
            f"  %R_t = step.tanh %R_p : {t22}",
            f"  %R_n = step.add %R_s, %R_t : {t22}, {t22}",
            f"  step.yield %R_t, %R_n, %R_a : {t22}, {t22}, {t22}",
            "}"]
    hh, acc, saved = repeat_ref(rev)
    name = "step.repeat" + (" reverse" if rev else "")
    f.case(f"{name}: the carried h", body + [f"%R = tensor.cast %R_h : {t22} to {t22}"], [2, 2], hh)
    f.case(f"{name}: the carried running sum", body + [f"%R = tensor.cast %R_acc : {t22} to {t22}"], [2, 2], acc)
    f.case(f"{name}: the stacked inputs of each iteration", body + [f"%R = tensor.cast %R_saved : tensor<3x2x2xf32> to tensor<3x2x2xf32>"], [3, 2, 2], saved)
# step.stack_over (--step-sink-layer-updates): a stacked result written over the `over` operand
# it is computed from (u[i] = w[i] * h_in[i]), read back from the carried tensor in the loop.
def update_ref():
    h = [Hr.data[0:2], Hr.data[2:4]]
    u = [None] * 3
    for it in range(2, -1, -1):
        w = [[Wr.at([it, k, j]) for j in range(2)] for k in range(2)]
        u[it] = [w[i][j] * h[i][j] for i in range(2) for j in range(2)]
        h = [[math.tanh(sum(h[i][k] * w[k][j] for k in range(2)) + Br.at([it, j])) for j in range(2)] for i in range(2)]
    return T([3, 2, 2], [v for blk in u for v in blk])
f.case("step.repeat reverse with step.stack_over: the update written over its operand",
       [f"%R_h, %R_u = step.repeat \"layer\" 3 (%R_a = %h0 : {t22}) over (%R_w = %ws : tensor<3x2x2xf32>, %R_b = %bs : tensor<3x2xf32>) reverse attributes {{step.stack_over = array<i64: 0>}} {{",
        f"  %R_m = step.matmul %R_a, %R_w : {t22}, {t22}",
        f"  %R_p = step.add %R_m, %R_b : {t22}, tensor<2xf32>",
        f"  %R_t = step.tanh %R_p : {t22}",
        f"  %R_v = step.mul %R_w, %R_a : {t22}, {t22}",
        f"  step.yield %R_t, %R_v : {t22}, {t22}",
        "}",
        "%R = tensor.cast %R_u : tensor<3x2x2xf32> to tensor<3x2x2xf32>"], [3, 2, 2], update_ref())
f.const("z", T([2, 2], [0.0] * 4))
f.write()

# ---------------- conv1d and its gradients
HEADER = """// Numeric tests of --step-lower-to-linalg for conv1d, conv1d_grad_input and
// conv1d_grad_weight (causal and valid, one and two groups), lowered to linalg.generic over the
// definition, taken to LLVM by stepc-opt's stepc-runner-llvm and run by mlir-cpu-runner; the printed values
// were checked against a float64 reference written from the interpreter's definition.
""" + RUN
f = File("lower_to_linalg_run_convolution.mlir", HEADER)
def conv_terms(Bn, S, Cin, Cout, K, groups, padding):
    pad = K - 1 if padding == "causal" else 0
    So = S if padding == "causal" else S - K + 1
    cpg, opg = Cin // groups, Cout // groups
    for b in range(Bn):
        for t in range(So):
            for o in range(Cout):
                first = (o // opg) * cpg
                for k in range(K):
                    sx = t + k - pad
                    if sx < 0 or sx >= S: continue
                    for c in range(cpg):
                        yield (b, sx, first + c), (k, c, o), (b, t, o)
Xc = T([2, 5, 4], [((k * 7) % 11) * 0.25 - 1.0 for k in range(40)]); f.const("x", Xc)
for K, groups, padding in [(3, 1, "causal"), (2, 2, "causal"), (3, 1, "valid"), (2, 2, "valid")]:
    cpg, Cout = 4 // groups, 6
    So = 5 if padding == "causal" else 5 - K + 1
    W = T([K, cpg, Cout], [((k * 5) % 9) * 0.2 - 0.7 for k in range(K * cpg * Cout)])
    G = T([2, So, Cout], [((k * 3) % 7) * 0.3 - 0.9 for k in range(2 * So * Cout)])
    wn, gn = f"w{K}{groups}{padding[0]}", f"g{K}{groups}{padding[0]}"
    f.const(wn, W); f.const(gn, G)
    y, dx, dw = [0.0] * (2 * So * Cout), [0.0] * 40, [0.0] * (K * cpg * Cout)
    for xi, wi, yi in conv_terms(2, 5, 4, Cout, K, groups, padding):
        xf, wf, yf = flat_index([2, 5, 4], xi), flat_index(W.shape, wi), flat_index([2, So, Cout], yi)
        y[yf] += Xc.data[xf] * W.data[wf]
        dx[xf] += G.data[yf] * W.data[wf]
        dw[wf] += Xc.data[xf] * G.data[yf]
    attrs = f'padding = "{padding}", groups = {groups}'
    wt, gt = ttype(W.shape), ttype(G.shape)
    f.case(f"step.conv1d K = {K} {{{attrs}}}",
           [f"%R = step.conv1d %x, %{wn} {{{attrs}}} : tensor<2x5x4xf32>, {wt}"], [2, So, Cout], T([2, So, Cout], y))
    f.case(f"step.conv1d_grad_input K = {K} {{{attrs}}}",
           [f"%R = step.conv1d_grad_input %{gn}, %{wn} {{{attrs}}} : {gt}, {wt}"], [2, 5, 4], T([2, 5, 4], dx))
    f.case(f"step.conv1d_grad_weight K = {K} {{{attrs}}}",
           [f"%R = step.conv1d_grad_weight %x, %{gn} {{kernel = {K}, {attrs}}} : tensor<2x5x4xf32>, {gt}"],
           W.shape, T(W.shape, dw))
f.write()

# ---------------- a differentiated dense layer with a cross-entropy loss
H = """// Numeric test of --step-lower-to-linalg on what autodiff emits: @loss below is the output of
// --step-differentiate on a dense layer, tanh and a mean cross-entropy (the generator runs
// autodiff on it, since @main's call must match the differentiated signature when parsed).
// Every step op of forward and backward is lowered, and the loss and the gradients with
// respect to x, w and b are run and checked against a float64 reference of the hand-derived
// gradients.
""" + RUN

PRE = """func.func @loss(%x: tensor<3x2xf32>, %w: tensor<2x4xf32>, %b: tensor<4xf32>, %y: tensor<3xi32>)
    -> tensor<f32> attributes {step.differentiate} {
  %h = step.matmul %x, %w : tensor<3x2xf32>, tensor<2x4xf32>
  %z = step.add %h, %b : tensor<3x4xf32>, tensor<4xf32>
  %a = step.tanh %z : tensor<3x4xf32>
  %l = step.cross_entropy %a, %y : tensor<3x4xf32>, tensor<3xi32>
  return %l : tensor<f32>
}
"""
with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as src:
    src.write(PRE)
grad = subprocess.run([f"{REPO}/bazel-bin/compiler/Driver/stepc-opt", "--step-differentiate", src.name],
                      capture_output=True, text=True, check=True).stdout.strip().split("\n")
assert grad[0] == "module {" and grad[-1] == "}", grad
PRE = "\n".join(l[2:] for l in grad[1:-1])
f = File("lower_to_linalg_run_gradients.mlir", H, PRE)
Xg = T([3, 2], [0.5, -1.0, 1.5, 0.25, -0.75, 2.0]); f.const("x", Xg)
Wg = T([2, 4], [0.3, -0.2, 0.8, -1.1, 0.6, 0.1, -0.4, 0.9]); f.const("w", Wg)
Bg = T([4], [0.1, -0.3, 0.2, 0.0]); f.const("b", Bg)
Yg = T([3], [2, 0, 3], "i32"); f.const("y", Yg)
Z = [[sum(Xg.at([i, k]) * Wg.at([k, j]) for k in range(2)) + Bg.data[j] for j in range(4)] for i in range(3)]
A = [[math.tanh(v) for v in row] for row in Z]
loss, dA = 0.0, []
for i, row in enumerate(A):
    m = max(row); e = [math.exp(v - m) for v in row]; s = sum(e)
    loss += -(row[int(Yg.data[i])] - m - math.log(s)) / 3
    dA.append([(e[j] / s - (1.0 if j == int(Yg.data[i]) else 0.0)) / 3 for j in range(4)])
dZ = [[dA[i][j] * (1 - A[i][j] ** 2) for j in range(4)] for i in range(3)]
dX = T([3, 2], [sum(dZ[i][j] * Wg.at([k, j]) for j in range(4)) for i in range(3) for k in range(2)])
dW = T([2, 4], [sum(Xg.at([i, k]) * dZ[i][j] for i in range(3)) for k in range(2) for j in range(4)])
dB = T([4], [sum(dZ[i][j] for i in range(3)) for j in range(4)])
call = "%R_l, %R_dx, %R_dw, %R_db = call @loss(%x, %w, %b, %y) : (tensor<3x2xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<3xi32>) -> (tensor<f32>, tensor<3x2xf32>, tensor<2x4xf32>, tensor<4xf32>)"
f.case("the loss", [call, "%R = tensor.cast %R_l : tensor<f32> to tensor<f32>"], [], T([], [loss]))
f.case("d loss / d x", [call, "%R = tensor.cast %R_dx : tensor<3x2xf32> to tensor<3x2xf32>"], [3, 2], dX)
f.case("d loss / d w", [call, "%R = tensor.cast %R_dw : tensor<2x4xf32> to tensor<2x4xf32>"], [2, 4], dW)
f.case("d loss / d b", [call, "%R = tensor.cast %R_db : tensor<4xf32> to tensor<4xf32>"], [4], dB)
f.write()
