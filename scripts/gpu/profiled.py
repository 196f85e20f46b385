"""profiled: the GPU activities of a function run under torch.profiler, for
the probes in scripts/gpu (memset_probe.py, memset_clock_probe.py,
memset_alloc_probe.py, memset_neighbour_probe.py), which time them by their
CUPTI records as a trace does."""
import json
import os
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile


def gpu_events(fn, cats=("kernel",)):
    """Runs fn() under torch.profiler (CUDA activities), waits for the GPU,
    and returns the trace events whose category is in cats, by start time."""
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        p.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    finally:
        os.remove(path)
    return sorted((e for e in events if e.get("cat") in cats), key=lambda e: e["ts"])
