"""What several GPU probes under scripts/gpu share: the kernel events of a
torch.profiler run, and a callable warmed up on a side stream, as CUDA
graph capture wants it."""
import json
import os
import tempfile

import torch


def kernel_events(prof):
    """The 'kernel' events of a finished torch.profiler run, in start
    order (each a Chrome-trace event: name, ts, dur in µs, ...)."""
    fd, path = tempfile.mkstemp(suffix='.json')
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            ev = [e for e in json.load(f)['traceEvents'] if e.get('cat') == 'kernel']
    finally:
        os.remove(path)
    ev.sort(key=lambda e: e['ts'])
    return ev


def kernel_durations(prof):
    """The kernels' durations (µs) of a finished torch.profiler run, by
    kernel name, in start order."""
    ds = {}
    for e in kernel_events(prof):
        ds.setdefault(e['name'], []).append(e['dur'])
    return ds


def warm_on_side_stream(fn, n=3):
    """Runs fn n times on a side stream, as CUDA graph capture wants a
    callable warmed up before it is captured."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(n):
            fn()
    torch.cuda.current_stream().wait_stream(s)


def decode_tensors(dev):
    """The tensors of the decode-step probes (gap_probe.py, icache_probe.py),
    seeded: x and y f16[2,2048], h f16[2,1,2048], w f16[2048,8192] and a
    f16[8192,8192] big enough to evict the L2."""
    torch.manual_seed(0)
    x = torch.randn(2, 2048, device=dev, dtype=torch.float16)
    y = torch.randn_like(x)
    h = torch.randn(2, 1, 2048, device=dev, dtype=torch.float16)
    w = torch.randn(2048, 8192, device=dev, dtype=torch.float16)
    big = torch.randn(8192, 8192, device=dev, dtype=torch.float16)
    return x, y, h, w, big
