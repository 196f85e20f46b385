# Probe (issue 13/15, 2026-11-25): is a short kernel slower, by its CUPTI time,
# when many different small kernels ran between its launches (as in a decode
# step, where each layer's dozens of kernels cycle through the instruction
# cache and the SMs' launch state) than back to back, as kreplay replays it?
# Prints the median kernel time of each probed op per mode: back to back; with
# 16 other small elementwise kernels between launches; with one 134 MB kernel
# between launches. Run on a GPU machine: python3 scripts/gpu/icache_probe.py
import statistics, torch
import probelib
from torch.profiler import profile, ProfilerActivity
dev = 'cuda'
x, y, h, w, big = probelib.decode_tensors(dev)
z = torch.randn(2, 4096, device=dev, dtype=torch.float32)
others = [torch.exp, torch.sin, torch.cos, torch.tanh, torch.sigmoid, torch.relu, torch.neg, torch.abs,
          torch.sqrt, torch.rsqrt, torch.log, torch.erf, torch.floor, torch.ceil, torch.sign, torch.square]
ops = {
  'add f16[2,2048]': lambda: torch.add(x, y),
  'mean f32[2,1,2048]': lambda: h.float().pow(2).mean(-1, keepdim=True),
  'gemv [2,2048]x[2048,8192]': lambda: torch.mm(x, w),
}
def measure(fn, mode, n=300):
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for i in range(n):
            if mode == 'sixteen others between':
                for f in others:
                    f(z)
            elif mode == 'one 134 MB kernel between':
                torch.mul(big, 2.0)
            fn()
        torch.cuda.synchronize()
    return probelib.kernel_durations(p)
for name, fn in ops.items():
    for _ in range(20):
        fn()
    base, names = None, None
    for mode in ['back to back', 'sixteen others between', 'one 134 MB kernel between']:
        ds = measure(fn, mode)
        if names is None:  # the probed op's kernels, as they ran alone
            names = {k for k, v in ds.items() if len(v) % 300 == 0}
        t = sum(statistics.median(ds[k][len(ds[k])//4:]) for k in names if k in ds)
        base = base or t
        print(f'{name:28s} {mode:28s} {t:8.2f} us  x{t/base:.3f}  ({len(names)} kernels)')
