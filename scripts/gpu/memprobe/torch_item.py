"""Times tensor.item()'s 1-byte copy to the host under torch.profiler after
different work on the GPU: nothing, SM kernels that read 64 MiB to 4 GiB,
GEMMs over 1-2 GiB of weights, a copy engine sweep, and host idle; each
case in a loop with a synchronize per iteration, as an inference ends.

Issue 14: the traced prefills' item() copies took 1728 ns (bf16 SDPA) and
2112-2144 ns (FP8), a MoE decode's first 1952 ns and its others about
1440; kreplay's replay 1407-1440 ns whatever the pace, synchronize or idle.

Prints one line per case: the copies' median, tenths and count.
"""
import os
import sys
import time

import torch
from kineto_events import events
from torch.profiler import ProfilerActivity, profile

dev = "cuda"
N = int(os.environ.get("N", "30"))


def durations(fn):
    """Runs fn N times under the profiler, a synchronize after each, and
    returns the durations (ns) of the 1-byte device-to-host copies."""
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        for _ in range(N):
            fn()
            torch.cuda.synchronize()
    ev = events(prof)
    out = []
    for e in ev:
        if e.get("cat") == "gpu_memcpy" and "DtoH" in e.get("name", "") and e.get("args", {}).get("bytes") == 1:
            out.append(e["dur"] * 1000)
    return sorted(out), sorted({e.get("name") for e in ev if e.get("cat") == "gpu_memcpy" and "DtoH" in e.get("name", "")})


def q(v, p):
    return v[min(len(v) - 1, int(p * len(v)))]


def main():
    x = torch.randn(4096, device=dev, dtype=torch.float16)
    big = torch.empty(4 << 30, dtype=torch.uint8, device=dev)
    other = torch.empty(1 << 30, dtype=torch.uint8, device=dev)
    w = [torch.randn(8192, 8192, device=dev, dtype=torch.float16) for _ in range(16)]  # 2 GiB of weights
    a = torch.randn(2048, 8192, device=dev, dtype=torch.float16)

    def item():
        return (x > 0).all().item()  # a 1-byte bool, after a reduce_kernel, as traced

    def sweep(n):
        def f():
            big[:n].view(torch.int32).sum()  # SMs read n bytes
            return item()
        return f

    def gemms(k):
        def f():
            h = a
            for m in w[:k]:
                h = torch.mm(h, m)
            return item()
        return f

    def ce():
        other.copy_(big[: 1 << 30])  # the copy engine moves 1 GiB
        return item()

    def idle():
        time.sleep(0.002)
        return item()

    def fresh_host():
        # a new pinned buffer each time, as a cold caching host allocator gives
        h = torch.empty(1, dtype=torch.bool, pin_memory=True)
        h.copy_((x > 0).all().view(1), non_blocking=True)
        torch.cuda.current_stream().synchronize()
        return h

    cases = [("item", item), ("sweep64M,item", sweep(64 << 20)), ("sweep1G,item", sweep(1 << 30)),
             ("sweep4G,item", sweep(4 << 30)), ("gemms8(1GiB),item", gemms(8)), ("gemms16(2GiB),item", gemms(16)),
             ("ce1G,item", ce), ("idle2ms,item", idle), ("freshpinned", fresh_host)]
    for rnd in range(2):
        for name, fn in cases:
            fn()
            d, names = durations(fn)
            if not d:
                print(rnd, name, "no copies recorded", names)
                continue
            print(f"{rnd} {name:<20} n={len(d)} med {q(d, .5):5.0f} p10 {q(d, .1):5.0f} p90 {q(d, .9):5.0f} max {d[-1]:5.0f} {names}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
