# Probe (issue 14, 2026-11-25): does a kernel's time depend on the kernel
# that ran just before it? In the compiled decode's trace the weight GEMV
# `F.linear(x f16[2,2048], W f16[8192,2048])` takes 14.5 us after the Triton
# RMSNorm (gap ~20 us) and 13.7 us after the other GEMV (gap ~5 us); alone,
# back to back, 13.3 us. Times the GEMV (weights rotating over 4) after each
# of several predecessors, back to back and with a 20 us host gap; and a
# short elementwise kernel after a GEMV or after itself.
# With `inputs`: the GEMV after a predecessor that writes its input (as the
# RMSNorm does in the model), or that leaves 1-32 MB of dirty lines in the L2.
# Run on a GPU machine: python3 scripts/gpu/pred_probe.py [inputs]
import json, os, statistics, tempfile, time, torch
import torch.nn.functional as F
from torch.profiler import profile, ProfilerActivity

torch.manual_seed(0)
dev, f16 = 'cuda', torch.float16
x = torch.randn(2, 2048, device=dev, dtype=f16)
ws = [torch.randn(8192, 2048, device=dev, dtype=f16) * 0.02 for _ in range(4)]
h = torch.randn(2, 2048, device=dev, dtype=f16)
nw = torch.randn(2048, device=dev, dtype=f16)
small = torch.randn(2, 8192, device=dev, dtype=f16)


def rmsnorm(h, w):
    v = h.float().pow(2).mean(-1, keepdim=True)
    return (h.float() * torch.rsqrt(v + 1e-5)).half() * w


rms = torch.compile(rmsnorm)
for _ in range(5):
    rms(h, nw)
torch.cuda.synchronize()


def spin(us):
    t = time.perf_counter()
    while (time.perf_counter() - t) * 1e6 < us:
        pass


def timed(pred, target, key, gap, n=300):
    def step(i):
        if gap:
            torch.cuda.synchronize()
        pred(i)
        if gap:
            spin(gap)
        target(i)
    for i in range(20):
        step(i)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for i in range(n):
            step(i)
        torch.cuda.synchronize()
    f = tempfile.mktemp(suffix='.json')
    p.export_chrome_trace(f)
    ev = sorted((e for e in json.load(open(f))['traceEvents'] if e.get('cat') == 'kernel'), key=lambda e: e['ts'])
    os.remove(f)
    # the target is the last kernel of each step
    d = [e['dur'] for e in ev if key(e['name'])]
    d = d[len(d) // 4:]
    return statistics.median(d), len(d)


import sys
if sys.argv[1:] == ['inputs']:
    xo = torch.empty_like(x)
    dirty = {mb: torch.empty(mb * 2**19, device=dev, dtype=f16) for mb in (1, 4, 16, 32)}
    print('GEMV F.linear([2,2048], [8192,2048]), weights rotating over 4, after ...')
    cases = {
        'nothing': (lambda i: None, lambda i: F.linear(x, ws[i % 4])),
        'RMSNorm that writes its input': (lambda i: torch.mul(rms(h, nw), 1.0, out=xo), lambda i: F.linear(xo, ws[i % 4])),
    }
    for mb, t in dirty.items():
        cases[f'a fill leaving {mb} MB dirty'] = ((lambda t: lambda i: t.fill_(i))(t), lambda i: F.linear(x, ws[i % 4]))
    is_gemv = lambda n: 'nvjet' in n or 'gemv' in n or 'gemm' in n
    for gap in (0, 20):
        for name, (pred, tgt) in cases.items():
            m, c = timed(pred, tgt, is_gemv, gap)
            print(f'  gap {gap:2d} us  {name:32s} {m:6.2f} us (n={c})', flush=True)
    sys.exit(0)
gemv = lambda i: F.linear(x, ws[i % 4])
is_gemv = lambda n: 'nvjet' in n or 'gemv' in n or 'gemm' in n
preds = {
    'nothing': lambda i: None,
    'the GEMV (other weight)': lambda i: F.linear(x, ws[(i + 1) % 4]),
    'Triton RMSNorm (compiled)': lambda i: rms(h, nw),
    'elementwise add': lambda i: torch.add(h, h),
    'reduce (mean)': lambda i: h.float().mean(-1),
}
print('GEMV F.linear([2,2048], [8192,2048]) after ...')
for gap in (0, 20):
    for name, pred in preds.items():
        if name.startswith('the GEMV'):
            # both are GEMVs: time the second of each pair
            def key_pair():
                state = {'k': 0}
                def k(n):
                    if not is_gemv(n):
                        return False
                    state['k'] += 1
                    return state['k'] % 2 == 0
                return k
            m, c = timed(pred, gemv, key_pair(), gap)
        else:
            m, c = timed(pred, gemv, is_gemv, gap)
        print(f'  gap {gap:2d} us  {name:28s} {m:6.2f} us (n={c})', flush=True)
print('elementwise add f16[2,8192] after ...')
add = lambda i: torch.add(small, small)
for gap in (0, 20):
    for name, pred in (('nothing', lambda i: None), ('the GEMV', gemv), ('Triton RMSNorm', lambda i: rms(h, nw))):
        m, c = timed(pred, add, lambda n: 'elementwise' in n and 'triton' not in n, gap)
        print(f'  gap {gap:2d} us  {name:28s} {m:6.2f} us (n={c})', flush=True)
