#!/usr/bin/python3
"""stepc vs PyTorch on the CPU: the same model, batch and thread count, measured in one run.

For each model (models/byte_lm_residual.mlir --config=small, models/byte_lm_residual.mlir) and recipe (plain:
AdamW and its schedule, SAM and clipping off on both sides; model: the model's step.config,
adaptive SAM + AGC + AdamW) this runs, each in its own subprocess so that peak RSS is per side:
  * PyTorch, the model as a PyTorch user writes it, in the natural forms (a user picks the
    fastest, so the headline is against the fastest: "PyTorch best"):
      eager_cl_matmul  -- channels-last [B, S, C] with `h @ W` on 3-D tensors;
      eager_cl_linear  -- channels-last with F.linear and nn.Linear's [out, in] weights;
      eager_cf_conv1d  -- channels-first [B, C, S], every projection an F.conv1d (HomebrewNLP's);
      traced_*         -- the last two with the forward+loss through torch.jit.trace;
  * stepc -- `stepc compile` (timed separately), then `NAME train --steps ...`.
It prints the median ms/step (after warm-up steps), tokens/s, raw peak RSS of each process, and
the ratios stepc vs each side and vs PyTorch best (speedup = torch_ms / stepc_ms, memory =
stepc / torch).

Run through benchmarks/run_cpu_benchmark.sh, which fixes the environment for both sides.
"""
import argparse
import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPC = os.path.join(REPO, "bazel-bin", "compiler", "Driver", "stepc")
MODELS = {
    # name -> stepc's model arguments: the file and the configuration (models are written once)
    "byte_lm_residual_small": [os.path.join(REPO, "models", "byte_lm_residual.mlir"), "--config=small"],
    "byte_lm_residual": [os.path.join(REPO, "models", "byte_lm_residual.mlir")],
}


def model_args(model, depth=None):
    """stepc's arguments for `model`, at `depth` layers when given (--depths)."""
    return MODELS[model] + ([f"--dim=depth={depth}"] if depth else [])


# --------------------------------------------------------------------------------------------
# Reading the model's dims and config from stepc's `model` stage (so the PyTorch side follows
# the file, its configuration applied).
# --------------------------------------------------------------------------------------------
def parse_model(model_args):
    text = subprocess.run([STEPC, "compile", *model_args, "--emit=model"], check=True,
                          capture_output=True, text=True).stdout
    path = " ".join(model_args)
    m = re.search(r"step\.model\s+@(\w+)\s+dims\(([^)]*)\)", text)
    if not m:
        raise SystemExit(f"{path}: no step.model ... dims(...) header")
    dims = {k.strip(): int(v) for k, v in (kv.split("=") for kv in m.group(2).split(","))}

    def spec(kind):
        s = re.search(kind + r"\s*=\s*(\w+)\(([^)]*)\)", text)
        if not s:
            return None, {}
        args = {}
        for kv in s.group(2).split(","):
            if "=" in kv:
                k, v = kv.split("=")
                v = v.strip()
                args[k.strip()] = (v == "true") if v in ("true", "false") else float(v)
        return s.group(1), args

    cfg = {}
    for kind in ("optimizer", "schedule", "clip", "sam"):
        cfg[kind] = spec(kind)
    # Sanity: the benchmark's PyTorch model is written for this cell; refuse silently-different files.
    for op in ("step.cumsum", "step.conv1d", "step.cross_entropy", "step.embedding"):
        if op not in text:
            raise SystemExit(f"{path}: expected {op}; the PyTorch model no longer matches")
    return m.group(1), dims, cfg


# --------------------------------------------------------------------------------------------
# The PyTorch side (imported lazily: the parent process never loads torch).
# --------------------------------------------------------------------------------------------
def torch_worker(args):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    name, d, cfg = parse_model(model_args(args.model, args.depth))
    B, S, Fd, I, K, depth = d["B"], d["S"], d["F"], d["I"], d["K"], d["depth"]
    V = 256

    def orthogonal(shape, gain):
        # Orthogonal over [prod(all axes but the last), last], as a matrix.
        w = torch.empty(math.prod(shape[:-1]), shape[-1])
        nn.init.orthogonal_(w, gain=gain)
        return nn.Parameter(w.reshape(shape))

    def triple_norm(a, b, c, dim):
        t = torch.relu(a).pow(3) * b + c
        z = t - t.mean(dim=dim, keepdim=True)
        return z * torch.rsqrt((z * z).mean(dim=dim, keepdim=True))

    class ByteLM(nn.Module):
        """Channels-last [B, S, C], the layout of the .mlir. `form` cl_matmul: h @ W on 3-D
        tensors (PyTorch 1.13's backward turns these into bmm); cl_linear: F.linear with
        nn.Linear's [out, in] weights (2-D GEMMs both ways)."""

        def __init__(self, linear):
            super().__init__()
            self.linear = linear
            t = (lambda shape: shape[::-1]) if linear else (lambda shape: shape)
            mk = (lambda shape, gain: nn.Parameter(orthogonal(shape, gain).detach().t().contiguous())
                  if linear else orthogonal(shape, gain))
            self.embedding = orthogonal([V, Fd], 0.70710678)
            self.w0 = nn.ParameterList([mk([Fd, 3 * I], 1.6967316) for _ in range(depth)])
            self.w1 = nn.ParameterList([orthogonal([K, I, 3 * I], 1.6967316) for _ in range(depth)])
            self.w2 = nn.ParameterList([mk([I, Fd], 1.0) for _ in range(depth)])
            self.head = nn.Parameter(torch.zeros(*t([Fd, V])))
            self.register_buffer("pos", torch.arange(1, S + 1, dtype=torch.float32).view(1, S, 1))

        def dense(self, x, w):
            return F.linear(x, w) if self.linear else x @ w

        def forward(self, tokens, targets):
            h = F.embedding(tokens, self.embedding)                          # [B, S, F]
            for l in range(depth):
                p = self.dense(h, self.w0[l])                                # [B, S, 3I]
                dep, scale, shift = p.chunk(3, dim=-1)
                mean = dep.cumsum(dim=1) / self.pos                          # causal running mean
                n1 = triple_norm(mean, scale, shift, -1)                     # [B, S, I]
                # causal conv, weight [K, I, 3I]: y[t] = sum_k x[t-K+1+k] W[k]
                xc = F.pad(n1.transpose(1, 2), (K - 1, 0))                   # [B, I, S+K-1]
                conv = F.conv1d(xc, self.w1[l].permute(2, 1, 0)).transpose(1, 2)  # [B, S, 3I]
                a2, b2, c2 = conv.chunk(3, dim=-1)
                n2 = triple_norm(a2, b2, c2, -1)
                h = h + self.dense(n2, self.w2[l])
            logits = self.dense(h, self.head)
            return F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1).long())

    class ByteLMChannelsFirst(nn.Module):
        """Channels-first [B, C, S] as HomebrewNLP writes it: every projection an F.conv1d
        (1x1 for the dense ones, K with left padding K - 1 for the causal one), weights in
        conv1d's [out, in, k] layout, the head a 1x1 conv and cross-entropy over [B, V, S]."""

        def __init__(self):
            super().__init__()
            conv = lambda out, inp, k, gain: nn.Parameter(  # noqa: E731
                orthogonal([k * inp, out], gain).detach().t().reshape(out, k, inp).transpose(1, 2)
                .contiguous())
            self.embedding = orthogonal([V, Fd], 0.70710678)
            self.w0 = nn.ParameterList([conv(3 * I, Fd, 1, 1.6967316) for _ in range(depth)])
            self.w1 = nn.ParameterList([conv(3 * I, I, K, 1.6967316) for _ in range(depth)])
            self.w2 = nn.ParameterList([conv(Fd, I, 1, 1.0) for _ in range(depth)])
            self.head = nn.Parameter(torch.zeros(V, Fd, 1))
            self.register_buffer("pos", torch.arange(1, S + 1, dtype=torch.float32).view(1, 1, S))

        def forward(self, tokens, targets):
            h = F.embedding(tokens, self.embedding).transpose(1, 2)          # [B, F, S]
            for l in range(depth):
                p = F.conv1d(h, self.w0[l])                                  # [B, 3I, S]
                dep, scale, shift = p.chunk(3, dim=1)
                n1 = triple_norm(dep.cumsum(dim=2) / self.pos, scale, shift, 1)
                conv = F.conv1d(F.pad(n1, (K - 1, 0)), self.w1[l])           # causal: [B, 3I, S]
                a2, b2, c2 = conv.chunk(3, dim=1)
                h = h + F.conv1d(triple_norm(a2, b2, c2, 1), self.w2[l])
            return F.cross_entropy(F.conv1d(h, self.head), targets.long())   # logits [B, V, S]

    model = ByteLMChannelsFirst() if args.form == "cf_conv1d" else ByteLM(args.form == "cl_linear")
    params = list(model.parameters())
    nparams = sum(p.numel() for p in params)
    # AGC per output unit, as stepc's (every axis but the last of its [.., in, out] layout): the
    # embedding's and stepc-layout weights' all axes but the last; [out, in(, k)] weights' all
    # axes but the first.
    def agc_axes_of(name, p):
        if name == "embedding" or p.dim() == 1:
            return tuple(range(p.dim() - 1)) if p.dim() > 1 else (0,)
        out_first = args.form == "cf_conv1d" or (args.form == "cl_linear" and not name.startswith("w1"))
        return tuple(range(1, p.dim())) if out_first else tuple(range(p.dim() - 1))
    agc_axes = [agc_axes_of(n, p) for n, p in model.named_parameters()]

    tokens_all = torch.randint(0, V, (B, S + 1), dtype=torch.int32)
    tokens, targets = tokens_all[:, :S].contiguous(), tokens_all[:, 1:].contiguous()

    loss_fn = model
    if args.mode == "traced":
        loss_fn = torch.jit.trace(model, (tokens, targets), check_trace=False)

    opt_kind, o = cfg["optimizer"]
    if opt_kind != "adamw":
        raise SystemExit(f"optimizer {opt_kind}: only adamw is implemented on the PyTorch side")
    optimizer = torch.optim.AdamW(params, lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"],
                                  weight_decay=o["weight_decay"], foreach=True)
    sched_kind, sc = cfg["schedule"]
    clip_kind, cl = cfg["clip"]
    sam_kind, sm = cfg["sam"]
    sam_rho = sm.get("rho", 0.0) if sam_kind else 0.0
    if args.recipe == "plain":  # AdamW and the schedule only, as stepc --sam-rho=0 --clip=none
        sam_rho, clip_kind = 0.0, None
    if sm.get("next_batch"):
        raise SystemExit("SAM next_batch is not implemented on the PyTorch side")

    def lr_at(t):  # compiler/Training/Schedule.cpp
        lr = o["lr"]
        if sched_kind in (None, "constant"):
            return lr
        W, T = sc["warmup"], sc["total"]
        floor = sc["final_lr"] if sched_kind == "one_cycle" else sc["min_lr"]
        if t < W:
            return (sc["start_lr"] + (lr - sc["start_lr"]) * t / max(W, 1.0)
                    if sched_kind == "one_cycle" else lr * (t + 1) / max(W, 1.0))
        prog = min((t - W) / max(1.0, T - W), 1.0)
        return floor + (lr - floor) * (1 + math.cos(math.pi * prog)) / 2

    def grads_of(ps):
        loss = loss_fn(tokens, targets)
        gs = torch.autograd.grad(loss, ps)
        return loss, list(gs)

    def train_step(t):
        loss, g = grads_of(params)
        sam_loss = None
        if sam_rho > 0:
            with torch.no_grad():
                # Adaptive SAM: eps = rho * w^2 g / ||w g||  (BuildTrainStep.cpp samPerturbation)
                if sm.get("adaptive"):
                    scaled = torch._foreach_mul(params, g)
                    dirs = torch._foreach_mul(scaled, params)
                else:
                    scaled, dirs = g, g
                norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(scaled)))
                factor = sam_rho / (norm + 1e-12)
                eps = torch._foreach_mul(dirs, factor)
                torch._foreach_add_(params, eps)
            sam_loss, g = grads_of(params)
            with torch.no_grad():
                torch._foreach_sub_(params, eps)
        with torch.no_grad():
            grad_norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(g)))
            if clip_kind == "agc":
                for p, gr, ax in zip(params, g, agc_axes):
                    pn = (p.norm(dim=ax, keepdim=True) if ax else p.abs()).clamp_min(cl["eps_param"])
                    gn = (gr.norm(dim=ax, keepdim=True) if ax else gr.abs()).clamp_min(cl["eps_grad"])
                    gr.mul_(torch.clamp(cl["lambda"] * pn / gn, max=1.0))
            elif clip_kind == "global_norm":
                coef = min(cl["max_norm"] / (float(grad_norm) + 1e-6), 1.0)
                torch._foreach_mul_(g, coef)
            for p, gr in zip(params, g):
                p.grad = gr
        for group in optimizer.param_groups:
            group["lr"] = lr_at(t)
        optimizer.step()
        return float(loss), float(grad_norm), (float(sam_loss) if sam_loss is not None else None)

    times, losses = [], []
    for t in range(args.warmup + args.steps):
        t0 = time.perf_counter()
        loss, gn, sl = train_step(t)
        ms = (time.perf_counter() - t0) * 1e3
        losses.append(loss)
        if t >= args.warmup:
            times.append(ms)
        print(f"  [{args.mode}] step {t} {ms:.1f} ms loss {loss:.4f} grad_norm {gn:.4g}"
              + (f" sam_loss {sl:.4f}" if sl is not None else ""), file=sys.stderr, flush=True)
    print(json.dumps({"params": nparams, "step_ms": times, "losses": losses,
                      "B": B, "S": S, "torch": torch.__version__,
                      "torch_threads": torch.get_num_threads()}))


# --------------------------------------------------------------------------------------------
# The parent: subprocesses, peak RSS, table.
# --------------------------------------------------------------------------------------------
def run_measured(cmd, timeout, env=None, stdout=subprocess.PIPE):
    """Runs cmd; returns (rc, stdout text, wall s, peak RSS MiB of that process, timed_out)."""
    t0 = time.perf_counter()
    out_f = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(cmd, stdout=out_f if stdout == subprocess.PIPE else stdout, env=env,
                            start_new_session=True)
    timed_out = False
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if timeout and time.perf_counter() - t0 > timeout:
            timed_out = True
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                pid, status, ru = os.wait4(proc.pid, 0)
            except ChildProcessError:
                ru = None
            break
        time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    out_f.seek(0)
    text = out_f.read()
    rss_mib = ru.ru_maxrss / 1024.0 if ru else float("nan")  # ru_maxrss is in KiB on Linux
    return proc.returncode, text, wall, rss_mib, timed_out


def side_env(a):
    """The environment of both sides' measured processes: same thread count, no OpenBLAS overrides."""
    env = dict(os.environ)
    for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        env.pop(k, None)
    env["OMP_NUM_THREADS"] = env["OPENBLAS_NUM_THREADS"] = str(a.threads)
    return env


def machine_probe(threads, workdir):
    """The measured FMA peak and triad bandwidth (machine_probe.cpp), or None if it cannot run."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "machine_probe.cpp")
    exe = os.path.join(workdir, "machine_probe")
    if subprocess.run(["g++", "-O2", "-std=c++17", "-pthread", src, "-o", exe]).returncode != 0:
        return None
    r = subprocess.run([exe, str(threads)], capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else None


def stepc_info_flops(binary):
    out = subprocess.run([binary, "info"], capture_output=True, text=True).stdout
    m = re.search(r"^FLOPs per step\s+(\d+)", out, re.M)
    return int(m.group(1)) if m else None


def stepc_profile(binary, a):
    """stepc's kernel profile (STEPC_PROFILE) of one step after the warm-up (a run of its own:
    the profile's clock calls are not in the measured steps): the share of the step in library
    GEMMs, their GFLOP/s in all, and each other kernel's time and GB/s (None where the
    compiler did not estimate its bytes)."""
    env = side_env(a)
    env["STEPC_PROFILE"] = "1"
    r = subprocess.run([binary, "train", "--steps", "2", "--threads", str(a.threads), "--seed",
                        str(a.seed)], capture_output=True, text=True, env=env)
    gemm_ms = total = gemm_gflop = 0.0
    other = []
    for line in r.stderr.splitlines():
        m = re.match(r"^\s*([\d.]+)\s+\d+\s+[\d.]+%\s+(.*)$", line)
        if not m:
            continue
        ms, name = float(m.group(1)), m.group(2)
        total += ms
        rate = re.search(r"\(([\d.]+) (GFLOP|GB)/s\)\s*$", name)
        if name.startswith("gemm"):
            gemm_ms += ms
            if rate and rate.group(2) == "GFLOP":
                gemm_gflop += float(rate.group(1)) * ms / 1e3
        else:
            other.append((ms, float(rate.group(1)) if rate and rate.group(2) == "GB" else None))
    if total <= 0:
        return None
    return {"gemm_share": gemm_ms / total, "gemm_ms": gemm_ms,
            "gemm_gflops": gemm_gflop / (gemm_ms / 1e3) if gemm_ms > 0 else None,
            "other": other}


def stepc_info_params(binary):
    out = subprocess.run([binary, "info"], capture_output=True, text=True).stdout
    m = re.search(r"^parameters\s+(\d+)", out, re.M)
    return int(m.group(1)) if m else None


# The PyTorch sides: how a PyTorch user might write the model (ByteLM's forms), eager or with the
# forward and loss through torch.jit.trace. "PyTorch best" is the fastest of those run.
TORCH_SIDES = {
    "eager_cl_matmul": ("eager", "cl_matmul"),
    "eager_cl_linear": ("eager", "cl_linear"),
    "eager_cf_conv1d": ("eager", "cf_conv1d"),
    "traced_cl_linear": ("traced", "cl_linear"),
    "traced_cf_conv1d": ("traced", "cf_conv1d"),
}
# stepc's training flags per recipe: the model's own step.config, or AdamW and its schedule only.
RECIPES = {"model": [], "plain": ["--sam-rho=0", "--clip=none"]}
# stepc's sides: the compiler's defaults, and (stepc_direct) every convolution as direct GEMMs
# over its window instead of Winograd's F(4, K) (what --conv-algorithm=auto picks for wide ones).
STEPC_SIDES = {"stepc": [], "stepc_direct": ["--conv-algorithm=direct"]}


def bench_torch(model, side, a, depth=None, recipe="model"):
    mode, form = TORCH_SIDES[side]
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", mode, "--form", form,
           "--recipe", recipe, "--model", model,
           "--threads", str(a.threads), "--steps", str(a.steps), "--warmup", str(a.warmup),
           "--seed", str(a.seed)] + (["--depth", str(depth)] if depth else [])
    rc, out, wall, rss, to = run_measured(cmd, a.torch_timeout, env=side_env(a))
    if rc != 0 or to:
        return {"error": f"rc={rc} timed_out={to}", "rss": rss}
    r = json.loads(out.strip().splitlines()[-1])
    r["ms"] = statistics.median(r["step_ms"])
    r["rss"] = rss
    return r


def bench_stepc(model, a, workdir, depth=None, recipe="model", side="stepc"):
    res = {}
    binary = os.path.join(workdir, model + (f"_depth{depth}" if depth else "") + "_" + recipe +
                          side[len("stepc"):])
    for attempt in range(30):  # the compiler binary may be mid-rebuild
        if os.access(STEPC, os.X_OK):
            break
        time.sleep(10)
    rc, out, wall, rss, to = run_measured([STEPC, "compile", *model_args(model, depth),
                                           *RECIPES[recipe], *STEPC_SIDES[side], "-o", binary],
                                          a.compile_timeout)
    res["compile_s"], res["compile_rss"] = wall, rss
    if rc != 0 or to:
        res["error"] = f"compile failed rc={rc} timed_out={to}: {out[-500:]}"
        return res
    res["params"] = stepc_info_params(binary)
    res["flops"] = stepc_info_flops(binary)
    metrics = binary + ".metrics.jsonl"
    if os.path.exists(metrics):
        os.remove(metrics)
    total = a.warmup + a.steps
    rc, out, wall, rss, to = run_measured(
        [binary, "train", "--steps", str(total), "--threads", str(a.threads), "--seed", str(a.seed),
         "--metrics", metrics], a.stepc_timeout, env=side_env(a))
    res["rss"], res["timed_out"], res["rc"], res["wall_s"] = rss, to, rc, wall
    rows = []
    if os.path.exists(metrics):
        for line in open(metrics):
            line = line.strip()
            if line:
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
    res["steps_done"] = len(rows)
    res["losses"] = [r.get("loss") for r in rows]
    all_ms = [r["step_ms"] for r in rows if "step_ms" in r]
    measured = all_ms[a.warmup:] if len(all_ms) > a.warmup else all_ms[-1:]
    res["step_ms"] = measured
    res["ms"] = statistics.median(measured) if measured else float("nan")
    if rc != 0 and not to:
        res["error"] = f"train rc={rc}: {out[-500:]}"
    elif not to:
        prof = stepc_profile(binary, a)
        if prof:
            res["gemm_share"] = prof["gemm_share"]
            res["profile"] = prof
    return res


def ensure_deps(need_torch):
    import importlib.util
    missing = []
    if need_torch and importlib.util.find_spec("torch") is None:
        missing.append("python3-torch")
    if subprocess.run(["dpkg", "-s", "libopenblas0-pthread"], capture_output=True).returncode != 0:
        missing.append("libopenblas0-pthread")
    if not missing:
        return
    cmd = ["apt-get", "install", "-y"] + missing
    if os.geteuid() == 0:
        print("installing: " + " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
    else:
        raise SystemExit("missing packages; run: sudo " + " ".join(cmd))


def fmt(v, spec=".1f"):
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="both", choices=["byte_lm_residual_small", "byte_lm_residual", "both"])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=5, help="measured steps per side (after warm-up)")
    p.add_argument("--warmup", type=int, default=1, help="steps run first and not measured")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rounds", type=int, default=1,
                   help="run every side this many times, alternating; the median is over all "
                        "rounds' measured steps")
    p.add_argument("--sides", default="torch,stepc",
                   help="comma list of stepc, torch (every PyTorch side) or PyTorch sides: "
                        + ", ".join(TORCH_SIDES))
    p.add_argument("--recipes", default="plain,model",
                   help="comma list: plain (AdamW and its schedule; SAM and clipping off on both "
                        "sides), model (the model's step.config: adaptive SAM, AGC)")
    p.add_argument("--stepc-timeout", type=float, default=900, help="seconds for one stepc train run")
    p.add_argument("--compile-timeout", type=float, default=900, help="seconds for one stepc compile")
    p.add_argument("--torch-timeout", type=float, default=1800, help="seconds for one PyTorch run")
    p.add_argument("--workdir", default=None, help="where compiled binaries and metrics go")
    p.add_argument("--json", default=None, help="also write all results to this file")
    p.add_argument("--plot", default=None, help="also render the table as an image (plot_benchmark.py)")
    p.add_argument("--depths", default=None,
                   help="comma list of layer counts: run each model at each depth (step time and "
                        "memory vs depth; --plot draws them as lines)")
    p.add_argument("--worker", choices=["eager", "traced"], help=argparse.SUPPRESS)
    p.add_argument("--form", choices=["cl_matmul", "cl_linear", "cf_conv1d"], default="cl_matmul",
                   help=argparse.SUPPRESS)
    p.add_argument("--recipe", choices=sorted(RECIPES), default="model", help=argparse.SUPPRESS)
    p.add_argument("--depth", type=int, default=None, help=argparse.SUPPRESS)
    a = p.parse_args()

    if a.worker:
        a.mode = a.worker
        return torch_worker(a)

    sides = []
    for s in (s.strip() for s in a.sides.split(",") if s.strip()):
        sides += list(TORCH_SIDES) if s == "torch" else [s]
    for s in sides:
        if s not in STEPC_SIDES and s not in TORCH_SIDES:
            raise SystemExit(f"--sides: unknown side '{s}'")
    recipes = [r.strip() for r in a.recipes.split(",") if r.strip()]
    for r in recipes:
        if r not in RECIPES:
            raise SystemExit(f"--recipes: unknown recipe '{r}' (expected plain or model)")
    ensure_deps(need_torch=any(s in TORCH_SIDES for s in sides))
    models = ["byte_lm_residual_small", "byte_lm_residual"] if a.model == "both" else [a.model]
    workdir = a.workdir or tempfile.mkdtemp(prefix="stepc_bench_")
    os.makedirs(workdir, exist_ok=True)
    print(f"threads={a.threads} steps={a.steps} warmup={a.warmup} workdir={workdir}")
    print("env: OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s OMP_NUM_THREADS=%s OPENBLAS_NUM_THREADS=%s" % tuple(
        os.environ.get(k, "<unset>") for k in
        ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")))
    probe = machine_probe(a.threads, workdir)
    if probe:
        print(f"machine (measured now, {probe['isa']}): FMA peak {probe['fma_gflops_1']:.0f} GFLOP/s on "
              f"1 thread, {probe['fma_gflops_t']:.0f} on {probe['threads']}; triad "
              f"{probe['triad_gbs_1']:.1f} GB/s on 1 thread, {probe['triad_gbs_t']:.1f} on "
              f"{probe['threads']}")
    all_results = {"machine": probe} if probe else {}
    depths = [int(x) for x in a.depths.split(",")] if a.depths else [None]
    for recipe, model, depth in ((rc, m, dp) for rc in recipes for m in models for dp in depths):
        name, d, _ = parse_model(model_args(model, depth))
        tokens = d["B"] * d["S"]
        r = {}
        key = f"{model} [{recipe}]" + (f"@depth={depth}" if depth else "")
        # Alternating: the sides run one after another, stepc in the middle of the PyTorch ones.
        order = [s for s in sides if s not in STEPC_SIDES]
        for s in (s for s in sides if s in STEPC_SIDES):
            order.insert(len(order) // 2, s)
        for round_ in range(a.rounds):
            for side in order:
                print(f"--- {key}: {side}" + (f" (round {round_ + 1})" if a.rounds > 1 else ""),
                      flush=True)
                one = (bench_stepc(model, a, workdir, depth, recipe, side) if side in STEPC_SIDES
                       else bench_torch(model, side, a, depth, recipe))
                if "error" in one:
                    print(f"    {side}: {one['error']}")
                if side not in r or "error" in one:
                    r[side] = one
                elif "error" not in r[side]:  # pool the rounds' steps; the largest peak RSS
                    r[side]["step_ms"] = r[side].get("step_ms", []) + one.get("step_ms", [])
                    r[side]["ms"] = statistics.median(r[side]["step_ms"])
                    r[side]["rss"] = max(r[side]["rss"], one["rss"])
        all_results[key] = r

        print(f"\n=== {model}  B={d['B']} S={d['S']} F={d['F']} I={d['I']} K={d['K']} "
              f"depth={d['depth']}  threads={a.threads}  recipe={recipe} "
              + ("(AdamW only: SAM and clipping off on both sides)" if recipe == "plain"
                 else "(the model's step.config: adaptive SAM, AGC, AdamW)"))
        pc = {s: r[s].get("params") for s in r}
        print("parameters: " + ", ".join(f"{s}={v}" for s, v in pc.items()))
        vals = [v for v in pc.values() if v is not None]
        if vals and len(set(vals)) != 1:
            print("WARNING: parameter counts differ between sides")
        if "stepc" in r and "compile_s" in r["stepc"]:
            st = r["stepc"]
            print(f"stepc compile: {st['compile_s']:.1f} s (peak RSS {st['compile_rss']:.0f} MiB); "
                  f"train steps done {st.get('steps_done', 0)}"
                  + (" (TIMED OUT)" if st.get("timed_out") else ""))
        for s in r:
            if r[s].get("losses"):
                print(f"losses {s}: " + " ".join(fmt(x, ".4f") for x in r[s]["losses"][:8]))
        print(f"{'side':<8} {'ms/step':>10} {'tokens/s':>10} {'peakRSS MiB':>12} {'n':>3}")
        for s in r:
            ms = r[s].get("ms")
            tps = tokens / ms * 1e3 if ms and not math.isnan(ms) else None
            print(f"{s:<8} {fmt(ms):>10} {fmt(tps, '.0f'):>10} {fmt(r[s].get('rss'), '.0f'):>12} "
                  f"{len(r[s].get('step_ms', [])):>3}")
        flops = r.get("stepc", {}).get("flops")
        if flops:
            for s in r:
                ms = r[s].get("ms")
                if ms and not math.isnan(ms):
                    rate = flops / (ms / 1e3) / 1e9
                    peak = f" = {100 * rate / probe['fma_gflops_t']:.0f}% of the measured " \
                           f"{probe['threads']}-thread FMA peak" if probe else ""
                    print(f"achieved {s:<6}: {rate:.1f} GFLOP/s of model FLOPs{peak}"
                          + (" (model FLOPs count each convolution directly; Winograd does "
                             "fewer)" if s == "stepc" else ""))
        if r.get("stepc", {}).get("gemm_share") is not None:
            print(f"stepc step in GEMMs: {100 * r['stepc']['gemm_share']:.0f}% (STEPC_PROFILE), "
                  f"{100 - 100 * r['stepc']['gemm_share']:.0f}% in the other kernels")
        prof = r.get("stepc", {}).get("profile")
        if prof and probe:
            # Issue 14's two rates: GEMMs against the FMA peak, the other kernels against the
            # triad (their share of time in kernels at >= 70% of it; a kernel whose data stays
            # in cache can exceed the triad).
            if prof.get("gemm_gflops"):
                print(f"stepc GEMMs: {prof['gemm_gflops']:.0f} GFLOP/s in all = "
                      f"{100 * prof['gemm_gflops'] / probe['fma_gflops_t']:.0f}% of the "
                      f"{probe['threads']}-thread FMA peak")
            rated = [(ms, gbs) for ms, gbs in prof["other"] if gbs is not None]
            rated_ms = sum(ms for ms, _ in rated)
            if rated_ms > 0:
                line = 0.7 * probe["triad_gbs_t"]
                fast = sum(ms for ms, gbs in rated if gbs >= line)
                print(f"stepc other kernels: {100 * fast / rated_ms:.0f}% of their time in kernels "
                      f"at >= 70% of the {probe['threads']}-thread triad ({line:.1f} of "
                      f"{probe['triad_gbs_t']:.1f} GB/s; {rated_ms:.1f} ms a step with a byte "
                      f"estimate)")
        if "stepc" in r:
            st = r["stepc"]
            timed = [s for s in r if s in TORCH_SIDES and r[s].get("ms") and not math.isnan(r[s]["ms"])]
            other = r.get("stepc_direct", {})
            if other.get("ms") and st.get("ms") and not math.isnan(other["ms"]):
                print(f"stepc vs stepc_direct (convolutions as direct GEMMs): speedup "
                      f"{other['ms'] / st['ms']:.2f}x")
            if timed and st.get("ms") and not math.isnan(st["ms"]):
                for s in timed:
                    print(f"stepc vs {s:<17}: speedup {r[s]['ms'] / st['ms']:.2f}x   "
                          f"memory {st['rss'] / r[s]['rss']:.2f}x")
                best = min(timed, key=lambda s: r[s]["ms"])
                lean = min(r[s]["rss"] for s in timed)
                print(f"stepc vs PyTorch best ({best}): speedup {r[best]['ms'] / st['ms']:.2f}x; "
                      f"memory {st['rss'] / lean:.2f}x the leanest PyTorch side's peak RSS")
        print(flush=True)
    if a.json or a.plot:
        path = a.json or os.path.join(workdir, "results.json")
        with open(path, "w") as f:
            json.dump(all_results, f, indent=1)
        if a.plot:
            import subprocess
            subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                         "plot_benchmark.py"), path, "-o", a.plot],
                           check=False)


if __name__ == "__main__":
    sys.exit(main())
