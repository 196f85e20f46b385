# Probe (issue 14, twelfth session): does a 4-byte memset stretch because
# the launch behind it arrives while it runs? Each round synchronizes,
# launches an elementwise kernel of about 8 us, a 4-byte cuMemsetD8Async,
# spins the CPU for D us, then launches a heavy kernel (a cuBLAS GEMM, or
# cuDNN's attention with its own memset), and times everything by CUPTI
# (torch.profiler) as a trace does. Per D it prints the memset's median and
# quartiles, the idle gap before it, and where the heavy launch's API call
# ended relative to the memset's start and end (before/during/after).
#   cd scripts/gpu && python3 memset_arrival_probe.py
import ctypes
import json
import os
import statistics
import tempfile
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile

dev = "cuda"
src = torch.randn(2, 2048, 32, 64, dtype=torch.bfloat16, device=dev).transpose(1, 2)
a = torch.randn(4096, 2048, dtype=torch.bfloat16, device=dev)
w = torch.randn(2048, 2048, dtype=torch.bfloat16, device=dev)
q = torch.randn(2, 32, 2048, 64, dtype=torch.bfloat16, device=dev)
cu = ctypes.CDLL("libcuda.so.1")
stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
cell = torch.zeros(1, dtype=torch.int32, device=dev)


def memset():
    assert cu.cuMemsetD8Async(ctypes.c_uint64(cell.data_ptr()), ctypes.c_ubyte(0), ctypes.c_size_t(4), stream) == 0


def spin(us):
    end = time.perf_counter_ns() + int(us * 1000)
    while time.perf_counter_ns() < end:
        pass


def gemm():
    torch.mm(a, w)


def sdpa():
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        F.scaled_dot_product_attention(q, q, q, is_causal=True)


def rounds(heavy, d, n=40):
    for _ in range(n):
        torch.cuda.synchronize()
        spin(200)
        src.contiguous()
        memset()
        spin(d)
        heavy()
    torch.cuda.synchronize()


def events(fn):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        fn()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        p.export_chrome_trace(path)
        with open(path) as f:
            return json.load(f)["traceEvents"]
    finally:
        os.remove(path)


def analyse(ev):
    gpu = sorted((e for e in ev if e.get("cat") in ("kernel", "gpu_memset")), key=lambda e: e["ts"])
    api = sorted((e for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver")
                  and "aunch" in e["name"]), key=lambda e: e["ts"])
    corr_api = {e["args"].get("correlation"): e for e in api}
    durs, gaps, where = [], [], {"before": 0, "during": 0, "after": 0}
    mine = [i for i, e in enumerate(gpu) if e["cat"] == "gpu_memset" and i > 0 and "elementwise" in gpu[i - 1]["name"]]
    for i in mine:
        m = gpu[i]
        durs.append(m["dur"])
        gaps.append(m["ts"] - (gpu[i - 1]["ts"] + gpu[i - 1]["dur"]))
        # the next kernel that is not a memset: the heavy one
        nxt = next((e for e in gpu[i + 1:] if e["cat"] == "kernel"), None)
        call = corr_api.get(nxt["args"].get("correlation")) if nxt else None
        if call is None:
            continue
        t = call["ts"] + call["dur"]
        where["before" if t < m["ts"] else "during" if t < m["ts"] + m["dur"] else "after"] += 1
    return durs, gaps, where


for hname, heavy in (("GEMM", gemm), ("cuDNN SDPA", sdpa)):
    rounds(heavy, 0, n=5)
    for d in (0, 2, 4, 6, 8, 10, 12, 15, 20, 40):
        durs, gaps, where = analyse(events(lambda: rounds(heavy, d)))
        if len(durs) < 4:
            print(f"{hname:10s} spin {d:3d} us: {len(durs)} memsets")
            continue
        qs = statistics.quantiles(durs, n=4)
        print(f"{hname:10s} spin {d:3d} us: memset median {statistics.median(durs):.3f} us, quartiles {qs[0]:.3f}-{qs[2]:.3f}, max {max(durs):.3f}, "
              f"idle before {statistics.median(gaps):.2f} us; heavy launch returned {where}; n {len(durs)}")
