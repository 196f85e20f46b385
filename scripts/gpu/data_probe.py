# Data probe: does an op's time depend on the values it reads? Runs one
# BLOOM-560M prefill (batch 4 x 512, random fp16 weights, as the shared
# traces) under a dispatch mode that keeps the inputs of the first call of
# each distinct tier-3 op (aten op, shapes, strides, dtypes), then times
# PyTorch's own kernel for each (torch.profiler/CUPTI; the op's kernel is the
# last of each iteration) after an L2 flush and a copy of its inputs from
# twins, once on the real inputs and once with every floating-point input
# replaced by uniform values in [-1, 1) (what kreplay fills), and prints
# what the softmax's real input holds and the softmax's time on uniform
# values under a causal mask.
#
# Usage: python3 data_probe.py             (the table)
#        python3 data_probe.py ncu         (one launch each of the softmax on
#                                           real and on uniform inputs and of
#                                           the broadcast add, between
#                                           cudaProfilerStart and Stop, for
#                                           ncu --profile-from-start off)
import json, statistics, sys
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.profiler import profile, ProfilerActivity
from transformers import BloomConfig, BloomForCausalLM

dev = "cuda"; f16, f32 = torch.float16, torch.float32
torch.backends.cuda.matmul.allow_tf32 = False
SKIP = ("mm", "addmm", "bmm", "baddbmm", "linear", "matmul", "view", "_unsafe_view", "expand", "slice",
        "select", "t", "transpose", "permute", "unsqueeze", "squeeze", "reshape", "detach", "alias",
        "empty", "empty_strided", "as_strided", "split", "split_with_sizes", "unbind", "_to_copy", "lift_fresh")


class Capture(TorchDispatchMode):
    """Keeps clones of the arguments of the first call of each distinct op."""

    def __init__(self):
        super().__init__()
        self.ops = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func.__name__.split(".")[0].rstrip("_")
        if name not in SKIP:
            flat = [a for a in list(args) + list(kwargs.values()) if isinstance(a, torch.Tensor)]
            if flat and all(t.is_cuda for t in flat):
                key = (str(func), tuple((tuple(t.shape), tuple(t.stride()), str(t.dtype)) for t in flat))
                if key not in self.ops:
                    clone = lambda a: a.clone() if isinstance(a, torch.Tensor) else a
                    self.ops[key] = (func, [clone(a) for a in args], {k: clone(v) for k, v in kwargs.items()})
        return func(*args, **kwargs)


def capture():
    cfg = BloomConfig(vocab_size=250880, hidden_size=1024, n_layer=24, n_head=16)
    torch.manual_seed(0)
    with torch.device(dev):
        m = BloomForCausalLM(cfg).to(f16).eval()
    g = torch.Generator(device=dev).manual_seed(1)
    ids = torch.randint(0, cfg.vocab_size, (4, 512), device=dev, generator=g)
    cap = Capture()
    with torch.no_grad():
        m(ids, use_cache=False)
        with cap:
            m(ids, use_cache=False)
    del m
    torch.cuda.empty_cache()
    return cap.ops


def uniform_like(t):
    """t's layout with uniform values in [-1, 1) when floating, else t."""
    if not t.is_floating_point():
        return t.clone()
    u = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=t.device)
    return u.uniform_(-1, 1)


flushbuf = torch.empty(100 << 20, device=dev, dtype=torch.uint8)


def flush(): flushbuf.fill_(1)


def timeit(body, iters=40):
    for _ in range(3): body()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(iters): body()
        torch.cuda.synchronize()
    p.export_chrome_trace("/tmp/data_probe.json")
    ev = sorted((e for e in json.load(open("/tmp/data_probe.json"))["traceEvents"] if e.get("cat") == "kernel"),
                key=lambda e: e["ts"])
    k = len(ev) // iters
    last = ev[k - 1::k] if k * iters == len(ev) else []
    return (statistics.median(e["dur"] for e in last), last[0]["name"]) if last else (0.0, "kernels vary")


def timed(func, args, kwargs):
    """Median of func's last kernel after a flush and a copy of its tensor inputs from twins."""
    ts = [a for a in list(args) + list(kwargs.values()) if isinstance(a, torch.Tensor)]
    twins = [t.clone() for t in ts]
    return timeit(lambda: (flush(), [t.copy_(s) for t, s in zip(ts, twins)], func(*args, **kwargs)))


def with_uniform(args, kwargs):
    sub = lambda a: uniform_like(a) if isinstance(a, torch.Tensor) else a
    return [sub(a) for a in args], {k: sub(v) for k, v in kwargs.items()}


def describe(key):
    func, shapes = key
    return func + " " + " ".join("%s%s" % (d.replace("torch.", ""), list(s)) for s, _, d in shapes)


def softmax_stats(x):
    x = x.float()
    mx = x.amax(-1, keepdim=True)
    e = torch.exp(x - mx)
    n = x.numel()
    print("softmax input: min %.1f max %.1f; <= -60000: %.1f%%; -inf: %.1f%%" % (
        x.min().item(), x.max().item(), 100 * (x <= -60000).sum().item() / n, 100 * torch.isinf(x).sum().item() / n))
    print("exp(x - rowmax): exactly 0: %.1f%%; subnormal: %.2f%%; 1e-30..1e-38: %.2f%%" % (
        100 * (e == 0).sum().item() / n, 100 * ((e > 0) & (e < 1.1754944e-38)).sum().item() / n,
        100 * ((e >= 1.1754944e-38) & (e < 1e-30)).sum().item() / n))


def table(ops):
    print("%-10s %-10s %-7s %s" % ("real_us", "uniform_us", "ratio", "op (first call in one prefill)"))
    for key, (func, args, kwargs) in ops.items():
        real, name = timed(func, args, kwargs)
        if real < 1.0:
            continue
        uargs, ukw = with_uniform(args, kwargs)
        uni, _ = timed(func, uargs, ukw)
        print("%-10.2f %-10.2f %-7.3f %s  [%s]" % (real, uni, real / uni if uni else 0, describe(key), name[:60]), flush=True)
    for key, (func, args, kwargs) in ops.items():
        if "_softmax" in key[0]:
            softmax_stats(args[0])
            masked = causal_uniform(args[0])
            t, _ = timed(func, [masked] + list(args[1:]), kwargs)
            print("softmax on uniform values with the causal mask (kreplay's CausalScores): %.2f us" % t)


def causal_uniform(x):
    """x's layout, uniform in [-1, 1), keys past their query at the dtype's lowest value."""
    u = uniform_like(x)
    q, k = x.shape[-2], x.shape[-1]
    past = torch.ones(q, k, dtype=torch.bool, device=x.device).triu(1 + k - q)
    return u.masked_fill_(past, torch.finfo(x.dtype).min)


def ncu(ops):
    pick = lambda s, shapes: [(k, v) for k, v in ops.items() if s in k[0] and [list(x[0]) for x in k[1]] == shapes]
    (_, (sf, sa, sk)), = pick("_softmax", [[4, 16, 512, 512]])
    (_, (af, aa, ak)), = pick("add", [[4, 16, 512, 512], [4, 1, 512, 512]])
    ua, uk = with_uniform(sa, sk)
    for f, a, k in ((sf, sa, sk), (sf, ua, uk), (af, aa, ak)):
        f(*a, **k)
    torch.cuda.synchronize(); torch.cuda.cudart().cudaProfilerStart()
    for f, a, k in ((sf, sa, sk), (sf, ua, uk), (af, aa, ak)):
        flush(); f(*a, **k)
    torch.cuda.synchronize(); torch.cuda.cudart().cudaProfilerStop()


ops = capture()
ncu(ops) if sys.argv[1:] == ["ncu"] else table(ops)
