"""Shared by the PyTorch parity references (gpt2_parity.py, byte_lm_parity.py): the Philox draw
of the data windows, safetensors I/O, AdamW as UpdateRules.h writes it, running stepc, and the
comparison against float64 with a tolerance justified by PyTorch-float32's own distance."""
import argparse, json, os, shlex, struct, subprocess, sys

import torch

# --- Philox4x32-10 (Random123), as runtime/base/Philox.cpp ---
M32 = 0xFFFFFFFF
def philox(key, hi, lo):
    c = [lo & M32, lo >> 32 & M32, hi & M32, hi >> 32 & M32]
    k0, k1 = key & M32, key >> 32 & M32
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & M32, (p0 >> 32) ^ c[3] ^ k1, p0 & M32]
    return c

def uniform01(key, stream, index):
    w = philox(key, stream, index)
    return (((w[0] << 32) | w[1]) >> 11) * 2.0 ** -53

def window_start(length, seq, seed, step, row):
    starts = length - seq if length > seq else length
    u = uniform01(seed, (1 << 56) ^ step, row)  # RngPurpose::kTokenWindows = 1
    return min(int(u * starts), starts - 1)

# --- safetensors (F32), as the format specifies ---
def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, t in tensors.items():
        data = t.detach().to(torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))

def read_safetensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        assert e["dtype"] == "F32", e
        a, b = e["data_offsets"]
        out[name] = torch.frombuffer(bytearray(raw[8 + n + a:8 + n + b]), dtype=torch.float32).reshape(e["shape"]).clone()
    return out


def initial_state(init, dtype):
    """Trainable copies of `init` in `dtype`, and zero Adam moments m and v."""
    p = {k: v.to(dtype).clone().requires_grad_(True) for k, v in init.items()}
    return p, {k: torch.zeros_like(v) for k, v in p.items()}, {k: torch.zeros_like(v) for k, v in p.items()}


def batch(stream, batch_size, seq, seed, step):
    """Step `step`'s token windows of seq + 1 (tokens, targets), as the runtime draws them."""
    starts = [window_start(len(stream), seq, seed, step, r) for r in range(batch_size)]
    win = torch.tensor([stream[s:s + seq + 1] for s in starts])
    return win[:, :seq], win[:, 1:]


def adamw_update(p, m, v, grads, lr, step, b1, b2, eps, wd, decays):
    """One AdamW step in place (runtime formulas: decay w *= 1 - lr wd first, then Adam)."""
    with torch.no_grad():
        for k in p:
            g = grads[k]
            if wd and decays(k):
                p[k] *= 1 - lr * wd
            m[k] = b1 * m[k] + (1 - b1) * g
            v[k] = b2 * v[k] + (1 - b2) * g * g
            mhat = m[k] / (1 - b1 ** (step + 1))
            vhat = v[k] / (1 - b2 ** (step + 1))
            p[k] -= lr * mhat / (torch.sqrt(vhat) + eps)


def run_stepc(run, work, steps, seed, init_path, data):
    """stepc's 10 steps: `RUN train ...` from init_path on data; its metrics and final params."""
    metrics_path, out_path = os.path.join(work, "m.jsonl"), os.path.join(work, "final.safetensors")
    cmd = shlex.split(run) + ["train", "--steps", str(steps), "--seed", str(seed), "--init-from",
                              init_path, "--data", data, "--val-fraction", "0", "--metrics",
                              metrics_path, "--save-params", out_path]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"stepc failed ({r.returncode}):\n{r.stderr[-2000:]}")
    got = [json.loads(l) for l in open(metrics_path)]
    return got, {k: v.to(torch.float64) for k, v in read_safetensors(out_path).items()}


def step1_gradients(run, work, seed, init_path, data):
    """stepc's gradients of the first step (`train --steps 1 --save-grads`), by name."""
    path = os.path.join(work, "grads.safetensors")
    cmd = shlex.split(run) + ["train", "--steps", "1", "--seed", str(seed), "--init-from", init_path,
                              "--data", data, "--val-fraction", "0", "--save-grads", path]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"stepc failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return {k: v.to(torch.float64) for k, v in read_safetensors(path).items()}


def compare_gradients(got, g64, g32, tol):
    """Every gradient by name, relative to its largest entry, within tol x PyTorch-f32's own
    distance from float64 (floor 1e-6: float32 rounding of sums of a few hundred terms)."""
    ok, worst = True, ("", 0.0, 0.0)
    for name, ref in g64.items():
        if name not in got:
            print(f"gradient {name} missing from stepc's --save-grads")
            ok = False
            continue
        scale = ref.abs().max().clamp_min(1e-30)
        d = ((got[name] - ref).abs().max() / scale).item()
        d32 = ((g32[name].to(torch.float64) - ref).abs().max() / scale).item()
        if d > max(tol * d32, 1e-6):
            ok = False
            print(f"gradient {name}: relative {d:.2e} (PyTorch-f32 {d32:.2e}) FAILED")
        if d > worst[1]:
            worst = (name, d, d32)
    print(f"    grads: step 1, {len(g64)} tensors by name, worst relative {worst[1]:.2e} "
          f"({worst[0]}; PyTorch-f32 {worst[2]:.2e}) {'ok' if ok else 'FAILED'}")
    return ok


def compare(got, final, init, m64, p64, m32, p32, tol, metrics):
    """Prints the distances and returns whether stepc is within `tol` x PyTorch-f32's distance
    from float64 (or the floor, float32's noise) on every metric, parameter and update."""
    ok = True
    for key, floor in metrics:
        d_stepc = max(abs(g_[key] - r_[key]) / max(abs(r_[key]), 1e-30) for g_, r_ in zip(got, m64))
        d_f32 = max(abs(g_[key] - r_[key]) / max(abs(r_[key]), 1e-30) for g_, r_ in zip(m32, m64))
        bound = max(tol * d_f32, floor)
        good = d_stepc <= bound
        ok &= good
        print(f"{key:>9}: stepc vs f64 {d_stepc:.2e} (relative), PyTorch-f32 vs f64 {d_f32:.2e}, "
              f"bound {bound:.2e} {'ok' if good else 'FAILED'}")
    worst_p = worst_u = ("", 0.0, 0.0)
    for name, ref in p64.items():
        if name not in final:
            print(f"parameter {name} missing from stepc's output")
            ok = False
            continue
        start = init[name].to(torch.float64)
        dp = (final[name] - ref).abs().max().item()
        dp32 = (p32[name] - ref).abs().max().item()
        upd_ref = ref - start
        scale = upd_ref.abs().max().clamp_min(1e-30)
        du = ((final[name] - start - upd_ref).abs().max() / scale).item()
        du32 = ((p32[name] - start - upd_ref).abs().max() / scale).item()
        if dp > max(tol * dp32, 1e-7) or du > max(tol * du32, 1e-3):
            ok = False
            print(f"parameter {name}: |stepc - f64| {dp:.2e} (f32 {dp32:.2e}), update rel {du:.2e} "
                  f"(f32 {du32:.2e}) FAILED")
        if dp > worst_p[1]: worst_p = (name, dp, dp32)
        if du > worst_u[1]: worst_u = (name, du, du32)
    print(f"   params: worst |stepc - f64| {worst_p[1]:.2e} ({worst_p[0]}; PyTorch-f32 {worst_p[2]:.2e}); "
          f"worst update error {worst_u[1]:.2e} relative ({worst_u[0]}; PyTorch-f32 {worst_u[2]:.2e}); "
          f"{len(p64)} tensors")
    print("PARITY OK" if ok else "PARITY FAILED")
    return ok


def parse_args():
    """--run (the stepc command line that takes train flags), --work, --tol."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True, help="the stepc command line that takes train flags")
    ap.add_argument("--work", required=True)
    ap.add_argument("--tol", type=float, default=10.0, help="x PyTorch-f32's distance from f64")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    torch.manual_seed(0)
    return a


def check(a, init, stream, reference, steps, seed, metrics):
    """Writes the data and the initialisation, runs stepc, runs `reference(init, stream, dtype)`
    -> (metrics, final params, first-step gradients) in float64 and float32, compares all, and
    exits 0 (PARITY OK) or 1."""
    data = os.path.join(a.work, "data.bin")
    open(data, "wb").write(bytes(stream))
    init_path = os.path.join(a.work, "init.safetensors")
    write_safetensors(init_path, init)
    got, final = run_stepc(a.run, a.work, steps, seed, init_path, data)
    m64, p64, g64 = reference(init, stream, torch.float64)
    m32, p32, g32 = reference(init, stream, torch.float32)
    grads_ok = compare_gradients(step1_gradients(a.run, a.work, seed, init_path, data), g64, g32, a.tol)
    ok = compare(got, final, init, m64, p64, m32, p32, a.tol, metrics)
    sys.exit(0 if ok and grads_ok else 1)
