# Third context probe: how should a replay put an op's inputs in L2? Times
# PyTorch's own kernels for ops of the shared traces (torch.profiler/CUPTI)
# after an L2-filling memset and then one of these primers:
#   inplace  the input rewritten in place (kreplay's primed mode)
#   copy     the input written by a copy from a scratch buffer
#   real     the op's real producer, on inputs that were in DRAM
# and the real producer with nothing before it. Usage: python3 context_probe3.py
import json, os, statistics
import torch
import torch.nn.functional as F
from torch.profiler import profile, ProfilerActivity

dev = "cuda"; f16, f32 = torch.float16, torch.float32
torch.backends.cuda.matmul.allow_tf32 = False
flushbuf = torch.empty(100 << 20, device=dev, dtype=torch.uint8)
def flush(): flushbuf.fill_(1)

def timeit(label, body, iters=40):
    for _ in range(3): body()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(iters): body()
        torch.cuda.synchronize()
    path = "/tmp/probe3.json"; p.export_chrome_trace(path)
    ev = sorted((e for e in json.load(open(path))["traceEvents"] if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    k = len(ev) // iters  # kernels per iteration; the op's is the last
    last = ev[k - 1::k] if k * iters == len(ev) else []
    ds = [e["dur"] for e in last]
    print("  %-40s n=%3d %8.2f us  %s" % (label, len(ds), statistics.median(ds) if ds else 0,
          last[0]["name"][:60] if last else "kernels per iteration vary: %d" % len(ev)), flush=True)

def probe(name, traced, op, inputs, producer):
    """op(*inputs) is timed; producer() returns fresh inputs as the real model makes them."""
    print("%s (traced %.2f us)" % (name, traced), flush=True)
    scratch = [t.clone() for t in inputs]
    timeit("warm (back to back)", lambda: op(*inputs))
    timeit("flush", lambda: (flush(), op(*inputs)))
    timeit("flush, inplace", lambda: (flush(), [t.mul_(1) for t in inputs], op(*inputs)))
    timeit("flush, copy", lambda: (flush(), [t.copy_(s) for t, s in zip(inputs, scratch)], op(*inputs)))
    timeit("flush, real producer", lambda: (flush(), op(*producer())))
    timeit("real producer", lambda: op(*producer()))

# Llama-7B RMSNorm: the residual add makes h (f16), copy to f32, pow, mean.
r = torch.randn(4, 512, 4096, device=dev, dtype=f16); a = torch.randn_like(r)
Wo = torch.randn(4096, 4096, device=dev, dtype=f16) * 0.02
h = r + a; h32 = h.float(); p2 = h32.pow(2)
probe("llama copy_ f32<-f16[4,512,4096]", 27.07, lambda x: x.to(f32), [h], lambda: [r + F.linear(a, Wo)])
probe("llama mean f32[4,512,4096]", 21.06, lambda x: x.mean(-1, keepdim=True), [p2], lambda: [h32.pow(2)])
# Llama copy back to f16 after the weight multiply: f32 [4,512,4096] -> f16.
y32 = h32 * torch.rsqrt(p2.mean(-1, keepdim=True) + 1e-6)
probe("llama copy_ f16<-f32[4,512,4096]", 15.39, lambda x: x.to(f16), [y32], lambda: [h32 * torch.rsqrt(p2.mean(-1, keepdim=True) + 1e-6)])
# BLOOM-560M prefill: masked scores -> softmax to f32; residual add after the dense GEMM.
s = torch.randn(4, 16, 512, 512, device=dev, dtype=f16); m = torch.randn(4, 1, 512, 512, device=dev, dtype=f16)
sm = s + m
probe("bloom softmax f16[4,16,512,512]", 45.51, lambda x: torch.softmax(x, -1, dtype=f32), [sm], lambda: [s + m])
ctx = torch.randn(4, 512, 1024, device=dev, dtype=f16); Wd = torch.randn(1024, 1024, device=dev, dtype=f16) * 0.02
res = torch.randn(4, 512, 1024, device=dev, dtype=f16); d0 = F.linear(ctx, Wd)
probe("bloom add f16[4,512,1024] x2", 4.10, lambda x, y: x + y, [d0, res], lambda: [F.linear(ctx, Wd), res])
