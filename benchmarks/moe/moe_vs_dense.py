#!/usr/bin/python3
"""One mixture-of-experts layer against the dense layer of equal active FLOPs, and against the
same MoE as a PyTorch user writes it: forward + backward + AdamW, measured in one run.

The layer, on T tokens of width D (f32, the same thread count everywhere):
  * stepc MoE    -- router D -> E (f32 softmax; `skewed` adds s * e to expert e's logit, s = 2,
                    so the router piles onto the last experts), top-k, then either token choice
                    (step.route_tokens, capacity factor 1.0: E * C = T * k slots, overflow
                    dropped) or expert choice (step.route_experts: exactly balanced); dispatch,
                    two batched GEMMs over E with GELU between (D -> h -> D per expert), combine
                    weighted by the gates, the residual added;
  * stepc dense  -- the FFN D -> k*h -> D with GELU and the residual: the MoE's active FLOPs;
  * PyTorch MoE  -- the same token-choice layer in PyTorch, in the forms a user writes
                    (HomebrewNLP's gather + argsort + einsum and a per-expert masked loop, as its
                    first MoE did); the fastest is the peer ("PyTorch best").
Each model is x * g (a learned per-channel scale, so the layer's input needs its gradient as
inside a network) -> layer -> a D -> 16 head -> cross-entropy on the built-in classification
data. The sides alternate for --rounds rounds; a side's time is the median step_ms over all
rounds' measured steps (after --warmup steps).

Printed per configuration: t_MoE, t_dense, R_dense = t_MoE / t_dense, the MoE's routing share
(a separate STEPC_PROFILE=1 run: the router GEMM, the [T, E] router kernels, top_k, the routing
scan and every kernel reading a routing map, over all kernel time — an upper bound, since a
gather fused with the GELU or the gate scale counts whole; the experts' GEMMs, which pack their
rows by the routing map on the CPU, count as the experts' work), the planned arena (activations
and temporaries) MoE vs dense, the PyTorch MoE's time and stepc's speedup over it, and the
achieved GFLOP/s of the active GEMM FLOPs against the machine's measured FMA peak (uniform rows
only: skewed routing drops most choices, whose empty slots the GEMMs leave out).
With --gpu (or --gpu-only, which runs nothing), also the compiler's roofline prediction of
both layers' CUDA steps in bf16 (PredictStepTime.cpp, sm_90 = H100 SXM data-sheet peaks, each
each command costed as a node of the step's CUDA graph) and the same on an H200 (the memory-bound part scaled to its 4.8 TB/s):
a prediction, not a measurement.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STEPC = os.path.join(REPO, "bazel-bin", "compiler", "Driver", "stepc")
CLASSES = 16
SKEW = 2.0

CONFIG = """
  step.config {
    optimizer = adamw(lr = 1.0e-3, weight_decay = 0.0),
    schedule = constant,
    clip = none,
    sam = none
  }
"""


def moe_model(T, D, E, H, K, routing, skewed):
    route = (f"%choices, %slots = step.route_tokens %experts {{num_experts = E, capacity_factor = 1.0}}"
             if routing == "token" else
             "%choices, %slots, %chosen = step.route_experts %probs {k = K}")
    gates = ("%top, %experts = step.top_k %probs {k = K}" if routing == "token" else """%ids = step.iota {shape = [E], axis = 0, dtype = i32}
  %chosen3 = step.reshape %chosen {shape = [T, K, 1]}
  %mine = step.compare %chosen3, %ids {predicate = "eq"}
  %mask = step.cast %mine {to = f32}
  %probs3 = step.reshape %probs {shape = [T, 1, E]}
  %picked = step.mul %probs3, %mask
  %top = step.sum %picked {axes = [-1]}""")
    if routing == "token":
        body = f"{gates}\n  {route}"
    else:
        body = f"{route}\n  {gates}"
    return f"""step.model @moe dims(T = {T}, D = {D}, E = {E}, H = {H}, K = {K}) {{
  %x0, %labels = step.input "data" [T, D] f32 = classification(classes = {CLASSES})
  %scale = step.param "scale" [D] f32 = ones
  %router = step.param "router" [D, E] f32 = normal(std = 0.02)
  %w1 = step.param "w1" [E, D, H] f32 = normal(std = rsqrt(D))
  %w2 = step.param "w2" [E, H, D] f32 = normal(std = rsqrt(H))
  %head = step.param "head" [D, {CLASSES}] f32 = normal(std = rsqrt(D))
  %x = step.mul %x0, %scale
  %logits0 = step.matmul %x, %router
  %e = step.iota {{shape = [E], axis = 0, dtype = f32}}
  %s = step.constant {{value = dense<{SKEW if skewed else 0.0}> : tensor<f32>}}
  %bias = step.mul %e, %s
  %logits = step.add %logits0, %bias
  %probs = step.softmax %logits {{axis = -1}}
  {body}
  %xe = step.gather_rows %x, %choices, %slots {{group = K}}
  %h0 = step.batch_matmul %xe, %w1
  %h = step.gelu %h0 {{approximate = "tanh"}}
  %ye = step.batch_matmul %h, %w2
  %flat = step.reshape %ye {{shape = [-1, D]}}
  %yk = step.gather_rows %flat, %slots, %choices
  %g = step.reshape %top {{shape = [T, K, 1]}}
  %weighted = step.mul %yk, %g
  %y = step.sum %weighted {{axes = [1]}}
  %out = step.add %x, %y
  %z = step.matmul %out, %head
  %loss = step.cross_entropy %z, %labels
  step.loss %loss
{CONFIG}}}
"""


def dense_model(T, D, H):
    return f"""step.model @dense dims(T = {T}, D = {D}, H = {H}) {{
  %x0, %labels = step.input "data" [T, D] f32 = classification(classes = {CLASSES})
  %scale = step.param "scale" [D] f32 = ones
  %w1 = step.param "w1" [D, H] f32 = normal(std = rsqrt(D))
  %w2 = step.param "w2" [H, D] f32 = normal(std = rsqrt(H))
  %head = step.param "head" [D, {CLASSES}] f32 = normal(std = rsqrt(D))
  %x = step.mul %x0, %scale
  %h0 = step.matmul %x, %w1
  %h = step.gelu %h0 {{approximate = "tanh"}}
  %y = step.matmul %h, %w2
  %out = step.add %x, %y
  %z = step.matmul %out, %head
  %loss = step.cross_entropy %z, %labels
  step.loss %loss
{CONFIG}}}
"""


def compile_model(text, path):
    src = path + ".mlir"
    open(src, "w").write(text)
    r = subprocess.run([STEPC, "compile", src, "-o", path], capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"stepc compile {src} failed:\n{r.stderr}")
    m = re.search(r"arena ([0-9.]+) MiB", r.stderr)
    return float(m.group(1)) if m else float("nan")


# The H200's data-sheet HBM bandwidth against the H100 SXM's (PredictStepTime's sm_90 row): the
# same SMs and tensor-core peaks, 4.8 against 3.35 TB/s.
H200_BANDWIDTH_SCALE = 3.35 / 4.8


def gpu_prediction(mlir_path):
    """The CUDA step's roofline (PredictStepTime.cpp) for sm_90 in bf16, from `--emit=plan`, and
    the same on an H200: its memory-bound part scaled by the bandwidths, the rest unchanged."""
    r = subprocess.run([STEPC, "compile", mlir_path, "--target=cuda", "--gpu-arch=sm_90",
                        "--precision=bf16", "--emit=plan"], capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"stepc compile --target=cuda {mlir_path} failed:\n{r.stderr}")
    m = re.search(r"predicted @train_step on .*?: ([\d.]+) ms = ([\d.]+) ms compute-bound \+ "
                  r"([\d.]+) ms memory-bound .*?\+ ([\d.]+) ms for (\d+) launches", r.stdout)
    if not m:
        sys.exit(f"no prediction in the plan of {mlir_path}")
    h100, compute, memory, launch, launches = (float(m.group(i)) for i in range(1, 6))
    return {"h100_ms": h100, "compute_ms": compute, "memory_ms": memory, "launch_ms": launch,
            "launches": int(launches), "h200_ms": compute + memory * H200_BANDWIDTH_SCALE + launch}


def run_stepc(binary, steps, warmup, threads, env):
    metrics = binary + ".metrics.jsonl"
    if os.path.exists(metrics):
        os.remove(metrics)
    subprocess.run([binary, "train", "--steps", str(steps + warmup), "--threads", str(threads),
                    "--metrics", metrics], check=True, capture_output=True, env=env)
    rows = [json.loads(l) for l in open(metrics)]
    return [r["step_ms"] for r in rows[warmup:]]


def routing_share(binary, threads, T, E, env):
    """Share of kernel time in routing work, from a STEPC_PROFILE=1 run (see the docstring)."""
    r = subprocess.run([binary, "train", "--steps", "3", "--threads", str(threads)],
                       capture_output=True, text=True, env=dict(env, STEPC_PROFILE="1"))
    total = routing = 0.0
    router = f"{T}x{E}xf32"
    for line in (r.stdout + r.stderr).splitlines():
        m = re.match(r"\s*([0-9.]+)\s+(\d+)\s+[0-9.]+%\s+(.*)$", line)
        if not m:
            continue
        ms, what = float(m.group(1)), m.group(3)
        total += ms
        # The experts' GEMMs read the routing map too (they pack their rows by it, and leave
        # the empty slots out by it: --step-gathered-gemms); they are the experts' work.
        expert_gemm = what.startswith("gemm") and router not in what
        if "_scan" in what or ("xi32" in what and not expert_gemm) or router in what:
            routing += ms
    return routing / total if total else float("nan")


# ---------------------------------------------------------------------------------------------
# PyTorch: the same token-choice layer as a user writes it.
# ---------------------------------------------------------------------------------------------
TORCH_SIDE = r'''
import json, math, sys, time
import torch
F = torch.nn.functional
T, D, E, H, K, FORM, SKEWED, STEPS, WARMUP, THREADS = sys.argv[1:]
T, D, E, H, K, STEPS, WARMUP, THREADS = map(int, (T, D, E, H, K, STEPS, WARMUP, THREADS))
SKEWED = SKEWED == "1"
torch.set_num_threads(THREADS)
torch.manual_seed(0)
CAP = min(T, math.ceil(T * K / E))
scale = torch.ones(D, requires_grad=True)
router = (torch.randn(D, E) * 0.02).requires_grad_()
w1 = (torch.randn(E, D, H) / math.sqrt(D)).requires_grad_()
w2 = (torch.randn(E, H, D) / math.sqrt(H)).requires_grad_()
head = (torch.randn(D, 16) / math.sqrt(D)).requires_grad_()
params = [scale, router, w1, w2, head]
opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.0, foreach=True)
bias = torch.arange(E, dtype=torch.float32) * (2.0 if SKEWED else 0.0)
x0 = torch.randn(T, D)
labels = torch.randint(0, 16, (T,))

def route(x):
    probs = (x @ router + bias).softmax(-1)
    top, experts = probs.topk(K, dim=-1)
    return top, experts

def moe_argsort(x):
    # HomebrewNLP's final form: sort the (token, choice) pairs by expert, cut each expert's run
    # at the capacity, gather into [E, C, D], batched einsum, un-permute by gather/index_add.
    top, experts = route(x)
    flat = experts.reshape(-1)
    order = torch.argsort(flat, stable=True)
    sorted_e = flat[order]
    counts = torch.bincount(flat, minlength=E)
    starts = torch.cumsum(counts, 0) - counts
    pos = torch.arange(T * K) - starts[sorted_e]
    keep = pos < CAP
    slot = sorted_e[keep] * CAP + pos[keep]
    token = order[keep] // K
    xe = x.new_zeros(E * CAP, D).index_copy(0, slot, x[token])
    h = F.gelu(torch.einsum("ecd,edh->ech", xe.view(E, CAP, D), w1), approximate="tanh")
    ye = torch.einsum("ech,ehd->ecd", h, w2).reshape(E * CAP, D)
    gate = top.reshape(-1)[order[keep]]
    return x.new_zeros(T, D).index_add(0, token, ye[slot] * gate[:, None])

def moe_masked(x):
    # HomebrewNLP's first form: per expert, select its tokens, multiply, scatter back.
    top, experts = route(x)
    out = torch.zeros_like(x)
    for e in range(E):
        hit = experts == e                                   # [T, K]
        token, choice = hit.nonzero(as_tuple=True)
        token, choice = token[:CAP], choice[:CAP]
        h = F.gelu(x[token] @ w1[e], approximate="tanh")
        out = out.index_add(0, token, (h @ w2[e]) * top[token, choice][:, None])
    return out

layer = {"argsort": moe_argsort, "masked": moe_masked}[FORM]
times = []
for step in range(STEPS + WARMUP):
    t0 = time.perf_counter()
    x = x0 * scale
    loss = F.cross_entropy((x + layer(x)) @ head, labels)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    times.append((time.perf_counter() - t0) * 1e3)
print(json.dumps({"step_ms": times[WARMUP:], "loss": loss.item()}))
'''


def run_torch(form, T, D, E, H, K, skewed, steps, warmup, threads, env, workdir):
    script = os.path.join(workdir, "torch_moe.py")
    open(script, "w").write(TORCH_SIDE)
    r = subprocess.run(["/usr/bin/python3", script, str(T), str(D), str(E), str(H), str(K), form,
                        "1" if skewed else "0", str(steps), str(warmup), str(threads)],
                       capture_output=True, text=True, env=env)
    if r.returncode:
        sys.exit(f"PyTorch side failed:\n{r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])["step_ms"]


def machine_probe(threads, workdir):
    src = os.path.join(REPO, "benchmarks", "machine_probe.cpp")
    exe = os.path.join(workdir, "machine_probe")
    if subprocess.run(["g++", "-O2", "-std=c++17", "-pthread", src, "-o", exe]).returncode:
        return None
    r = subprocess.run([exe, str(threads)], capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tokens", type=int, default=4096)
    p.add_argument("--width", type=int, default=256, help="D")
    p.add_argument("--experts", default="8,64")
    p.add_argument("--k", default="1,2")
    p.add_argument("--hidden", default="128,512", help="h, each expert's hidden width")
    p.add_argument("--routing", default="token,expert")
    p.add_argument("--skew", default="uniform,skewed")
    p.add_argument("--torch-forms", default="argsort,masked", help="'' for none")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--json", default=None)
    p.add_argument("--plot", default=None, help="also draw the table (plot_moe.py) to this PNG")
    p.add_argument("--gpu", action="store_true",
                   help="also the CUDA step's roofline prediction (bf16, H100 SXM and H200) of both layers")
    p.add_argument("--gpu-only", action="store_true", help="only the GPU predictions: nothing is run")
    a = p.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    workdir = tempfile.mkdtemp(prefix="moe_bench_")
    probe = None if a.gpu_only else machine_probe(a.threads, workdir)
    peak = probe["fma_gflops_t"] if probe else float("nan")
    if probe:
        print(f"machine (measured now, {probe['isa']}): FMA peak {peak:.0f} GFLOP/s on {a.threads} "
              f"threads, triad {probe['triad_gbs_t']:.1f} GB/s")
    T, D = a.tokens, a.width
    results = []
    header = (f"{'routing':>7} {'skew':>7} {'E':>3} {'k':>2} {'h':>4} | {'MoE ms':>7} {'dense ms':>8} "
              f"{'R_dense':>7} {'routing':>7} {'arena MoE/dense':>15} | {'torch ms':>8} "
              f"{'speedup':>7} | {'GFLOP/s':>7} {'of peak':>7}")
    if a.gpu_only:
        print(f"T = {T} tokens, D = {D}: the CUDA steps' roofline predictions only")
    else:
        print(f"T = {T} tokens, D = {D}, f32, {a.threads} threads, forward + backward + AdamW; "
              f"median of {a.rounds} rounds x {a.steps} steps")
        print(header)
    dense_cache = {}
    for routing in a.routing.split(","):
        for skew in a.skew.split(","):
            for E in map(int, a.experts.split(",")):
                for K in map(int, a.k.split(",")):
                    for H in map(int, a.hidden.split(",")):
                        skewed = skew == "skewed"
                        tag = f"{routing}_{skew}_E{E}_k{K}_h{H}"
                        moe_bin = os.path.join(workdir, "moe_" + tag)
                        moe_text = moe_model(T, D, E, H, K, routing, skewed)
                        dense_bin = os.path.join(workdir, f"dense_{K * H}")
                        if a.gpu or a.gpu_only:
                            open(moe_bin + ".mlir", "w").write(moe_text)
                            open(dense_bin + ".mlir", "w").write(dense_model(T, D, K * H))
                            gm, gd = gpu_prediction(moe_bin + ".mlir"), gpu_prediction(dense_bin + ".mlir")
                            gpu_row = {"moe": gm, "dense": gd,
                                       "r_dense_h100": gm["h100_ms"] / gd["h100_ms"],
                                       "r_dense_h200": gm["h200_ms"] / gd["h200_ms"]}
                            print(f"  GPU (predicted, bf16) {routing} {skew} E={E} k={K} h={H}: H100 SXM "
                                  f"MoE {gm['h100_ms']:.3f} / dense {gd['h100_ms']:.3f} ms = "
                                  f"{gpu_row['r_dense_h100']:.2f}; H200 {gm['h200_ms']:.3f} / "
                                  f"{gd['h200_ms']:.3f} ms = {gpu_row['r_dense_h200']:.2f} "
                                  f"(launches {gm['launches']} / {gd['launches']}, memory-bound "
                                  f"{gm['memory_ms']:.3f} / {gd['memory_ms']:.3f} ms on H100)", flush=True)
                            if a.gpu_only:
                                results.append({"routing": routing, "skew": skew, "E": E, "k": K,
                                                "h": H, "gpu": gpu_row})
                                continue
                        moe_arena = compile_model(moe_text, moe_bin)
                        if (K * H) not in dense_cache:
                            dense_cache[K * H] = (dense_bin, compile_model(dense_model(T, D, K * H), dense_bin))
                        dense_bin, dense_arena = dense_cache[K * H]
                        forms = [f for f in a.torch_forms.split(",") if f] if routing == "token" else []
                        ms = {"moe": [], "dense": []}
                        ms.update({f: [] for f in forms})
                        for _ in range(a.rounds):
                            ms["dense"] += run_stepc(dense_bin, a.steps, a.warmup, a.threads, env)
                            ms["moe"] += run_stepc(moe_bin, a.steps, a.warmup, a.threads, env)
                            for f in forms:
                                ms[f] += run_torch(f, T, D, E, H, K, skewed, a.steps, a.warmup,
                                                   a.threads, env, workdir)
                        med = {s: statistics.median(v) for s, v in ms.items()}
                        share = routing_share(moe_bin, a.threads, T, E, env)
                        torch_best = min((med[f] for f in forms), default=float("nan"))
                        flops = 3 * 2 * 2 * T * D * K * H  # two GEMMs, forward + two backward
                        # Skewed routing drops most choices, and the GEMMs leave the empty slots
                        # out (runtime/hal/cpu/Gemm.cpp): T * k tokens' FLOPs over the time would
                        # be a rate no GEMM ran at. Only the uniform rows get one.
                        gflops = flops / (med["moe"] * 1e6) if not skewed else float("nan")
                        row = {"routing": routing, "skew": skew, "E": E, "k": K, "h": H,
                               "moe_ms": med["moe"], "dense_ms": med["dense"],
                               "r_dense": med["moe"] / med["dense"], "routing_share": share,
                               "arena_moe_mib": moe_arena, "arena_dense_mib": dense_arena,
                               "torch_ms": {f: med[f] for f in forms}, "torch_best_ms": torch_best,
                               "speedup_vs_torch": torch_best / med["moe"], "gflops": gflops,
                               "peak_gflops": peak}
                        if a.gpu:
                            row["gpu"] = gpu_row
                        results.append(row)
                        print(f"{routing:>7} {skew:>7} {E:>3} {K:>2} {H:>4} | {med['moe']:7.1f} "
                              f"{med['dense']:8.1f} {row['r_dense']:7.2f} {share:7.1%} "
                              f"{moe_arena:6.1f}/{dense_arena:<6.1f}MiB | {torch_best:8.1f} "
                              f"{row['speedup_vs_torch']:6.2f}x | {gflops:7.1f} {gflops / peak:7.1%}",
                              flush=True)
    path = a.json or (os.path.join(workdir, "results.json") if a.plot else None)
    if path:
        json.dump({"machine": probe, "results": results}, open(path, "w"), indent=1)
    if a.plot:
        subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                         "plot_moe.py"), path, "-o", a.plot], check=True)


if __name__ == "__main__":
    main()
