#!/usr/bin/python3
"""PyTorch parity for tiny GPT-2 with mixture-of-experts MLPs, trained with SAM.

An independent PyTorch model, written from the architecture (gpt2_parity.py's GPT-2 with each
MLP replaced by E = 4 experts of the MLP's shape, top-2 token choice) the way a PyTorch user
writes an MoE (GShard's formulation): the position of each choice in its expert's buffer is a
cumulative sum of one-hot assignments in priority order (all first choices in token order,
then all second choices), choices at or past the capacity ceil(1.25 * N * 2 / E) are dropped,
dispatch is an index_put into [E, Cap, C], the experts are einsums, combine is an advanced-
indexing gather weighted by the renormalised top-2 gates. Auxiliary losses: Switch load
balancing 0.01 * E * sum(f * P) and the router z-loss 0.001 * mean(logsumexp^2), per layer.
The router's input is jittered (Switch's eps = 0.01) by the factors step.jitter documents,
drawn here with the Philox of parity_common.py: a wrong stream or counter fails the check.

The recipe: gpt2_moe's AdamW, warmup-cosine and global-norm clipping, with SAM
(--sam-rho=0.05 on the stepc side): eps = rho g / ||g||, the second gradient taken at w + eps
on the same batch. The perturbed pass routes again: its routing is computed from the
perturbed weights, as stepc's second forward does (the router is part of the model; nothing
of the first pass's routing is reused). Compared as gpt2_parity.py compares, sam_loss included;
stepc's exported gradients are SAM's second pass's.
"""
import math, os, sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parity_common import adamw_update, batch, check, initial_state, parse_args, philox  # noqa: E402
# GPT-2's attention, LayerNorm, decay set and schedule (same dims and recipe; only the MLP differs).
from gpt2_parity import attention, decays, layer_norm, lr_at  # noqa: E402

B, T, V, C, L, NH, E, K = 2, 16, 64, 32, 2, 4, 4, 2
N = B * T
CAP = min(N, math.ceil(1.25 * N * K / E))
STEPS, SEED, RHO = 10, 7, 0.05
B1, B2, EPS, WD, MAX_NORM = 0.9, 0.95, 1e-8, 0.1, 1.0
SHAPES = {"ln_1.weight": (C,), "ln_1.bias": (C,), "attn.c_attn.weight": (C, 3 * C),
          "attn.c_attn.bias": (3 * C,), "attn.c_proj.weight": (C, C), "attn.c_proj.bias": (C,),
          "ln_2.weight": (C,), "ln_2.bias": (C,), "moe.router.weight": (C, E),
          "moe.c_fc.weight": (E, C, 4 * C), "moe.c_fc.bias": (E, 1, 4 * C),
          "moe.c_proj.weight": (E, 4 * C, C), "moe.c_proj.bias": (E, 1, C)}

F = torch.nn.functional
ROUTES = []  # each layer's (experts, kept) of the last forward, to report what SAM re-routes
JITTER_EPS, JITTER_SEED = 0.01, 17
_factors = {}


def jitter_factors(counter):
    """The router's input jitter, as step.jitter documents it: element i of the [N, C] input
    times 1 - eps + 2 eps u, u = (Philox(seed, (6 << 56) ^ counter, i) word 0 >> 8) * 2^-24
    (RngPurpose::kJitter = 6). The counter is the step's per layer: step * L + layer."""
    if counter not in _factors:
        stream = (6 << 56) ^ counter
        u = torch.tensor([philox(JITTER_SEED, stream, i)[0] >> 8 for i in range(N * C)],
                         dtype=torch.float64) * 2.0 ** -24
        _factors[counter] = (1 - JITTER_EPS + 2 * JITTER_EPS * u).reshape(N, C)
    return _factors[counter]


def moe(x, q, counter):
    logits = (x * jitter_factors(counter).to(x.dtype)) @ q("moe.router.weight")   # [N, E]
    probs = logits.softmax(-1)
    top, experts = probs.topk(K, dim=-1)                      # [N, K]
    gates = top / top.sum(-1, keepdim=True)
    order = experts.T.reshape(-1)                             # priority: choice-major
    onehot = F.one_hot(order, E)
    position = ((onehot.cumsum(0) - 1) * onehot).sum(-1).reshape(K, N).T   # [N, K]
    kept = position < CAP
    ROUTES.append((experts.clone(), kept.clone()))
    tokens = torch.arange(N).unsqueeze(1).expand(N, K)
    xe = torch.zeros(E, CAP, C, dtype=x.dtype).index_put(
        (experts[kept], position[kept]), x[tokens[kept]])
    h = F.gelu(torch.einsum("ecd,edh->ech", xe, q("moe.c_fc.weight")) + q("moe.c_fc.bias"),
               approximate="tanh")
    ye = torch.einsum("ech,ehd->ecd", h, q("moe.c_proj.weight")) + q("moe.c_proj.bias")
    picked = ye[experts, position.clamp(max=CAP - 1)]          # [N, K, C]
    y = (picked * (gates * kept).unsqueeze(-1)).sum(1)
    f = F.one_hot(experts[:, 0], E).to(x.dtype).mean(0)
    balance = 0.01 * E * (f * probs.mean(0)).sum()
    z = 0.001 * torch.logsumexp(logits, -1).pow(2).mean()
    return y, balance + z


def forward(p, tokens, targets, step):
    pos = torch.arange(T)
    h = p["wte"][tokens] + p["wpe"][pos]
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    aux = 0.0
    for l in range(L):
        q = lambda n: p["h." + n][l]
        h = h + attention(h, q, mask)
        m = layer_norm(h, q("ln_2.weight"), q("ln_2.bias"))
        y, layer_aux = moe(m.reshape(N, C), q, step * L + l)
        h = h + y.reshape(B, T, C)
        aux = aux + layer_aux
    logits = layer_norm(h, p["ln_f.weight"], p["ln_f.bias"]) @ p["wte"].T
    return F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1)) + aux


def reference(init, stream, dtype):
    p, m, v2 = initial_state(init, dtype)
    metrics, first = [], None
    changed = dropped = 0
    for step in range(STEPS):
        x, y = batch(stream, B, T, SEED, step)
        ROUTES.clear()
        loss = forward(p, x, y, step)
        g1 = dict(zip(p.keys(), torch.autograd.grad(loss, list(p.values()))))
        with torch.no_grad():
            norm1 = torch.sqrt(sum((g * g).sum() for g in g1.values()))
            factor = RHO / (norm1 + 1e-12)
            perturbed = {k: (p[k] + factor * g1[k]).requires_grad_(True) for k in p}
        sam_loss = forward(perturbed, x, y, step)   # routes again (the same jitter), from the perturbed weights
        for (e1, k1), (e2, k2) in zip(ROUTES[:L], ROUTES[L:]):
            changed += int(((e1 != e2) | (k1 != k2)).sum())
            dropped += int((~k1).sum())
        g2 = dict(zip(p.keys(), torch.autograd.grad(sam_loss, list(perturbed.values()))))
        first = first or {k: v.detach().clone() for k, v in g2.items()}
        norm = torch.sqrt(sum((g * g).sum() for g in g2.values()))
        coef = min(MAX_NORM / (norm.item() + 1e-6), 1.0)
        lr = lr_at(step)
        adamw_update(p, m, v2, {k: g * coef for k, g in g2.items()}, lr, step, B1, B2, EPS, WD,
                     decays)
        metrics.append({"loss": loss.item(), "sam_loss": sam_loss.item(),
                        "grad_norm": norm.item(), "lr": lr})
    if dtype == torch.float64:
        print(f"routing: {dropped} of {STEPS * L * N * K} choices dropped (over capacity); "
              f"SAM's perturbed pass routed {changed} choices differently")
    return metrics, {k: t.detach().to(torch.float64) for k, t in p.items()}, first


def main():
    a = parse_args()
    g = torch.Generator().manual_seed(1)
    stream = (torch.cumsum(torch.randint(-3, 4, (4096,), generator=g), 0) % V).tolist()
    init = {"wte": torch.randn(V, C) * 0.02, "wpe": torch.randn(T, C) * 0.01}
    for n, shape in SHAPES.items():
        shape = (L,) + shape
        if n == "moe.router.weight":
            init["h." + n] = torch.randn(shape) * 0.5   # a router that prefers: routing varies
        elif n.endswith("weight") and not n.startswith("ln"):
            std = 0.02 / math.sqrt(2 * L) if "c_proj" in n else 0.02
            init["h." + n] = torch.randn(shape) * std
        elif n.startswith("ln") and n.endswith("weight"):
            init["h." + n] = 1 + 0.1 * torch.randn(shape)
        else:
            init["h." + n] = 0.02 * torch.randn(shape)
    init["ln_f.weight"] = 1 + 0.1 * torch.randn(C)
    init["ln_f.bias"] = 0.02 * torch.randn(C)
    check(a, init, stream, reference, STEPS, SEED,
          [("loss", 2e-6), ("sam_loss", 2e-6), ("grad_norm", 2e-6), ("lr", 1.2e-7)])


if __name__ == "__main__":
    main()
