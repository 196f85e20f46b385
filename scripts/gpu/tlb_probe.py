# Probe (issue 14, 2026-11-26): why do embedding gathers replay fast? The
# eager index kernel (the model's first, rows of a 525 MB table) replays
# at 4.8-7.1 us where the trace has 7.3-13.1, and Inductor's reductions
# that fuse the embedding at x0.67-0.88. Hypothesis: the TLB. Between two
# gathers of the table the real model reads gigabytes of weights, so the
# table's pages are no longer in the GPU's TLBs; a replay that gathers the
# same rows again finds them there (an L2 flush does not touch the TLBs).
# Times the gather (CUPTI, torch.profiler) back to back, after an L2
# flush, after a flush and a walk over N GB that touches one word per
# 2 MB page, and after a flush and a sweep that reads 2.4 GB (the weights
# of a 1.2B f16 model). Prints the median per case.
# With "idle": after a flush and 0-1000 ms of the GPU idle instead.
# Run on a GPU machine: python3 scripts/gpu/tlb_probe.py [idle]
import statistics
import sys
import time

import torch
from profiled import gpu_events

dev = torch.device("cuda")
g = torch.Generator(device=dev).manual_seed(1)
table = torch.randn(128256, 2048, device=dev, dtype=torch.float16)
ids = torch.randint(0, 128256, (4, 512), device=dev, generator=g)
flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
walk = torch.zeros((32 << 30) // 4, dtype=torch.float32, device=dev)  # 32 GB
weights = torch.empty((2400 << 20) // 2, dtype=torch.float16, device=dev)
PAGE = (2 << 20) // 4  # f32 words per 2 MB


def gather():
    return torch.nn.functional.embedding(ids, table)


def touch(gb):
    walk[: (gb << 30) // 4 : PAGE].add_(1.0)


cases = {
    "back to back": lambda: None,
    "after an L2 flush": lambda: flush.fill_(1),
    "after a flush and a 2 GB page walk": lambda: (flush.fill_(1), touch(2)),
    "after a flush and an 8 GB page walk": lambda: (flush.fill_(1), touch(8)),
    "after a flush and a 32 GB page walk": lambda: (flush.fill_(1), touch(32)),
    "after a flush and a 2.4 GB weight sweep": lambda: (weights.sum(), flush.fill_(1)),
}


def idle(s):
    def pre():
        flush.fill_(1)
        torch.cuda.synchronize()
        time.sleep(s)
    return pre


# The GPU idle before the gather, as before a profiled inference (the
# profiler's start): the SM clock falls while the GPU idles.
if "idle" in sys.argv[1:]:
    cases = {"after an L2 flush": cases["after an L2 flush"]}
    for ms in (0, 1, 10, 100, 300, 1000):
        cases[f"after a flush and {ms} ms of GPU idle"] = idle(ms / 1e3)


def timed(pre, n=30):
    n = 10 if "idle" in sys.argv[1:] else n
    for _ in range(3):
        pre()
        gather()
    torch.cuda.synchronize()
    ev = gpu_events(lambda: [(pre(), gather()) for _ in range(n)])
    # The gather is the kernel whose name says index or embedding.
    d = [e["dur"] for e in ev if "ndex" in e["name"] or "mbedding" in e["name"] or "gather" in e["name"]]
    return d, sorted({e["name"][:60] for e in ev})


for name, pre in cases.items():
    d, names = timed(pre)
    if not d:
        print(f"{name:42s} no gather kernel among {names}")
        continue
    q = statistics.quantiles(d, n=4) if len(d) > 1 else [d[0]] * 3
    print(f"{name:42s} median {statistics.median(d):.2f} us  q1 {q[0]:.2f}  q3 {q[2]:.2f}  n={len(d)}", flush=True)
