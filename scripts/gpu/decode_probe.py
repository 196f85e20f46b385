# Probe (issue 14, 2026-11-25): why does the compiled decode's weight GEMV
# take 14.4 us in the traced model but about 13.1-13.5 us replayed alone?
# Builds the l1b-compile-decode workload as `kreplay capture` does (the
# runner's build), profiles one inference, then, in the same process and
# profiler session, F.linear on the same activations shape over
#   (a) the model's own gate weights, layer after layer (its memory);
#   (b) fresh weights of the same shape (new memory, same values' law);
#   (c) the model's gate weights with every other projection of each layer
#       in between (the decode's order, no non-GEMM kernels).
# The GEMV kernel's median CUPTI time in each, against the in-model one.
# Run on a GPU machine: python3 scripts/gpu/decode_probe.py [SPEC]
import json, os, statistics, sys
import torch
import torch.nn.functional as F
from torch.profiler import profile, ProfilerActivity

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..', 'internal', 'runner'))
import runner  # noqa: E402
sys.path.insert(0, os.path.dirname(__file__))
import probelib  # noqa: E402

spec = json.load(open(sys.argv[1] if len(sys.argv) > 1 else 'scripts/gpu/specs/l1b-compile-decode.json'))
spec.setdefault('devices', [0])
spec.setdefault('seed', 0)
run, info = runner.build(spec)
for _ in range(3):
    run()
torch.cuda.synchronize()

# The model: find the decoder layers' projections.
model = next(c.cell_contents for c in run.__closure__ if isinstance(c.cell_contents, torch.nn.Module))
layers = model.model.layers
gate = [L.mlp.gate_proj.weight for L in layers]
proj = [[L.self_attn.q_proj.weight, L.self_attn.k_proj.weight, L.self_attn.v_proj.weight,
         L.self_attn.o_proj.weight, L.mlp.gate_proj.weight, L.mlp.up_proj.weight, L.mlp.down_proj.weight]
        for L in layers]
dt = gate[0].dtype
x = torch.randn(2, 2048, device='cuda', dtype=dt)
xd = torch.randn(2, 8192, device='cuda', dtype=dt)
fresh = [torch.randn_like(w) * 0.02 for w in gate]


def section(fn, n):
    for i in range(n):
        fn(i)


def durations(p):
    return probelib.kernel_events(p)


def gemv_name(ev):
    # the traced gate/up GEMV: the most frequent kernel of about 14 us
    names = {}
    for e in ev:
        if 10 <= e['dur'] <= 20:
            names[e['name']] = names.get(e['name'], 0) + 1
    return max(names, key=names.get)


with profile(activities=[ProfilerActivity.CUDA]) as p:
    run()
    torch.cuda.synchronize()
ev = durations(p)
name = gemv_name(ev)
inmodel = [e['dur'] for e in ev if e['name'] == name]
print(f'kernel {name[:80]}')
print(f'  in the model: median {statistics.median(inmodel):.2f} us (n={len(inmodel)})', flush=True)

cases = {
    "(a) model's gate weights in turn": lambda i: F.linear(x, gate[i % len(gate)]),
    '(b) fresh weights in turn': lambda i: F.linear(x, fresh[i % len(fresh)]),
    '(c) every projection in decode order': lambda i: [F.linear(xd if w.shape[1] == 8192 else x, w) for w in proj[i % len(proj)]],
    "(d) one model gate weight (L2)": lambda i: F.linear(x, gate[0]),
}
for label, fn in cases.items():
    section(fn, 16)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        section(fn, 160)
        torch.cuda.synchronize()
    d = [e['dur'] for e in durations(p) if e['name'] == name]
    if d:
        print(f'  {label:40s} median {statistics.median(d[len(d) // 4:]):.2f} us (n={len(d)})', flush=True)
    else:
        print(f'  {label:40s} ran another kernel', flush=True)
