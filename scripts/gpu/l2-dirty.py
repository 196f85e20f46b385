"""Why memory-bound kernels run longer in kreplay's timeline graph than in
the real inference: a probe on one GPU, with PyTorch's own kernels.

In the real inference a kernel reads what the kernel before it wrote (an
RMSNorm's mean reads pow's output, still in L2). In the timeline graph each
signature has buffers of its own: the kernel before it writes its own
output, and the kernel reads its own input, long evicted from L2. The
cases below separate the input's place (just written, cold) from the L2's
state (clean, full of the previous kernel's dirty lines, whose write-back
would share the bandwidth with the kernel's reads).

For two consumers of an f32 [8, 256, 1536] tensor (12.6 MB, the shape of
a Qwen2.5-1.5B prefill's RMSNorm: its mean over the last dimension, and
its cast to bf16), each case below is launched REPS times back to back and
the consumer's kernel times are read from a profiler trace (median,
10th-90th percentile):
  producer   flush L2 clean, pow(x) -> y, consumer(y): the real run's data flow
  own input  flush L2 clean, pow(x) -> y, consumer(w): the timeline graph's
  cold clean flush L2 clean (read 256 MiB), consumer(w): -cache rotating
  cold dirty flush L2 dirty (write 256 MiB), consumer(w)
  warm       consumer(w), consumer(w): the second one
"own input" well above "producer" says the graph's own buffers cost the
time; "own input" with "cold dirty" rather than "cold clean" would say
the dirty lines are part of it.

Run on the GPU machine: python3 scripts/gpu/l2-dirty.py [REPS] [JSON]
"""
import json
import os
import statistics
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 200
SHAPE = (8, 256, 1536)
FLUSH = 256 << 20


def consumers(out_mean, out_cast):
    """The consumers: (name, the kernel-name fragment that marks it, the call)."""
    return [
        ("mean f32[8,256,1536] over the last dim", "MeanOps",
         lambda t: torch.mean(t, -1, keepdim=True, out=out_mean)),
        ("copy_ f32[8,256,1536] to bf16", "copy",
         lambda t: out_cast.copy_(t)),
    ]


def cases(x, y, w, big):
    """The cases: (name, how many consumer kernels a step launches, the step given the consumer)."""
    clean = lambda: torch.amax(big)  # noqa: E731 (reads FLUSH bytes: clean lines)
    dirty = lambda: big.fill_(1.0)  # noqa: E731 (writes FLUSH bytes: dirty lines)
    return [
        ("producer", 1, lambda c: (clean(), torch.pow(x, 2, out=y), c(y))),
        ("own input", 1, lambda c: (clean(), torch.pow(x, 2, out=y), c(w))),
        ("cold clean", 1, lambda c: (clean(), c(w))),
        ("cold dirty", 1, lambda c: (dirty(), c(w))),
        ("warm", 2, lambda c: (c(w), c(w))),
    ]


def kernel_times(step, mark, per, reps):
    """The consumer's kernel durations (µs) over reps steps: the last of each step's per."""
    for _ in range(10):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            step()
        torch.cuda.synchronize()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    prof.export_chrome_trace(path)
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    os.remove(path)
    ks = sorted((e for e in events if e.get("cat") == "kernel" and mark in e.get("name", "")), key=lambda e: e["ts"])
    if len(ks) != per * reps:
        names = sorted({e["name"][:90] for e in events if e.get("cat") == "kernel"})
        print(f"  {mark}: {len(ks)} consumer kernels in the trace, want {per * reps}; kernels: {names}")
        return None
    return [e["dur"] for e in ks[per - 1::per]]


def main():
    torch.manual_seed(0)
    dev = "cuda"
    x, w = torch.randn(SHAPE, device=dev), torch.randn(SHAPE, device=dev)
    y = torch.empty_like(x)
    big = torch.empty(FLUSH // 4, device=dev)
    out_mean = torch.empty(SHAPE[:-1] + (1,), device=dev)
    out_cast = torch.empty(SHAPE, device=dev, dtype=torch.bfloat16)
    rows = []
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, {REPS} steps a case; consumer kernel µs: median (10-90%)")
    for cname, mark, c in consumers(out_mean, out_cast):
        print(cname)
        for name, per, step in cases(x, y, w, big):
            d = kernel_times(lambda: step(c), mark, per, REPS)
            if d is None:
                continue
            q = statistics.quantiles(d, n=10)
            rows.append({"consumer": cname, "case": name, "median_us": statistics.median(d), "p10_us": q[0], "p90_us": q[-1], "n": len(d)})
            print(f"  {name:11s} {statistics.median(d):7.2f} ({q[0]:.2f}-{q[-1]:.2f})")
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "reps": REPS, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
