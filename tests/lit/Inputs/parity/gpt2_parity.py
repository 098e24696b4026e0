#!/usr/bin/python3
"""PyTorch parity for tiny GPT-2 (as llm.c's test_gpt2 checks its C against PyTorch).

An independent PyTorch GPT-2, written from the architecture (pre-LayerNorm blocks, causal
self-attention of NH heads, tanh-GELU MLP x4, tied head, mean next-token cross-entropy) and
GPT-2's recipe as models/gpt2_124m.mlir configures it (AdamW b1 0.9, b2 0.95, eps 1e-8, decay
0.1 except biases, LayerNorms and wpe; linear warmup over 700 steps of a cosine to 6e-5; global
norm clipping at 1.0 with the 1e-6 of runtime/../UpdateRules.h), trains 10 steps from the same
safetensors initialisation on the same batches (the windows re-derived here from the
documented Philox draw, Data.h's tokenWindowStart) as the stepc run given by --run, which is
a command line ending where `train ...` flags go (a compiled executable, or `stepc interpret
MODEL --config=tiny --`).

Compared: the first step's gradient of every parameter by name (`train --steps 1 --save-grads`,
an executable compiled with --export-grads), every step's loss, gradient norm (before clipping)
and learning rate, and every final
parameter by name, and every parameter's update (final - initial; with the warmup's small
rates the update is what tests AdamW, the parameters barely move). The reference runs in
float64 and float32; stepc must be within TOL x PyTorch-f32's own distance from float64 (or an
absolute floor of float32 noise), so the tolerance is justified by what float32 itself costs.
Prints the distances, then PARITY OK or PARITY FAILED (exit 1).
"""
import math, os, sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parity_common import adamw_update, batch, check, initial_state, parse_args  # noqa: E402

B, T, V, C, L, NH = 2, 16, 64, 32, 2, 4
HS = C // NH
STEPS, SEED = 10, 7
LR, MIN_LR, WARMUP, TOTAL = 6e-4, 6e-5, 700, 19073
B1, B2, EPS, WD, MAX_NORM = 0.9, 0.95, 1e-8, 0.1, 1.0
STACKED = ["ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias",
           "attn.c_proj.weight", "attn.c_proj.bias", "ln_2.weight", "ln_2.bias",
           "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight", "mlp.c_proj.bias"]

# --- the model, from the architecture ---
def layer_norm(x, g, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), g, b, eps=1e-5)

def attention(h, q, mask):
    """Pre-LayerNorm causal self-attention of one layer (q: the layer's parameter by name)."""
    a = layer_norm(h, q("ln_1.weight"), q("ln_1.bias"))
    qkv = a @ q("attn.c_attn.weight") + q("attn.c_attn.bias")
    qq, kk, vv = qkv.split(C, dim=-1)
    heads = lambda x: x.view(B, T, NH, HS).transpose(1, 2)
    att = (heads(qq) @ heads(kk).transpose(-1, -2)) / math.sqrt(HS)
    att = att.masked_fill(~mask, float("-inf")).softmax(-1)
    ctx = (att @ heads(vv)).transpose(1, 2).reshape(B, T, C)
    return ctx @ q("attn.c_proj.weight") + q("attn.c_proj.bias")

def forward(p, tokens, targets):
    pos = torch.arange(T)
    h = p["wte"][tokens] + p["wpe"][pos]
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    for l in range(L):
        q = lambda n: p["h." + n][l]
        h = h + attention(h, q, mask)
        m = layer_norm(h, q("ln_2.weight"), q("ln_2.bias"))
        f = torch.nn.functional.gelu(m @ q("mlp.c_fc.weight") + q("mlp.c_fc.bias"), approximate="tanh")
        h = h + f @ q("mlp.c_proj.weight") + q("mlp.c_proj.bias")
    logits = layer_norm(h, p["ln_f.weight"], p["ln_f.bias"]) @ p["wte"].T
    return torch.nn.functional.cross_entropy(logits.reshape(-1, V), targets.reshape(-1))

def decays(name):
    return not (name.endswith("bias") or "ln_" in name or name == "wpe")

def lr_at(t):
    if t < WARMUP:
        return LR * (t + 1) / WARMUP
    progress = min((t - WARMUP) / max(1, TOTAL - WARMUP), 1.0)
    return MIN_LR + 0.5 * (LR - MIN_LR) * (1 + math.cos(math.pi * progress))

def reference(init, stream, dtype):
    p, m, v2 = initial_state(init, dtype)
    metrics, first = [], None
    for step in range(STEPS):
        loss = forward(p, *batch(stream, B, T, SEED, step))
        grads = dict(zip(p.keys(), torch.autograd.grad(loss, list(p.values()))))
        first = first or {k: v.detach().clone() for k, v in grads.items()}
        norm = torch.sqrt(sum((g * g).sum() for g in grads.values()))
        coef = min(MAX_NORM / (norm.item() + 1e-6), 1.0)
        lr = lr_at(step)
        adamw_update(p, m, v2, {k: g * coef for k, g in grads.items()}, lr, step, B1, B2, EPS, WD,
                     decays)
        metrics.append({"loss": loss.item(), "grad_norm": norm.item(), "lr": lr})
    return metrics, {k: t.detach().to(torch.float64) for k, t in p.items()}, first

def main():
    a = parse_args()
    # Data: 4096 tokens below the vocabulary of 64, with structure (a noisy walk).
    g = torch.Generator().manual_seed(1)
    steps_ = torch.randint(-3, 4, (4096,), generator=g)
    stream = (torch.cumsum(steps_, 0) % V).tolist()
    # Initialisation, GPT-2's: N(0, 0.02), residual projections 0.02 / sqrt(2 L), wpe 0.01.
    init = {"wte": torch.randn(V, C) * 0.02, "wpe": torch.randn(T, C) * 0.01}
    shapes = {"ln_1.weight": (C,), "ln_1.bias": (C,), "attn.c_attn.weight": (C, 3 * C),
              "attn.c_attn.bias": (3 * C,), "attn.c_proj.weight": (C, C), "attn.c_proj.bias": (C,),
              "ln_2.weight": (C,), "ln_2.bias": (C,), "mlp.c_fc.weight": (C, 4 * C),
              "mlp.c_fc.bias": (4 * C,), "mlp.c_proj.weight": (4 * C, C), "mlp.c_proj.bias": (C,)}
    for n in STACKED:
        shape = (L,) + shapes[n]
        if n.endswith("weight") and not n.startswith("ln"):
            std = 0.02 / math.sqrt(2 * L) if "c_proj" in n else 0.02
            init["h." + n] = torch.randn(shape) * std
        elif n.startswith("ln") and n.endswith("weight"):
            init["h." + n] = 1 + 0.1 * torch.randn(shape)  # not exactly 1: the gradient moves it
        else:
            init["h." + n] = 0.02 * torch.randn(shape)     # nonzero biases, for the same reason
    init["ln_f.weight"] = 1 + 0.1 * torch.randn(C)
    init["ln_f.bias"] = 0.02 * torch.randn(C)
    # The learning rate is computed in f32 in the step: float32's rounding is its floor.
    check(a, init, stream, reference, STEPS, SEED,
          [("loss", 2e-6), ("grad_norm", 2e-6), ("lr", 1.2e-7)])


if __name__ == "__main__":
    main()
