# What around a kernel changes its traced duration? Times ops of the shared
# traces (PyTorch kernels, torch.profiler/CUPTI durations) after different
# preludes: back to back, an L2-filling memset, a 1 GiB read, a TLB sweep
# (one byte per 2 MiB page over 16 GiB), and host idle gaps; samples the SM
# clock through NVML meanwhile. Then one real BLOOM-560M generate (random
# weights, as traced) for the same kernels in their real context.
# Usage: python3 context_probe.py OUTDIR
import gzip, json, os, statistics, sys, threading, time
import torch, pynvml
from torch.profiler import profile, ProfilerActivity

OUT = sys.argv[1] if len(sys.argv) > 1 else "/tmp/probe"
os.makedirs(OUT, exist_ok=True)
pynvml.nvmlInit(); H = pynvml.nvmlDeviceGetHandleByIndex(0)
dev = "cuda"
f16, f32 = torch.float16, torch.float32

class Clock:
    def __init__(s): s.v = []; s.on = False
    def run(s):
        while s.on:
            s.v.append(pynvml.nvmlDeviceGetClockInfo(H, pynvml.NVML_CLOCK_SM)); time.sleep(0.001)
    def __enter__(s):
        s.v = []; s.on = True; s.t = threading.Thread(target=s.run); s.t.start(); return s
    def __exit__(s, *a):
        s.on = False; s.t.join()
    def med(s): return statistics.median(s.v) if s.v else 0

def kernels(p):
    path = os.path.join(OUT, "tmp.json"); p.export_chrome_trace(path)
    ev = [e for e in json.load(open(path))["traceEvents"] if e.get("cat") == "kernel"]
    os.remove(path); return ev

# ops: name -> (callable, kernel name substring)
a46 = torch.randn(1, 16, 46, 64, device=dev, dtype=f16); b1 = torch.randn(1, 16, 1, 64, device=dev, dtype=f16)
logit16 = torch.randn(1, 250880, device=dev, dtype=f16); logit32 = logit16.float()
x4k = torch.randn(4, 512, 4096, device=dev, dtype=f16); x4k32 = x4k.float()
att = torch.randn(4, 16, 512, 512, device=dev, dtype=f16)
ops = {
    "cat[1,16,46,64]": (lambda: torch.cat([a46, b1], dim=2), "CatArrayBatchedCopy"),
    "copy f32<-f16[1,250880]": (lambda: logit16.to(f32), "copy"),
    "argmax f32[1,250880]": (lambda: logit32.argmax(-1), "ArgMax"),
    "copy f32<-f16[4,512,4096]": (lambda: x4k.to(f32), "copy"),
    "mean f32[4,512,4096]": (lambda: x4k32.mean(-1, keepdim=True), "Mean"),
    "softmax f16[4,16,512,512]": (lambda: torch.softmax(att, -1, dtype=f32), "SoftMax"),
}
l2fill = torch.empty(100 << 20, device=dev, dtype=torch.uint8)
w1g = torch.randn(1 << 29, device=dev, dtype=f16)  # 1 GiB
big = torch.empty(16 << 30, device=dev, dtype=torch.uint8)
pages = big.view(8192, 2 << 20)[:, 0]
def memset(): l2fill.fill_(1)
def read1g(): w1g.sum()
def tlb(): pages.sum()
def idle(): torch.cuda.synchronize(); time.sleep(100e-6)
conds = {
    "b2b": [], "memset": [memset], "read1g": [read1g], "tlb": [tlb], "memset+tlb": [memset, tlb],
    "idle": [idle], "read1g+idle": [read1g, idle], "memset+idle": [memset, idle],
}
rows = []
for oname, (fn, sub) in ops.items():
    for cname, pre in conds.items():
        for _ in range(5):
            for q in pre: q()
            fn()
        torch.cuda.synchronize()
        with Clock() as c, profile(activities=[ProfilerActivity.CUDA]) as p:
            for _ in range(60):
                for q in pre: q()
                fn()
            torch.cuda.synchronize()
        ds = [e["dur"] for e in kernels(p) if sub in e["name"]]
        r = (oname, cname, len(ds), statistics.median(ds) if ds else 0, c.med())
        rows.append(r); print("%-28s %-12s n=%3d  %8.2f us  sm %4d MHz" % r, flush=True)
json.dump(rows, open(os.path.join(OUT, "micro.json"), "w"), indent=1)
del big, pages, w1g; torch.cuda.empty_cache()

# The real generate, as captured.
from transformers import BloomConfig, BloomForCausalLM
torch.backends.cuda.matmul.allow_tf32 = False
cfg = BloomConfig(vocab_size=250880, hidden_size=1024, n_layer=24, n_head=16)
torch.manual_seed(0)
with torch.device("cuda"):
    m = BloomForCausalLM(cfg).to(f16).eval()
g = torch.Generator(device="cuda").manual_seed(1)
ids = torch.randint(0, cfg.vocab_size, (1, 32), device="cuda", generator=g)
def run():
    with torch.no_grad():
        m.generate(ids, max_new_tokens=16, min_new_tokens=16, do_sample=False, pad_token_id=0)
for _ in range(3): run()
torch.cuda.synchronize()
with Clock() as c, profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
    run(); torch.cuda.synchronize()
ev = kernels(p)
print("real generate: %d kernels, sm clock median %d MHz (min %d, max %d, %d samples)" % (
    len(ev), c.med(), min(c.v), max(c.v), len(c.v)))
for sub in ["CatArrayBatchedCopy", "ArgMax", "SoftMax", "copy"]:
    ds = [e["dur"] for e in ev if sub in e["name"]]
    if ds: print("  %-22s n=%4d median %.2f us" % (sub, len(ds), statistics.median(ds)))
json.dump({"clock": c.v}, open(os.path.join(OUT, "generate_clock.json"), "w"))
with Clock() as c:
    for _ in range(3): run()
    torch.cuda.synchronize()
print("real generate unprofiled: sm clock median %d MHz (min %d max %d)" % (c.med(), min(c.v), max(c.v)))
