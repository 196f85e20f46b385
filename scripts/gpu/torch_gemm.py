"""Times GEMM signatures with PyTorch and compares with kreplay's Measure.

Usage: python3 torch_gemm.py SET.json RUN.json[,RUN2.json,...] [ID ...]

SET.json is a signature set (kreplay import), RUN.json the output of
`kreplay run -cache warm -json` for the same IDs. For each ID, the op is
rebuilt with the traced shapes, strides and dtypes (random inputs, torch.
as_strided views), warmed up, then timed with torch.cuda.Event around
replays of a CUDA graph of about 1 ms of calls, after a 50 ms pause and
20 ms of warm-up, 30 samples back to back (as `kreplay run -cache warm
-mintime 30ms` times it: a graph, so that the host's launch rate does not
count, and a short burst after a pause, so that neither side runs at a
power cap that depends on what ran before). As many torch passes run as
kreplay runs are given; the median of each side's medians is compared.
COOLDOWN_S=0.02 idles 20 ms before each sample, as `kreplay run -cooldown
20ms` does, which keeps both sides at the boost clock instead of a power
cap that depends on the GPU's recent history. Warm cache on
both sides: the same buffers every call. Use ops that launch one kernel
(mm, addmm): torch's baddbmm also copies self into the output first.
"""
import json, os, statistics, sys
import torch

import probelib

torch.backends.cuda.matmul.allow_tf32 = False
DT = {"c10::Half": torch.float16, "c10::BFloat16": torch.bfloat16, "float": torch.float32}

def tensor(inp):
    shape, strides = inp["shape"], inp.get("strides") or []
    size = 1 + sum((d - 1) * s for d, s in zip(shape, strides)) if shape else 1
    base = torch.empty(max(size, 1), dtype=DT[inp["type"]], device="cuda").uniform_(-1, 1)
    return torch.as_strided(base, shape, strides)

def scalar(inp, default):
    try:
        return float(inp.get("value", "").rstrip(".") or default)
    except ValueError:
        return default

def build(sig):
    ins, op = sig["inputs"], sig["op"]
    if op == "aten::mm":
        a, b = tensor(ins[0]), tensor(ins[1])
        return lambda: torch.mm(a, b)
    if op == "aten::bmm":
        a, b = tensor(ins[0]), tensor(ins[1])
        return lambda: torch.bmm(a, b)
    if op == "aten::addmm":
        c, a, b = tensor(ins[0]), tensor(ins[1]), tensor(ins[2])
        beta, alpha = scalar(ins[3], 1), scalar(ins[4], 1)
        return lambda: torch.addmm(c, a, b, beta=beta, alpha=alpha)
    if op == "aten::baddbmm":
        c, a, b = tensor(ins[0]), tensor(ins[1]), tensor(ins[2])
        beta, alpha = scalar(ins[3], 1), scalar(ins[4], 1)
        return lambda: torch.baddbmm(c, a, b, beta=beta, alpha=alpha)
    raise SystemExit(f"{sig['id']}: op {op} is not a GEMM this script knows")

COOLDOWN_S = float(os.environ.get("COOLDOWN_S", "0"))

def time_op(fn, pause_s=0.05, warmup_s=0.02, samples=30, batch_s=1e-3, cooldown_s=None):
    """Times fn as `kreplay run -cache warm -mintime 30ms` does: idle for
    pause_s, warm up for warmup_s, capture a CUDA graph of about batch_s of
    calls, then time samples graph replays back to back, each between two
    events; returns the median per call in ns."""
    import time
    time.sleep(pause_s)
    fn(); torch.cuda.synchronize()
    t0 = time.perf_counter(); n = 0
    while time.perf_counter() - t0 < warmup_s:
        fn(); n += 1
        if n % 8 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    per_call = (time.perf_counter() - t0) / n
    inner = max(1, round(batch_s / per_call))
    probelib.warm_on_side_stream(fn)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(inner):
            fn()
    g.replay(); torch.cuda.synchronize()
    if cooldown_s is None:
        cooldown_s = COOLDOWN_S
    per = []
    for _ in range(samples):
        if cooldown_s > 0:
            time.sleep(cooldown_s)
        b, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        b.record()
        g.replay()
        e.record()
        e.synchronize()
        per.append(b.elapsed_time(e) * 1e6 / inner)  # ns
    return statistics.median(per)

def main():
    sset = json.load(open(sys.argv[1]))
    runs = [json.load(open(f)) for f in sys.argv[2].split(",")]
    ids = sys.argv[3:]
    sigs = {s["id"]: s for s in sset["signatures"]}
    # kreplay's value: the median of its medians over the runs given.
    ours = {}
    for run in runs:
        for r in run:
            for e in r["entries"]:
                ours.setdefault(e["id"], []).append(e)
    print(f"{'id':14} {'torch_us':>9} {'kreplay_us':>10} {'diff':>7}  label")
    worst = 0.0
    for i in ids:
        es = ours.get(i, [])
        if not es or not all(e.get("result") for e in es):
            print(f"{i}: no kreplay result ({[e.get('error') for e in es]})")
            worst = float("inf")
            continue
        fn = build(sigs[i])
        t = statistics.median([time_op(fn) for _ in range(len(es))])
        k = statistics.median([e["result"]["median_ns"] for e in es])
        d = k / t - 1
        worst = max(worst, abs(d))
        print(f"{i:14} {t/1e3:9.2f} {k/1e3:10.2f} {100*d:+6.2f}%  {sigs[i]['label']}")
    print(f"largest difference {100*worst:.2f}% ({'within' if worst <= 0.03 else 'OUTSIDE'} 3%)")

main()
