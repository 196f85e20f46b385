# Second context probe: times ops of the shared traces (torch.profiler/CUPTI
# durations, PyTorch's own kernels) right after their real producer, after an
# unrelated kernel of the producer's kind, and alone, to tell the producer's
# data in L2 from the state an unrelated kernel leaves (shared-memory
# carveout, code caches). Usage: python3 context_probe2.py
import json, os, statistics, time
import torch
import torch.nn.functional as F
from torch.profiler import profile, ProfilerActivity

dev = "cuda"; f16, f32 = torch.float16, torch.float32
torch.backends.cuda.matmul.allow_tf32 = False

def kernels(p):
    path = "/tmp/probe2.json"; p.export_chrome_trace(path)
    ev = [e for e in json.load(open(path))["traceEvents"] if e.get("cat") == "kernel"]
    os.remove(path); return ev

def timeit(label, sub, body, iters=60):
    for _ in range(5): body()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(iters): body()
        torch.cuda.synchronize()
    ev = kernels(p)
    ds = [e["dur"] for e in ev if sub in e["name"]]
    prev = {}
    for i, e in enumerate(ev):
        if sub in e["name"] and i > 0:
            prev[ev[i-1]["name"][:40]] = prev.get(ev[i-1]["name"][:40], 0) + 1
    print("%-44s n=%3d %8.2f us  after %s" % (label, len(ds), statistics.median(ds) if ds else 0,
          max(prev, key=prev.get) if prev else "-"), flush=True)

def idle(): torch.cuda.synchronize(); time.sleep(100e-6)

# BLOOM-560M decode: key cat after the QKV GEMM (bias) that produced the new key.
x = torch.randn(1, 1, 1024, device=dev, dtype=f16)
W = torch.randn(3072, 1024, device=dev, dtype=f16) * 0.02; bias = torch.randn(3072, device=dev, dtype=f16)
W2 = torch.randn(3072, 1024, device=dev, dtype=f16) * 0.02
past = torch.randn(1, 16, 46, 64, device=dev, dtype=f16)
qkv0 = F.linear(x, W, bias)
def key(q): return q.view(1, 1, 16, 3, 64)[..., 1, :].transpose(1, 2)
k0 = key(qkv0)
print("key strides", k0.stride())
timeit("cat alone (strided key)", "CatArray", lambda: torch.cat([past, k0], 2))
timeit("cat alone, idle before", "CatArray", lambda: (idle(), torch.cat([past, k0], 2)))
timeit("cat after its QKV GEMM", "CatArray", lambda: torch.cat([past, key(F.linear(x, W, bias))], 2))
timeit("cat after its QKV GEMM, idle before", "CatArray", lambda: (idle(), torch.cat([past, key(F.linear(x, W, bias))], 2)))
timeit("cat after an unrelated GEMM", "CatArray", lambda: (F.linear(x, W2, bias), torch.cat([past, k0], 2)))
big = torch.empty(1 << 30, device=dev, dtype=torch.uint8)
def stream(): big.fill_(1)
timeit("cat after 1 GiB fill + its QKV GEMM, idle", "CatArray", lambda: (stream(), idle(), torch.cat([past, key(F.linear(x, W, bias))], 2)))
timeit("cat after 1 GiB fill + unrelated GEMM", "CatArray", lambda: (stream(), F.linear(x, W2, bias), torch.cat([past, k0], 2)))
timeit("cat after 1 GiB fill", "CatArray", lambda: (stream(), torch.cat([past, k0], 2)))

# Llama-7B prefill: the f32 copy after the residual add that produced it; the mean after its pow.
r = torch.randn(4, 512, 4096, device=dev, dtype=f16); a = torch.randn_like(r)
h0 = r + a; h32 = h0.float()
timeit("llama copy f32<-f16 alone", "copy", lambda: h0.to(f32))
timeit("llama copy after its add", "copy", lambda: (r + a).to(f32))
timeit("llama copy after unrelated add", "copy", lambda: (r + a, h0.to(f32)))
Wo = torch.randn(4096, 4096, device=dev, dtype=f16) * 0.02
timeit("llama copy after o_proj GEMM + add", "copy", lambda: (r + F.linear(a, Wo)).to(f32))
timeit("llama mean alone", "Mean", lambda: h32.mean(-1, keepdim=True))
timeit("llama mean after its pow", "Mean", lambda: h32.pow(2).mean(-1, keepdim=True))
timeit("llama mean after copy, pow (RMSNorm)", "Mean", lambda: (r + a).to(f32).pow(2).mean(-1, keepdim=True))
p0 = h32.pow(2)
timeit("llama mean after unrelated pow", "Mean", lambda: (h32.pow(2), p0.mean(-1, keepdim=True)))

# BLOOM-560M decode: lm_head GEMM, f32 copy, argmax.
hd = torch.randn(1, 1, 1024, device=dev, dtype=f16)
Wlm = torch.randn(250880, 1024, device=dev, dtype=f16) * 0.02
l16 = F.linear(hd, Wlm)[:, -1, :]; l32 = l16.float()
timeit("decode copy f32<-f16[1,250880] alone", "copy", lambda: l16.float())
timeit("decode copy after lm_head", "copy", lambda: F.linear(hd, Wlm)[:, -1, :].float())
timeit("argmax alone", "ArgMax", lambda: l32.argmax(-1))
timeit("argmax after its copy", "ArgMax", lambda: l16.float().argmax(-1))
timeit("argmax after lm_head, copy", "ArgMax", lambda: F.linear(hd, Wlm)[:, -1, :].float().argmax(-1))

# BLOOM-560M prefill: softmax f16[4,16,512,512] -> f32 after the baddbmm/mask that produced it.
s = torch.randn(4, 16, 512, 512, device=dev, dtype=f16); m = torch.randn(4, 1, 512, 512, device=dev, dtype=f16)
timeit("bloom softmax alone", "SoftMax", lambda: torch.softmax(s, -1, dtype=f32))
timeit("bloom softmax after its masked add", "SoftMax", lambda: torch.softmax(s + m, -1, dtype=f32))
