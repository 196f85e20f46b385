# Fourth context probe: does a cold TLB explain what is left? Times PyTorch's
# kernels for ops of the shared traces (torch.profiler/CUPTI; the op's kernel
# is the last of each iteration) after an L2 flush and a primer (a copy from a
# twin, or the real producer), with and without a TLB sweep first (one byte
# in each 2 MiB page of 16 GiB, read by one reduction kernel).
# Usage: python3 context_probe4.py
import json, statistics
import torch
from torch.profiler import profile, ProfilerActivity

dev = "cuda"; f16, f32 = torch.float16, torch.float32
flushbuf = torch.empty(100 << 20, device=dev, dtype=torch.uint8)
big = torch.zeros(16 << 30, device=dev, dtype=torch.uint8)
pages = big.view(8192, 2 << 20)[:, 0]
def flush(): flushbuf.fill_(1)
def sweep(): pages.max()

def timeit(label, body, iters=40):
    for _ in range(3): body()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(iters): body()
        torch.cuda.synchronize()
    p.export_chrome_trace("/tmp/probe4.json")
    ev = sorted((e for e in json.load(open("/tmp/probe4.json"))["traceEvents"] if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    k = len(ev) // iters
    last = ev[k - 1::k] if k * iters == len(ev) else []
    print("  %-34s %8.2f us  %s" % (label, statistics.median(e["dur"] for e in last) if last else 0,
          last[0]["name"][:50] if last else "kernels per iteration vary: %d" % len(ev)), flush=True)

def probe(name, traced, op, inputs, producer):
    print("%s (traced %.2f us)" % (name, traced), flush=True)
    twins = [t.clone() for t in inputs]
    timeit("flush, copy", lambda: (flush(), [t.copy_(s) for t, s in zip(inputs, twins)], op(*inputs)))
    timeit("sweep, flush, copy", lambda: (sweep(), flush(), [t.copy_(s) for t, s in zip(inputs, twins)], op(*inputs)))
    timeit("flush, real producer", lambda: (flush(), op(*producer())))
    timeit("sweep, flush, real producer", lambda: (sweep(), flush(), op(*producer())))

s = torch.randn(4, 16, 512, 512, device=dev, dtype=f16); m = torch.randn(4, 1, 512, 512, device=dev, dtype=f16)
probe("bloom softmax f16[4,16,512,512]", 45.51, lambda x: torch.softmax(x, -1, dtype=f32), [s + m], lambda: [s + m])
probe("bloom add f16[4,16,512,512] f16[4,1,512,512]", 48.96, lambda x, y: x + y, [s, m], lambda: [s * 1, m])
r = torch.randn(4, 512, 4096, device=dev, dtype=f16); a = torch.randn_like(r)
probe("llama copy_ f32<-f16[4,512,4096]", 27.07, lambda x: x.to(f32), [r + a], lambda: [r + a])
h32 = (r + a).float()
probe("llama mean f32[4,512,4096]", 21.06, lambda x: x.mean(-1, keepdim=True), [h32.pow(2)], lambda: [h32.pow(2)])
