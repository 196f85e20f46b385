# Probe (issue 14, 2026-11-25): does a prefill GEMM replayed back to back run
# slower than in its model because the GPU holds its power limit by lowering
# the SM clock, and the GEMM alone draws more than the model's mix? Times the
# compiled Llama-1B prefill's gate/up GEMM (mm f16[2048,2048] x [2048,8192],
# 91.8 us traced in the model at 695 W) back to back, alternating with a
# memory-bound kernel of about its length, with idle host gaps, and in short
# bursts after a pause, each for about 2 s so that the power limit settles;
# prints its median CUPTI time and NVML's power and throttle reasons.
# Run on a GPU machine: python3 scripts/gpu/power_probe.py
import json, os, statistics, tempfile, time, threading, torch
from torch.profiler import profile, ProfilerActivity

try:
    import pynvml
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
except Exception as e:  # the probe still times without NVML
    print("no NVML:", e)
    h = None

torch.manual_seed(0)
sets = [(torch.randn(2048, 2048, device="cuda", dtype=torch.float16),
         torch.randn(2048, 8192, device="cuda", dtype=torch.float16)) for _ in range(3)]
big = torch.randn(64 << 20, device="cuda", dtype=torch.float16)  # 128 MB: ~70 us of copy


def gemm(i):
    a, b = sets[i % 3]
    return torch.mm(a, b)


def spin(us):
    t = time.perf_counter()
    while (time.perf_counter() - t) * 1e6 < us:
        pass


modes = {
    "back to back": lambda i: gemm(i),
    "alternating with a 128 MB mul": lambda i: (gemm(i), torch.mul(big, 1.0001)),
    "2 GEMMs then a 128 MB mul": lambda i: (gemm(i), gemm(i + 1), torch.mul(big, 1.0001)),
    "host gap 100 us": lambda i: (gemm(i), torch.cuda.synchronize(), spin(100)),
    "bursts of 11, 5 ms pause": lambda i: (gemm(i), (torch.cuda.synchronize(), time.sleep(0.005)) if i % 11 == 10 else None),
}


def sample_power(stop, out):
    while not stop.is_set():
        try:
            out.append((pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0,
                        pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(h)))
        except Exception:
            pass
        time.sleep(0.01)


for name, step in modes.items():
    t0 = time.time()
    i = 0
    while time.time() - t0 < 1.5:  # settle
        step(i)
        i += 1
    torch.cuda.synchronize()
    stop, pw = threading.Event(), []
    th = threading.Thread(target=sample_power, args=(stop, pw))
    if h is not None:
        th.start()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        t0 = time.time()
        while time.time() - t0 < 0.5:
            step(i)
            i += 1
        torch.cuda.synchronize()
    stop.set()
    if h is not None:
        th.join()
    f = tempfile.mktemp(suffix=".json")
    p.export_chrome_trace(f)
    ds = [e["dur"] for e in json.load(open(f))["traceEvents"]
          if e.get("cat") == "kernel" and ("gemm" in e["name"].lower() or "nvjet" in e["name"] or "cutlass" in e["name"])]
    os.remove(f)
    pwr = statistics.mean(x[0] for x in pw) if pw else float("nan")
    reasons = sorted({x[1] for x in pw})
    print(f"{name:32s} gemm median {statistics.median(ds):7.2f} us (n={len(ds)})  power {pwr:6.1f} W  throttle reasons {reasons}", flush=True)
    time.sleep(0.5)
