# Probe (issue 13/15, 2026-11-25): does a short kernel take longer, by its CUPTI
# time, when the GPU idles before it (as in a launch-bound decode) than back to
# back? Prints the median kernel time per mode: back to back, host waits of
# 5-1000 us between launches, and a 134 MB kernel between launches.
# Run on a GPU machine: python3 scripts/gpu/gap_probe.py
import time, statistics, torch, sys
import probelib
from torch.profiler import profile, ProfilerActivity
dev = 'cuda'
x, y, h, w, big = probelib.decode_tensors(dev)
ops = {
  'add f16[2,2048]': lambda: torch.add(x, y),
  'rmsnorm-ish mean f32[2,1,2048]': lambda: h.float().pow(2).mean(-1, keepdim=True),
  'gemv [2,2048]x[2048,8192]': lambda: torch.mm(x, w),
}
def spin(us):
    t = time.perf_counter()
    while (time.perf_counter() - t) * 1e6 < us: pass
def measure(name, fn, mode, n=400):
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for i in range(n):
            if mode == 'other-between':
                torch.mul(big, 2.0)  # a different, large kernel between
            fn()
            if mode.startswith('gap'):
                torch.cuda.synchronize(); spin(float(mode[3:]))
        torch.cuda.synchronize()
    ds = probelib.kernel_durations(p)
    return {k: (statistics.median(v[n//4:]), len(v)) for k, v in ds.items()}
for name, fn in ops.items():
    for _ in range(50): fn()
    for mode in ['b2b', 'gap5', 'gap20', 'gap100', 'gap1000', 'other-between']:
        r = measure(name, fn, mode)
        s = '; '.join(f"{k[:60]} {v[0]:.2f}us (n={v[1]})" for k, v in sorted(r.items(), key=lambda kv: -kv[1][1]) if v[1] >= 300)
        print(f"{name:32s} {mode:14s} {s}", flush=True)
