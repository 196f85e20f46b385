# Probe (issue 14, 2026-11-25): a decode's weight GEMV read from DRAM. The
# compiled decode's gate/up GEMV `mm f16[2,2048] x [2048,8192]` traced 14.40 us
# and replayed by its captured kernel at 13.50 us, rotating through 4 weight
# sets of 32 MB (128 MB, 2.6x the L2). Does the replay read part of its weight
# from the L2 (lines that outlived 96 MB of other reads), or does the real run
# pay for something else (TLB reach over 2.4 GB of weights)? Times the GEMV by
# CUPTI with its weight rotating through N buffers, N = 1 to 64 (32 MB to
# 2 GB), after a clean 200 MB read, and inside a decode-like sequence of every
# layer's weights. Also an RMSNorm-ish mean and an add after the same.
# With `gaps`: the GEMV (weights rotating over 4) and the short kernels after
# host waits of 0-100 us (the GPU idle before each launch, as in a
# launch-bound decode), or after a GPU-side sleep kernel (SMs spinning,
# memory idle).
# Run on a GPU machine: python3 scripts/gpu/reuse_probe.py [gaps]
import statistics, sys, time, torch
from torch.profiler import profile, ProfilerActivity
import probelib
torch.manual_seed(0)
dev = 'cuda'
f16 = torch.float16
x = torch.randn(2, 2048, device=dev, dtype=f16)
ws = [torch.randn(2048, 8192, device=dev, dtype=f16) for _ in range(64)]
clean = torch.randn(100 * 2**20, device=dev, dtype=f16)  # 200 MB, read only
# One l1b-shaped layer's projections (q, k, v, o, gate, up, down) x 16 layers.
layer = [(2048, 2048), (2048, 512), (2048, 512), (2048, 2048), (2048, 8192), (2048, 8192), (8192, 2048)]
layers = [[torch.randn(k, n, device=dev, dtype=f16) for k, n in layer] for _ in range(16)]
h = torch.randn(2, 1, 2048, device=dev, dtype=f16)
y = torch.randn_like(x)


def kernels(fn, n):
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for i in range(n):
            fn(i)
        torch.cuda.synchronize()
    return probelib.kernel_events(p)


def median_of(ev, pick):
    d = [e['dur'] for e in ev if pick(e)]
    d = d[len(d) // 4:]
    return statistics.median(d), len(d)


def gemv_rotating(nbuf):
    def fn(i):
        torch.mm(x, ws[i % nbuf])
    ev = kernels(fn, 400)
    return median_of(ev, lambda e: 'nvjet' in e['name'] or 'gemv' in e['name'] or 'gemm' in e['name'])


def gemv_after_clean(nbuf):
    def fn(i):
        clean.sum()
        torch.mm(x, ws[i % nbuf])
    ev = kernels(fn, 200)
    return median_of(ev, lambda e: 'reduce' not in e['name'])


def decode_like():
    # Per layer in order: the seven projections, GEMVs of x; the gate's time.
    def fn(i):
        for L in layers:
            for j, w in enumerate(L):
                a = x if w.shape[0] == 2048 else torch.empty(2, 8192, device=dev, dtype=f16)
                torch.mm(a, w)
    ev = kernels(fn, 20)
    gemv = [e for e in ev if 'nvjet' in e['name'] or 'gemv' in e['name'] or 'gemm' in e['name']]
    # 7 GEMVs per layer; index 4 is the gate.
    gate = [e['dur'] for k, e in enumerate(gemv) if k % 7 == 4]
    gate = gate[len(gate) // 4:]
    return statistics.median(gate), len(gate)


def short_after(mode):
    # An RMSNorm-ish mean (cast, pow, mean) and an add, warm back to back, or
    # after a clean 200 MB read with their inputs re-touched just before.
    def fn(i):
        if mode == 'clean+producer':
            clean.sum()
            h.add_(0)  # the producer: writes h, as the residual add would
            x.add_(0)
        torch.add(x, y)
        h.float().pow(2).mean(-1, keepdim=True)
    ev = kernels(fn, 300)
    out = {}
    for e in ev:
        out.setdefault(e['name'][:70], []).append(e['dur'])
    return {k: (statistics.median(v[len(v) // 4:]), len(v)) for k, v in out.items()}


def spin(us):
    t = time.perf_counter()
    while (time.perf_counter() - t) * 1e6 < us:
        pass


def gaps():
    # Per launch: wait for the GPU, idle `us` on the host, then launch. Or,
    # with 'sleep', a GPU sleep kernel of about 20 us just before.
    big = torch.randn(64 * 2**20, device=dev, dtype=f16)  # 128 MB, to evict
    def run(what, mode, n=300):
        def fn(i):
            if mode == 'sleep':
                torch.cuda._sleep(40000)  # about 20 us at 1980 MHz
            elif mode > 0:
                torch.cuda.synchronize()
                spin(mode)
            what(i)
        ev = kernels(fn, n)
        return median_of(ev, lambda e: 'sleep' not in e['name'] and ('nvjet' in e['name'] or 'gemv' in e['name'] or 'elementwise' in e['name'] or 'reduce' in e['name']))
    cases = {
        'GEMV rotating over 4 (DRAM)': lambda i: torch.mm(x, ws[i % 4]),
        'GEMV one weight (L2)': lambda i: torch.mm(x, ws[0]),
        'add f16[2,2048] (L2)': lambda i: torch.add(x, y),
        'add f16[16M] (DRAM, 64 MB)': lambda i: torch.add(big[:16 * 2**20], big[32 * 2**20:48 * 2**20]),
    }
    for name, what in cases.items():
        for _ in range(20):
            what(0)
        row = []
        for mode in (0, 5, 20, 100, 'sleep'):
            m, c = run(what, mode, 200 if 'DRAM, 64' in name else 300)
            row.append(f'{mode}: {m:.2f}')
        print(f'  {name:30s} us after host gap 0/5/20/100 us and a GPU sleep: ' + ', '.join(row), flush=True)


if sys.argv[1:] == ['gaps']:
    gaps()
    sys.exit(0)
for _ in range(3):
    gemv_rotating(4)
print('GEMV mm f16[2,2048] x [2048,8192] (traced in the compiled decode: 14.40 us; captured replay rotating over 4: 13.50 us)')
for n in (1, 2, 4, 8, 16, 64):
    m, c = gemv_rotating(n)
    print(f'  rotating over {n:2d} weights ({32 * n:4d} MB): {m:6.2f} us (n={c})', flush=True)
for n in (1, 4, 64):
    m, c = gemv_after_clean(n)
    print(f'  after a clean 200 MB read, {n:2d} weights: {m:6.2f} us (n={c})', flush=True)
m, c = decode_like()
print(f'  the gate inside 16 layers of projections (2.3 GB): {m:6.2f} us (n={c})', flush=True)
for mode in ('warm', 'clean+producer'):
    for k, v in short_after(mode).items():
        print(f'  {mode:15s} {k:70s} {v[0]:6.2f} us (n={v[1]})', flush=True)
