# Probe (issue 14, 2026-11-26): does a tiny kernel's traced time follow the
# SM clock? The bf16 SDPA prefill (GPU-bound, power-capped 97% of its
# measured run, SM at about 1600 MHz) traces cuDNN's 4-byte memsets at
# 0.99 us where kreplay replays them at 0.77 (the GPU boosted to 1980 MHz,
# nothing heavy around them); the launch-bound FP8 prefill (1980 MHz) traces
# them at 0.77. Here a 4-byte memset (cuMemsetD8Async, as kreplay's tier 1)
# and a one-element add run: alone on an idle GPU; right behind one large
# bf16 GEMM on a cool GPU; and behind two GEMMs each while GEMMs run back to
# back for seconds (the power cap pulls the clock down). CUPTI times them
# (torch.profiler); a thread samples the SM clock and throttle reasons with
# NVML every 2 ms. Prints per case the medians and the mean clock, and the
# memset predicted from the idle case by the clock ratio.
# Run on a GPU machine: python3 scripts/gpu/memset_clock_probe.py
import ctypes
import statistics
import threading
import time

import pynvml
import torch
from profiled import gpu_events

cu = ctypes.CDLL("libcuda.so.1")
x = torch.zeros(1, dtype=torch.int32, device="cuda")
y = torch.zeros(1, dtype=torch.float32, device="cuda")
stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
ptr = ctypes.c_uint64(x.data_ptr())
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
c = torch.empty(8192, 8192, device="cuda", dtype=torch.bfloat16)
pynvml.nvmlInit()
h = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())


def d8():
    r = cu.cuMemsetD8Async(ptr, ctypes.c_ubyte(0x5A), ctypes.c_size_t(4), stream)
    assert r == 0, r


def gemm():
    torch.mm(a, b, out=c)


class Clock(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.samples, self.stop = [], False

    def run(self):
        while not self.stop:
            self.samples.append((pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                                 pynvml.nvmlDeviceGetCurrentClocksEventReasons(h)))
            time.sleep(0.002)


def case(name, fn):
    k = Clock()
    k.start()
    ev = gpu_events(fn, ("kernel", "gpu_memset"))
    k.stop = True
    k.join()
    ms = [e["dur"] for e in ev if e.get("cat") == "gpu_memset"]
    adds = [e["dur"] for e in ev if e.get("cat") == "kernel" and "gemm" not in e["name"].lower()
            and "cutlass" not in e["name"].lower() and "nvjet" not in e["name"].lower() and e["dur"] < 20]
    gemms = [e["dur"] for e in ev if e["dur"] >= 20]
    clk = [s[0] for s in k.samples]
    capped = sum(1 for s in k.samples if s[1] & 0x4) / max(1, len(k.samples))
    return dict(case=name, memset_us=statistics.median(ms) if ms else None, n=len(ms),
                add_us=statistics.median(adds) if adds else None,
                gemm_us=statistics.median(gemms) if gemms else None,
                sm_mhz=statistics.mean(clk) if clk else None, power_capped=round(capped, 2))


def alone(n=60):
    for _ in range(n):
        d8()
        y.add_(1)
        torch.cuda.synchronize()
        time.sleep(0.002)


def cool_behind(n=30):
    for _ in range(n):
        gemm()
        d8()
        y.add_(1)
        torch.cuda.synchronize()
        time.sleep(0.1)


def hot_behind(n=150):
    for _ in range(n):
        gemm()
        d8()
        gemm()
        y.add_(1)


def heat(s=3.0):
    t = time.perf_counter()
    while time.perf_counter() - t < s:
        for _ in range(20):
            gemm()
        torch.cuda.synchronize()


for _ in range(3):
    gemm(), d8(), y.add_(1)
torch.cuda.synchronize()
rows = [case("alone, idle GPU", alone), case("behind one GEMM, cool GPU", cool_behind)]
heat()
rows.append(case("behind GEMMs back to back, hot GPU", hot_behind))
time.sleep(3)
rows.append(case("alone again, after 3 s idle", alone))
base = rows[0]
for r in rows:
    pred = base["memset_us"] * base["sm_mhz"] / r["sm_mhz"] if r["sm_mhz"] and base["sm_mhz"] else None
    print(f"{r['case']:40s} memset {r['memset_us']} us (n {r['n']}), add {r['add_us']} us, gemm {r['gemm_us']} us, "
          f"SM {r['sm_mhz']:.0f} MHz, power-capped {r['power_capped']:.0%}; memset by the clock ratio {pred:.3f} us")
