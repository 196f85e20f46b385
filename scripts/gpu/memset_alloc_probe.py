# Probe (issue 14, 2026-11-26): kreplay's tier 1 times a 4-byte memset's
# single invocations at a median of 0.800 us (cuMemsetD8Async, value 0x5A,
# on a cuMemAlloc'd buffer of its own, about 450 direct launches back to
# back), where torch.profiler timed the same driver call at 0.704-0.736 us
# on a PyTorch tensor (memset_ctx_probe.py, memset_clock_probe.py) and the
# traces have 0.70 (after a long GPU idle gap) to 1.38 us. Which part of
# kreplay's way makes the difference: the buffer (its own allocation or a
# tensor in PyTorch's pool), the value, the element size, or the back-to-back
# launches? A 2 MiB allocation of its own, the size of PyTorch's pool
# segments, is a case too: does the size matter? Times each case by CUPTI
# (torch.profiler) and prints the median and quartiles. Run beside
# `kreplay run -tiers 1` on the same machine.
#   cd scripts/gpu && python3 memset_alloc_probe.py
import ctypes
import statistics
import time

import torch
from profiled import gpu_events

cu = ctypes.CDLL("libcuda.so.1")
t = torch.zeros(1, dtype=torch.int32, device="cuda")
stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
own = ctypes.c_uint64(0)
assert cu.cuMemAlloc_v2(ctypes.byref(own), ctypes.c_size_t(4)) == 0
own2 = ctypes.c_uint64(0)
assert cu.cuMemAlloc_v2(ctypes.byref(own2), ctypes.c_size_t(2 << 20)) == 0
tensor = ctypes.c_uint64(t.data_ptr())


def d8(p, v):
    def f():
        assert cu.cuMemsetD8Async(p, ctypes.c_ubyte(v), ctypes.c_size_t(4), stream) == 0
    return f


def d32(p, v):
    def f():
        assert cu.cuMemsetD32Async(p, ctypes.c_uint(v), ctypes.c_size_t(1), stream) == 0
    return f


def back_to_back(op, n=450):
    def run():
        for _ in range(n):
            op()
    return run


def one_at_a_time(op, n=60):
    def run():
        for _ in range(n):
            op()
            torch.cuda.synchronize()
            time.sleep(0.002)
    return run


cases = [
    ("tensor, D8 0x5A, back to back", back_to_back(d8(tensor, 0x5A))),
    ("own 4 B alloc, D8 0x5A, back to back", back_to_back(d8(own, 0x5A))),
    ("own 4 B alloc, D8 0, back to back", back_to_back(d8(own, 0))),
    ("own 4 B alloc, D32 0x5A5A5A5A, back to back", back_to_back(d32(own, 0x5A5A5A5A))),
    ("own 2 MiB alloc, D8 0x5A, back to back", back_to_back(d8(own2, 0x5A))),
    ("tensor, D8 0x5A, one at a time", one_at_a_time(d8(tensor, 0x5A))),
    ("own 2 MiB alloc, D8 0x5A, one at a time", one_at_a_time(d8(own2, 0x5A))),
    ("own 4 B alloc, D8 0x5A, one at a time", one_at_a_time(d8(own, 0x5A))),
]
for name, run in cases:
    run()
    torch.cuda.synchronize()
    for rep in range(2):
        d = [e["dur"] for e in gpu_events(run, ("gpu_memset",))]
        q = statistics.quantiles(d, n=4)
        print(f"{name:45s} rep {rep}: median {statistics.median(d):.3f} us, quartiles {q[0]:.3f}-{q[2]:.3f}, n {len(d)}")
