# Probe (issue 14, 2026-11-25): why do 4-byte memsets (and 8-byte copies) replay at 0.85-0.88 us
# where the FP8 prefill traced them at 0.77 us? Times a 4-byte memset by its
# CUPTI record (torch.profiler) as PyTorch issues it (zero_, and inside a full
# max reduction), and through the driver as kreplay's tier 1 does
# (cuMemsetD8Async), with value 0 and 0x5a, as D8 x4 and D32 x1, one at a
# time, and queued on the GPU back to back or each after a small kernel.
# Prints the median per case.
# Run on a GPU machine: python3 scripts/gpu/memset_probe.py
import ctypes, statistics, torch
from profiled import gpu_events

cu = ctypes.CDLL("libcuda.so.1")
x = torch.zeros(1, dtype=torch.int32, device="cuda")
w = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16)
a = torch.randn(1024, device="cuda")
ids = torch.zeros(1, dtype=torch.int64, device="cuda")
host = torch.ones(1, dtype=torch.int64)
pinned = torch.ones(1, dtype=torch.int64).pin_memory()
stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
ptr = ctypes.c_uint64(x.data_ptr())


def d8(v):
    r = cu.cuMemsetD8Async(ptr, ctypes.c_ubyte(v), ctypes.c_size_t(4), stream)
    assert r == 0, r


def d32(v):
    r = cu.cuMemsetD32Async(ptr, ctypes.c_uint(v), ctypes.c_size_t(1), stream)
    assert r == 0, r


cases = {
    "torch zero_ (cudaMemsetAsync 0)": lambda: x.zero_(),
    "D8 x4 value 0": lambda: d8(0),
    "D8 x4 value 0x5a (kreplay tier 1)": lambda: d8(0x5A),
    "D32 x1 value 0": lambda: d32(0),
    "D32 x1 value 0x5a5a5a5a": lambda: d32(0x5A5A5A5A),
    "after add: D8 x4 value 0x5a": lambda: (torch.add(a, 1.0), d8(0x5A)),
    "after add: D8 x4 value 0": lambda: (torch.add(a, 1.0), d8(0)),
    "in w.abs().max() (as the FP8 trace)": lambda: w.abs().max(),
    # Queued behind a sleep kernel, the GPU runs them back to back, as
    # kreplay's batches of one memset do, or each right after a kernel, as
    # the model runs them.
    "queued 20 back to back: D8 x4 0x5a": lambda: (torch.cuda._sleep(100000), [d8(0x5A) for _ in range(20)]),
    "queued 20 after an add each: D8 x4 0x5a": lambda: (torch.cuda._sleep(100000), [(torch.add(a, 1.0), d8(0x5A)) for _ in range(20)]),
    # An 8-byte host-to-device copy from pageable memory, as a decode step
    # copies its ids: one at a time, after an add, and queued.
    "memcpy HtoD 8 B pageable": lambda: ids.copy_(host),
    "memcpy HtoD 8 B after an add": lambda: (torch.add(a, 1.0), ids.copy_(host)),
    "queued 20 memcpy HtoD 8 B pinned": lambda: (torch.cuda._sleep(100000), [ids.copy_(pinned, non_blocking=True) for _ in range(20)]),
    "queued 20 memcpy HtoD 8 B pinned after an add each": lambda: (torch.cuda._sleep(100000), [(torch.add(a, 1.0), ids.copy_(pinned, non_blocking=True)) for _ in range(20)]),
}


def memsets(fn, n):
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    ev = gpu_events(lambda: [fn() for _ in range(n)], ("gpu_memset", "gpu_memcpy"))
    return [e["dur"] for e in ev]


for name, fn in cases.items():
    d = memsets(fn, 40 if name.startswith("queued") else 400)
    if not d:
        print(f"{name:40s} no memset or memcpy records")
        continue
    q = statistics.quantiles(d, n=4)
    print(f"{name:40s} median {statistics.median(d):.3f} us  q1 {q[0]:.3f}  q3 {q[2]:.3f}  n={len(d)}", flush=True)
