# PyTorch's own kernel for Llama-7B prefill's rotate_half cat
# (cat [[4,32,512,64] [4,32,512,64]] along -1: -x2 with strides
# [1048576,64,2048,1] and the x1 slice of q with [2097152,128,4096,1]),
# timed by torch.profiler (CUPTI) back to back, after an L2 flush and its
# inputs written by copies (kreplay's primed mode), and after its real
# producers (the neg). Traced: 41.01 us. Usage: python3 llama_cat_probe.py
import json, statistics
import torch
from torch.profiler import profile, ProfilerActivity

f16 = torch.float16
flushbuf = torch.empty(100 << 20, device="cuda", dtype=torch.uint8)
q = torch.randn(4, 512, 32, 128, device="cuda", dtype=f16).transpose(1, 2)
x1, x2 = q[..., :64], q[..., 64:]
n2 = -x2
print("strides", n2.stride(), x1.stride())
t1, t2 = x1.clone(), n2.clone()
def timeit(label, body, iters=40):
    for _ in range(3): body()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(iters): body()
        torch.cuda.synchronize()
    p.export_chrome_trace("/tmp/lc.json")
    ev = [e for e in json.load(open("/tmp/lc.json"))["traceEvents"] if e.get("cat") == "kernel" and "CatArray" in e["name"]]
    print("  %-36s n=%d %8.2f us  %s" % (label, len(ev), statistics.median(e["dur"] for e in ev), ev[0]["name"][:70]), flush=True)
timeit("back to back", lambda: torch.cat((n2, x1), dim=-1))
timeit("flush, inputs written by copies", lambda: (flushbuf.fill_(1), n2.copy_(t2), x1.copy_(t1), torch.cat((n2, x1), dim=-1)))
timeit("flush, real producer (neg)", lambda: (flushbuf.fill_(1), torch.cat((-x2, x1), dim=-1)))
timeit("real producer (neg)", lambda: torch.cat((-x2, x1), dim=-1))
