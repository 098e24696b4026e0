#!/usr/bin/env python3
"""The f32 error of Winograd's F(m, K) convolutions against the direct convolution.

For one causal convolution at a model's shapes (default: byte_lm_residual's layer, x [16, 256,
512], w [7, 512, 1536]), computes the forward y, the input gradient dx and the weight gradient
dw three ways from the same f32 inputs: in float64 (the reference), directly in float32, and by
Winograd's F(m, K) in float32 as stepc's lowering does it (the same Toom-Cook matrices as
compiler/Conversion/StepToLinalg/WinogradTransforms.cpp, the same transform / GEMM / transform
order; the GEMMs are numpy's f32 matmuls). Prints, per tile m and direction, the largest
absolute error relative to the reference's largest magnitude, and the RMS error relative to
the reference's RMS, next to the direct f32 figures. Also prints the a-priori first-order bound
factor of the transforms (see benchmarks/README.md, "Winograd convolution").

Usage: conv_error.py [--batch 16 --seq 256 --cin 512 --cout 1536 --kernel 7 --tiles 2,4,6]
"""
import argparse
from fractions import Fraction

import numpy as np

POINTS = [Fraction(0), Fraction(1), Fraction(-1), Fraction(2), Fraction(-2), Fraction(1, 2),
          Fraction(-1, 2), Fraction(3, 2), Fraction(-2, 3), Fraction(-3, 2), Fraction(2, 3),
          Fraction(3), Fraction(-3)]


def transforms(m, r):
    """Aᵀ (m × α), G (α × r), Bᵀ (α × α), exactly in rationals, then as float64."""
    a = m + r - 1
    n = a - 1
    p = POINTS[:n]
    g = [[x ** k for k in range(r)] for x in p] + [[Fraction(int(k == r - 1)) for k in range(r)]]
    h = [[x ** i for i in range(m)] for x in p] + [[Fraction(int(i == m - 1)) for i in range(m)]]
    # Inverse Vandermonde by Lagrange's basis: column x is L_x's coefficients.
    vinv = [[Fraction(0)] * n for _ in range(n)]
    for x in range(n):
        poly, den = [Fraction(1)], Fraction(1)
        for y in range(n):
            if y == x:
                continue
            nxt = [Fraction(0)] * (len(poly) + 1)
            for j, c in enumerate(poly):
                nxt[j + 1] += c
                nxt[j] -= c * p[y]
            poly, den = nxt, den * (p[x] - p[y])
        for j in range(n):
            vinv[j][x] = poly[j] / den
    bt = [[Fraction(0)] * a for _ in range(a)]
    for j in range(n):
        for x in range(n):
            bt[x][j] = vinv[j][x]
        bt[n][j] = -sum(vinv[j][x] * p[x] ** n for x in range(n))
    bt[n][n] = Fraction(1)
    at = [[h[x][i] for x in range(a)] for i in range(m)]
    f = lambda mat: np.array([[float(v) for v in row] for row in mat])
    return f(at), f(g), f(bt)


def direct(xp, w, s, dtype):
    xp, w = xp.astype(dtype), w.astype(dtype)
    y = np.zeros((xp.shape[0], s, w.shape[2]), dtype)
    for k in range(w.shape[0]):
        y += xp[:, k:k + s] @ w[k]
    return y


def winograd(xp, w, s, m):
    """y[b, s] = Σ_k xp[b, s + k] w[k] by F(m, K) in f32; xp long enough for every tile."""
    k = w.shape[0]
    at, g, bt = (t.astype(np.float32) for t in transforms(m, k))
    tiles = -(-s // m)
    need = tiles * m + k - 1
    xp = np.concatenate([xp, np.zeros((xp.shape[0], need - xp.shape[1], xp.shape[2]))], 1)
    xp, w = xp.astype(np.float32), w.astype(np.float32)
    a = m + k - 1
    taps = [xp[:, j:j + (tiles - 1) * m + 1:m] for j in range(a)]      # [B, T, C] each
    v = np.stack([sum(bt[x, j] * taps[j] for j in range(a)) for x in range(a)])
    u = np.einsum("xk,kco->xco", g, w)
    p = np.stack([v[x].reshape(-1, v.shape[-1]) @ u[x] for x in range(a)])
    p = p.reshape(a, xp.shape[0], tiles, -1)
    y = np.stack([sum(at[i, x] * p[x] for x in range(a)) for i in range(m)], 2)
    return y.reshape(xp.shape[0], tiles * m, -1)[:, :s]


def winograd_dw(xp, gr, k, m):
    """dw[k] = Σ_ξ G[ξ, k] V[ξ]ᵀ Z[ξ] in f32, the lowering's weight gradient."""
    at, g, bt = (t.astype(np.float32) for t in transforms(m, k))
    s = gr.shape[1]
    tiles = -(-s // m)
    need = tiles * m + k - 1
    xp = np.concatenate([xp, np.zeros((xp.shape[0], need - xp.shape[1], xp.shape[2]))], 1)
    gp = np.concatenate([gr, np.zeros((gr.shape[0], tiles * m - s, gr.shape[2]))], 1)
    xp, gp = xp.astype(np.float32), gp.astype(np.float32)
    a = m + k - 1
    taps = [xp[:, j:j + (tiles - 1) * m + 1:m] for j in range(a)]
    outs = [gp[:, i::m] for i in range(m)]
    du = []
    for x in range(a):
        v = sum(bt[x, j] * taps[j] for j in range(a)).reshape(-1, xp.shape[2])
        z = sum(at[i, x] * outs[i] for i in range(m)).reshape(-1, gp.shape[2])
        du.append(v.T @ z)
    return np.stack([sum(g[x, kk] * du[x] for x in range(a)) for kk in range(k)])


def errors(out, ref):
    return (float(np.abs(out - ref).max() / np.abs(ref).max()),
            float(np.sqrt(((out - ref) ** 2).mean() / (ref ** 2).mean())))


def bound_factor(m, k):
    """max_i Σ_ξ |Aᵀ[i,ξ]| (Σ_k |G[ξ,k]|) (Σ_j |Bᵀ[ξ,j]|): how much larger the transforms'
    sums of magnitudes are than a direct dot product's (whose factor is K), for inputs and
    weights of magnitude at most 1."""
    at, g, bt = transforms(m, k)
    return float((np.abs(at) @ (np.abs(g).sum(1) * np.abs(bt).sum(1))).max())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--cin", type=int, default=512)
    ap.add_argument("--cout", type=int, default=1536)
    ap.add_argument("--kernel", type=int, default=7)
    ap.add_argument("--tiles", default="2,4,6")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    k = a.kernel
    # Unit-RMS activations (a normalised layer input, as byte_lm_residual's TripleNorm gives)
    # and weights at the model's init scale; the gradient at unit RMS.
    x = rng.standard_normal((a.batch, a.seq, a.cin)).astype(np.float32)
    w = (rng.standard_normal((k, a.cin, a.cout)) / np.sqrt(k * a.cin)).astype(np.float32)
    gr = rng.standard_normal((a.batch, a.seq, a.cout)).astype(np.float32)
    x64, w64, g64 = x.astype(np.float64), w.astype(np.float64), gr.astype(np.float64)
    xp = np.concatenate([np.zeros((a.batch, k - 1, a.cin)), x64], 1)   # causal
    gpad = np.concatenate([g64, np.zeros((a.batch, k - 1, a.cout))], 1)  # dx[s] = Σ g[s+k] wf[k]
    wf = np.ascontiguousarray(np.transpose(w64[::-1], (0, 2, 1)))       # wf[k] = w[K-1-k]ᵀ
    ref = {"y": direct(xp, w64, a.seq, np.float64),
           "dx": direct(gpad, wf, a.seq, np.float64),
           "dw": np.stack([np.einsum("bsc,bso->co", xp[:, kk:kk + a.seq], g64) for kk in range(k)])}
    f32 = {"y": direct(xp, w64, a.seq, np.float32),
           "dx": direct(gpad, wf, a.seq, np.float32),
           "dw": np.stack([np.einsum("bsc,bso->co", xp[:, kk:kk + a.seq].astype(np.float32), gr)
                           for kk in range(k)])}
    print(f"causal conv x [{a.batch}, {a.seq}, {a.cin}], w [{k}, {a.cin}, {a.cout}]: error against "
          f"float64, max |err| / max |ref| and rms(err) / rms(ref)")
    for name in ("y", "dx", "dw"):
        e = errors(f32[name], ref[name])
        print(f"  direct f32      {name:>2}: max {e[0]:.2e}  rms {e[1]:.2e}")
    # The forward's a-priori first-order bound, n·u·S with S <= factor·C·max|x|·max|w| (see
    # benchmarks/README.md), relative to the largest output.
    u, scale = 2.0 ** -24, a.cin * float(np.abs(x).max()) * float(np.abs(w).max())
    ymax = float(np.abs(ref["y"]).max())
    print(f"  direct f32       y: a-priori bound {k * a.cin * u * k * scale / ymax:.2e} of max |y|")
    for m in (int(t) for t in a.tiles.split(",")):
        if m + k - 1 > len(POINTS) + 1:
            continue
        outs = {"y": winograd(xp, w64, a.seq, m),
                "dx": winograd(gpad, wf, a.seq, m),
                "dw": winograd_dw(xp, g64, k, m)}
        for name in ("y", "dx", "dw"):
            e = errors(outs[name], ref[name])
            print(f"  F({m}, {k}) f32    {name:>2}: max {e[0]:.2e}  rms {e[1]:.2e}")
        alpha = m + k - 1
        factor = bound_factor(m, k)
        print(f"  F({m}, {k}) transforms' magnitude factor {factor:.1f} (direct: {k}); forward's "
              f"a-priori bound {(a.cin + 2 * alpha + k + 4) * u * factor * scale / ymax:.2e} "
              f"of max |y|")


if __name__ == "__main__":
    main()
