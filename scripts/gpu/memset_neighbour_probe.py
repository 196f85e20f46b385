# Probe (issue 14, 2026-11-26, tenth session): the bf16 SDPA prefill's
# trace times the 4-byte memset that cuDNN's attention issues before its
# kernel at 0.74-2.02 us (median 1.13), the memsets before its GEMMs at
# 0.70-1.06, and the FP8 prefill's at 0.74-0.86; kreplay's tier 1 replays
# the cuDNN one alone at 0.77-0.80. Does the launch after the memset (the
# cuDNN kernel) or the one before it (an elementwise kernel of about 8 us)
# stretch it, and does it matter whether the CPU runs ahead? Times each case
# by CUPTI (torch.profiler), as the trace did, and prints the memsets'
# median and quartiles, and what ran before and after them.
#   cd scripts/gpu && python3 memset_neighbour_probe.py
import ctypes
import statistics
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from profiled import gpu_events

dev = "cuda"
q = torch.randn(2, 32, 2048, 64, dtype=torch.bfloat16, device=dev)
k = torch.randn(2, 32, 2048, 64, dtype=torch.bfloat16, device=dev)
v = torch.randn(2, 32, 2048, 64, dtype=torch.bfloat16, device=dev)
# an elementwise kernel of about 8 us, as before the trace's memsets: a
# strided copy of 8 MiB
src = torch.randn(2, 2048, 32, 64, dtype=torch.bfloat16, device=dev).transpose(1, 2)
a = torch.randn(4096, 2048, dtype=torch.bfloat16, device=dev)
w = torch.randn(2048, 2048, dtype=torch.bfloat16, device=dev)
cu = ctypes.CDLL("libcuda.so.1")
stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
cell = torch.zeros(1, dtype=torch.int32, device=dev)


def ew():
    src.contiguous()


def sdpa():
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        F.scaled_dot_product_attention(q, k, v, is_causal=True)


def memset():
    assert cu.cuMemsetD8Async(ctypes.c_uint64(cell.data_ptr()), ctypes.c_ubyte(0), ctypes.c_size_t(4), stream) == 0


def mm():
    torch.mm(a, w)


def seq(*ops, n=32, apart=False):
    def run():
        for _ in range(n):
            for op in ops:
                op()
            if apart:
                torch.cuda.synchronize()
                time.sleep(0.002)
    return run


cases = [
    ("elementwise, SDPA; ahead", seq(ew, sdpa)),
    ("elementwise, SDPA; apart", seq(ew, sdpa, apart=True)),
    ("SDPA; ahead", seq(sdpa)),
    ("SDPA; apart", seq(sdpa, apart=True)),
    ("elementwise, memset; ahead", seq(ew, memset)),
    ("elementwise, memset, GEMM; ahead", seq(ew, memset, mm)),
    ("memset, GEMM; ahead", seq(memset, mm)),
    ("elementwise, memset, SDPA; ahead", seq(ew, memset, sdpa)),
    ("memset; ahead", seq(memset, n=200)),
    ("memset; apart", seq(memset, apart=True)),
]


def short(name):
    for key in ("cudnn", "nvjet", "elementwise", "Memset", "cutlass", "flash"):
        if key in name:
            return key
    return name[:20]


for name, run in cases:
    run()
    torch.cuda.synchronize()
    for rep in range(2):
        ev = [e for e in gpu_events(run, ("kernel", "gpu_memset"))]
        d, before, after = [], {}, {}
        for i, e in enumerate(ev):
            if e["cat"] != "gpu_memset":
                continue
            d.append(e["dur"])
            b = short(ev[i - 1]["name"]) if i else "-"
            a_ = short(ev[i + 1]["name"]) if i + 1 < len(ev) else "-"
            before[b] = before.get(b, 0) + 1
            after[a_] = after.get(a_, 0) + 1
        if len(d) < 2:
            print(f"{name:36s} rep {rep}: {len(d)} memsets")
            continue
        qs = statistics.quantiles(d, n=4)
        print(f"{name:36s} rep {rep}: memset median {statistics.median(d):.3f} us, quartiles {qs[0]:.3f}-{qs[2]:.3f}, max {max(d):.3f}, n {len(d)}; before {before}, after {after}")
