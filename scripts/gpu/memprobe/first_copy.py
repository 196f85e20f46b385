"""Times tensor.item()'s 1-byte copy to the host as the first after the
profiler starts, and after the GPU's address space changes.

Issue 14: a traced prefill holds one such copy, at 1728 ns (bf16 SDPA) or
2112-2144 ns (FP8); a decode's first 1728-1952 ns and its others about
1440; kreplay replays it at 1407-1440 ns. In idle_item.py the first copy
of the profiled session took 1760 ns in both processes, and the first
after the process's first GEMMs (cuBLAS loading its kernels) 2240 ns.
The guess under test: a copy right after the GPU's mappings change (the
profiler's buffers, a module load, a new allocation) walks cold page
tables.

Cases, TRIALS times each, one line per case (the copies' durations, ns):
- fresh: a new profiler per trial; four small kernels and item(), twice;
  the first and the second copy of each session;
- warmed: a profiler with a schedule of one warm-up step and one active
  step, each four small kernels and item(); the active step's copy;
- malloc: inside one profiled session, torch.cuda.empty_cache() and a new
  64 MiB tensor (a cudaMalloc: new mappings), then item(); against the
  same with the tensor from the cache (no new mapping).
"""
import os
import sys
import time

import torch
from kineto_events import events
from torch.profiler import ProfilerActivity, profile, schedule

TRIALS = int(os.environ.get("TRIALS", "6"))
dev = torch.device("cuda")
x = torch.ones(4, device=dev, dtype=torch.bool)
small = torch.arange(2048, device=dev)


def spin(us):
    t = time.perf_counter() + us * 1e-6
    while time.perf_counter() < t:
        pass


def step():
    for _ in range(4):
        small.add_(1)
        spin(50)
    return (x > 0).all().item()


def copies(prof):
    """The 1-byte device-to-host copies' durations (ns), in time order."""
    ev = events(prof)
    cp = [e for e in ev if e.get("cat") == "gpu_memcpy" and "DtoH" in e.get("name", "") and e.get("args", {}).get("bytes") == 1]
    return [e["dur"] * 1000 for e in sorted(cp, key=lambda e: e["ts"])]


def show(name, d):
    d = sorted(d)
    print(f"{name:<28} n={len(d):2d} median {d[len(d) // 2]:5.0f} min {d[0]:5.0f} max {d[-1]:5.0f}  {[int(v) for v in d]}")
    sys.stdout.flush()


def main():
    step()
    torch.cuda.synchronize()
    first, second, warmed, fresh_alloc, cached_alloc = [], [], [], [], []
    for _ in range(TRIALS):
        time.sleep(0.2)
        with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
            step()
            torch.cuda.synchronize()
            step()
            torch.cuda.synchronize()
        c = copies(prof)
        if len(c) == 2:
            first.append(c[0])
            second.append(c[1])
        time.sleep(0.2)
        got = []
        with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU], schedule=schedule(wait=0, warmup=1, active=1),
                     on_trace_ready=lambda p: got.extend(copies(p))) as prof:
            for _ in range(2):
                step()
                torch.cuda.synchronize()
                prof.step()
        warmed.extend(got)
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        step()
        torch.cuda.synchronize()
        order = []
        for i in range(2 * TRIALS):
            fresh = i % 2 == 0
            if fresh:
                torch.cuda.empty_cache()
            t = torch.empty(64 << 20, dtype=torch.uint8, device=dev)
            torch.cuda.synchronize()
            step()
            torch.cuda.synchronize()
            del t
            order.append(fresh)
    c = copies(prof)[1:]
    for fresh, d in zip(order, c):
        (fresh_alloc if fresh else cached_alloc).append(d)
    show("fresh profiler, 1st copy", first)
    show("fresh profiler, 2nd copy", second)
    show("after a warm-up step", warmed)
    show("after a new 64 MiB cudaMalloc", fresh_alloc)
    show("after a cached 64 MiB block", cached_alloc)


if __name__ == "__main__":
    main()
