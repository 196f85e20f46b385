"""Times tensor.item()'s 1-byte copy to the host after the GPU sat idle
for 0 to 3 s, under torch.profiler, as a profiled inference starts.

Issue 14: the traced prefills' item() copies took 1728 ns (bf16 SDPA) and
2112-2144 ns (FP8), the first of a MoE decode 1952 ns and of a compiled
decode 1728 ns, the others 1376-1472 ns; replayed, 1407-1440 ns. Earlier
probes found no change after up to 50 ms of host idle. kreplay's capture
profiles its one inference after the profiler starts up (and, when it
measures in the same process, after a second of idle-power metering):
the copy may pay for waking something from a longer idle.

Each trial: synchronize, sleep IDLE, launch a few small kernels 50 us of
host time apart (as a prefill's first millisecond does), then
(x > 0).all().item(). Cases, in a shuffled order, REPS times each:
- idle IDLE s;
- idle IDLE s, then NVML's PCIe link generation, performance state and SM
  clock read just before the copy (a separate case: reading may wake it);
- idle IDLE s, then a 64 KiB host-to-device copy before the small kernels;
- idle IDLE s, then 5 ms of GEMMs before the small kernels.
Prints one line per case and idle: the copies' median, min and max (ns),
and for the NVML case what it read.
"""
import os
import random
import sys
import time

import pynvml
import torch
from kineto_events import events
from torch.profiler import ProfilerActivity, profile

IDLES = [float(v) for v in os.environ.get("IDLES", "0,0.01,0.05,0.2,0.5,1,2,3").split(",")]
REPS = int(os.environ.get("REPS", "3"))


def spin(us):
    t = time.perf_counter() + us * 1e-6
    while time.perf_counter() < t:
        pass


def main():
    dev = torch.device("cuda")
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
    x = torch.ones(4, device=dev, dtype=torch.bool)
    small = torch.arange(2048, device=dev)
    hostbuf = torch.empty(1 << 16, dtype=torch.uint8, pin_memory=True)
    devbuf = torch.empty(1 << 16, dtype=torch.uint8, device=dev)
    a = torch.randn(4096, 4096, device=dev, dtype=torch.float16)
    nv = {}

    def trial(case, idle):
        torch.cuda.synchronize()
        time.sleep(idle)
        if case == "h2d":
            devbuf.copy_(hostbuf, non_blocking=True)
        if case == "gemm":
            for _ in range(20):  # about 5 ms on an H100
                torch.mm(a, a)
        for _ in range(4):
            small.add_(1)
            spin(50)
        if case == "nvml":
            nv.setdefault(idle, []).append((pynvml.nvmlDeviceGetCurrPcieLinkGeneration(h),
                                            pynvml.nvmlDeviceGetCurrPcieLinkWidth(h),
                                            pynvml.nvmlDeviceGetPerformanceState(h),
                                            pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)))
        with torch.profiler.record_function(f"probe:{case}:{idle}"):
            v = (x > 0).all().item()
        return v

    plan = [(c, i) for c in ("idle", "nvml", "h2d", "gemm") for i in IDLES for _ in range(REPS)]
    random.Random(1).shuffle(plan)
    trial("idle", 0)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        time.sleep(0.5)
        for c, i in plan:
            trial(c, i)
        torch.cuda.synchronize()
    ev = events(prof)
    # A copy belongs to the probe range that launched it: match by the
    # runtime call's correlation id, inside the range's host span.
    ranges = [e for e in ev if e.get("ph") == "X" and str(e.get("name", "")).startswith("probe:")
              and e.get("cat") == "user_annotation"]
    calls = {e["args"]["correlation"]: e for e in ev if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    res = {}
    for e in ev:
        if e.get("cat") != "gpu_memcpy" or "DtoH" not in e.get("name", "") or e.get("args", {}).get("bytes") != 1:
            continue
        c = calls.get(e["args"].get("correlation"))
        if c is None:
            continue
        for r in ranges:
            if r["ts"] <= c["ts"] <= r["ts"] + r["dur"]:
                res.setdefault(r["name"], []).append(e["dur"] * 1000)
                break
    for c in ("idle", "nvml", "h2d", "gemm"):
        for i in IDLES:
            d = sorted(res.get(f"probe:{c}:{i}", []))
            if not d:
                print(f"{c:<5} idle {i:>5} s: no copies matched")
                continue
            extra = f"  nvml (gen, width, P, SM MHz): {nv.get(i)}" if c == "nvml" else ""
            print(f"{c:<5} idle {i:>5} s: n={len(d)} median {d[len(d) // 2]:5.0f} min {d[0]:5.0f} max {d[-1]:5.0f}{extra}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
