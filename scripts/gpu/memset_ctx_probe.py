# Probe (issue 14, 2026-11-25): what sets a 4-byte memset's time? The
# traces have it at 0.70-0.77 us where the GPU was idle before it (decodes,
# BLOOM-560M prefill) and at 0.97-1.11 us (range 0.70-1.47) right behind
# Llama-7B prefill's large elementwise kernels. Here a memset
# (cuMemsetD8Async, 4 bytes, as kreplay's tier 1) runs back to back, on a stream
# or in a CUDA graph as kreplay's batches run it, or follows a kernel that
# writes MB megabytes (fill_) or reads them (sum), either queued right
# behind it on the GPU, or after the host waited for it (the GPU idle, the
# kernel's dirty lines still in the L2). CUPTI times the memsets
# (torch.profiler). Prints the median and quartiles per case.
# Run on a GPU machine: python3 scripts/gpu/memset_ctx_probe.py
import ctypes
import statistics
import time

import torch
from profiled import gpu_events

cu = ctypes.CDLL("libcuda.so.1")
x = torch.zeros(1, dtype=torch.int32, device="cuda")
stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
ptr = ctypes.c_uint64(x.data_ptr())


def d8():
    r = cu.cuMemsetD8Async(ptr, ctypes.c_ubyte(0x5A), ctypes.c_size_t(4), stream)
    assert r == 0, r


def timed(fn, n):
    fn(5)
    torch.cuda.synchronize()
    return [e["dur"] for e in gpu_events(lambda: fn(n), ("gpu_memset",))]


def queued(pre):
    def fn(n):
        torch.cuda._sleep(2000000)
        for _ in range(n):
            pre()
            d8()
    return fn


def idle(pre):
    def fn(n):
        for _ in range(n):
            pre()
            torch.cuda.synchronize()
            time.sleep(50e-6)
            d8()
            torch.cuda.synchronize()
    return fn


def graphed(n):
    """n memsets captured in a CUDA graph, as kreplay's batches run them."""
    gr = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        global stream
        keep, stream = stream, ctypes.c_void_p(s.cuda_stream)
        with torch.cuda.graph(gr, stream=s):
            for _ in range(n):
                d8()
        stream = keep
    return gr


_graphs = {}


def in_graph(n):
    if n not in _graphs:
        _graphs[n] = graphed(n)
    _graphs[n].replay()


_graphs[5], _graphs[40] = graphed(5), graphed(40)  # captured before the profiler runs


cases = {"back to back (stream)": lambda n: (torch.cuda._sleep(2000000), [d8() for _ in range(n)]),
         "back to back in a CUDA graph (kreplay's batches)": in_graph,
         "each alone, GPU idle": idle(lambda: None)}
small = torch.zeros(16, device="cuda")
cases["queued behind an add of 64 B"] = queued(lambda: small.add_(1.0))
for mb in (1, 8, 32, 128):
    t = torch.empty(mb << 18, device="cuda")  # mb MB of f32
    cases[f"queued behind a fill writing {mb} MB"] = queued(lambda t=t: t.fill_(1.0))
    cases[f"idle after a fill writing {mb} MB"] = idle(lambda t=t: t.fill_(1.0))
    cases[f"queued behind a sum reading {mb} MB"] = queued(lambda t=t: t.sum())

for name, fn in cases.items():
    d = timed(fn, 40)
    q = statistics.quantiles(d, n=4)
    print(f"{name:42s} median {statistics.median(d):.3f} us  q1 {q[0]:.3f}  q3 {q[2]:.3f}  n={len(d)}", flush=True)
