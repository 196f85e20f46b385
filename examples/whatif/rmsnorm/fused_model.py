"""A Hugging Face model with rmsnorm_fused.cu really in place of its RMSNorm
chain: the program of issue 46's check of `kreplay whatif` against a real
run, served to `kreplay capture` as a workload spec's "command".

The model is built by kreplay's own runner (runner.py, which kreplay puts
on PYTHONPATH beside kreplay_runner): its build(spec) runs with the
spec's dtype, attention, workload, devices and seed, and with the model
of the command's args, so that a capture of this program is a capture of
the same spec with a "model" in place of the "command". The only
difference between the two modes is the RMSNorm modules' forward:

  "unfused"  the model as runner.py builds it: each RMSNorm is the eager
             chain (copy_, pow, mean, add, rsqrt, mul, copy_, mul: eight
             kernels in an f16 or bf16 model), what `kreplay whatif
             -replace llama-rmsnorm` finds in its trace;
  "fused"    every RMSNorm whose forward is that chain (CHAIN_CLASSES)
             calls the custom op kreplay_whatif::rmsnorm_fused instead:
             one launch of rmsnorm_fused.cu's kernel for the dtype
             (rmsnorm_fused for f16, rmsnorm_fused_bf16 for bf16), compiled
             here at load time with NVRTC for the device's architecture
             with the options kreplay's what-if compiles it with, and
             launched through the CUDA driver API on PyTorch's current
             stream with grid rows, block 256, as the what-if launches it
             (nvrtc_kernel.py).

The spec (scripts/gpu/specs/whatif/ has them):

  {"version": 1, "name": ..., "dtype": "bf16", "attention": "sdpa",
   "workload": {"kind": "prefill", "batch": 2, "seq": 2048},
   "command": {"argv": ["python3", "fused_model.py"], "dir": <this folder>,
               "args": {"mode": "fused", "model": {"config": {...}}}}}

At load, after the model is built (and its norms replaced), one inference
runs: in the fused mode each replaced module's first call also runs the
module's own chain on the same input and compares (the largest absolute
difference over the largest magnitude of the chain's output must be
within TOLERANCE, NaNs where the chain has them); a module that differs,
or one never called, fails the load with the numbers. The per-module
results are printed on stderr and, where $KREPLAY_FUSED_REPORT names a
file, appended to it as one JSON line per process (kreplay capture keeps
a runner's stderr only for its errors). torch.compile and tensor
parallelism are refused: the what-if is about the eager chain on one GPU.
"""
import json
import os
import sys
import time

import nvrtc_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL_FILE = os.path.join(HERE, "rmsnorm_fused.cu")

MODES = ("unfused", "fused")

# The kernel of rmsnorm_fused.cu for each of the spec's dtypes.
KERNELS = {"f16": "rmsnorm_fused", "bf16": "rmsnorm_fused_bf16"}

# Hugging Face transformers' RMSNorm classes whose forward is
# LlamaRMSNorm's chain (h = x.to(f32); h * rsqrt(h.pow(2).mean(-1,
# keepdim) + eps); w * h.to(x.dtype)), read in transformers' source
# (modeling_llama, modeling_mistral, modeling_qwen2, modeling_qwen3).
# Gemma's, (1 + w) in f32, is not. The first-call check tests it anyway.
CHAIN_CLASSES = ("LlamaRMSNorm", "MistralRMSNorm", "Qwen2RMSNorm", "Qwen3RMSNorm")

# The first-call check's tolerance: kreplay whatif's -tol default, relative
# to the largest magnitude of the chain's output.
TOLERANCE = 1e-2

OP_NAME = "kreplay_whatif::rmsnorm_fused"
REPORT_ENV = "KREPLAY_FUSED_REPORT"


def workload_spec(spec):
    """The mode of spec's command args and the spec runner.build takes:
    spec with the args' "model" in place of the "command". A ValueError
    names what is wrong."""
    cmd = spec.get("command")
    if not isinstance(cmd, dict) or not isinstance(cmd.get("args"), dict):
        raise ValueError('fused_model.py: the spec has no "command" with "args"')
    args = cmd["args"]
    unknown = sorted(set(args) - {"mode", "model"})
    if unknown:
        raise ValueError(f"fused_model.py: command.args: unknown {', '.join(unknown)} (want mode, model)")
    mode = args.get("mode")
    if mode not in MODES:
        raise ValueError(f"fused_model.py: command.args.mode: {mode!r}, want one of {', '.join(MODES)}")
    model = args.get("model")
    if not isinstance(model, dict) or not isinstance(model.get("config"), dict) or "model_type" not in model["config"]:
        raise ValueError('fused_model.py: command.args.model: want {"config": {"model_type": ..., ...}}, '
                         "a model as a spec's \"model\" has it resolved")
    if spec.get("compile"):
        raise ValueError('fused_model.py: "compile": the what-if compares the eager chain; leave torch.compile out')
    dist = spec.get("distributed")
    if (spec.get("parallel") or {}).get("tensor", 1) > 1 or (dist and int(dist.get("world_size", 1)) > 1):
        raise ValueError('fused_model.py: "parallel": one GPU only')
    dtype = spec.get("dtype", "f16")
    if mode == "fused" and dtype not in KERNELS:
        raise ValueError(f'fused_model.py: "dtype": {dtype!r}: rmsnorm_fused.cu has kernels for {", ".join(KERNELS)} only')
    out = {k: v for k, v in spec.items() if k != "command"}
    out["model"] = model
    return mode, out


def compare_stats(max_abs, scale, nan_mismatches, tolerance=TOLERANCE):
    """Whether a fused output passes the first-call check: no NaN where
    the chain has none (or the reverse), and the largest absolute
    difference within tolerance times the chain output's largest
    magnitude (exactly equal when that is 0)."""
    if nan_mismatches:
        return False
    if max_abs != max_abs:  # NaN
        return False
    return max_abs <= tolerance * scale if scale > 0 else max_abs == 0


def check_lines(checks):
    """The first-call check's lines, one per module, worst first."""
    rows = sorted(checks.items(), key=lambda kv: -kv[1]["rel_err"])
    return [f"  {name}: {c['shape']} {c['dtype']}: max |err| {c['max_abs_err']:.3g} of max |y| {c['scale']:.3g} "
            f"({c['rel_err']:.2e} relative), {c['differing']} of {c['elements']} elements differ, "
            f"{c['nan_mismatches']} NaN mismatches: {'ok' if c['ok'] else 'FAILED'}" for name, c in rows]


def summary(checks):
    """The check's totals over the modules."""
    if not checks:
        return {"modules": 0}
    worst = max(checks, key=lambda n: checks[n]["rel_err"])
    return {"modules": len(checks), "failed": sum(1 for c in checks.values() if not c["ok"]),
            "max_abs_err": max(c["max_abs_err"] for c in checks.values()),
            "max_rel_err": checks[worst]["rel_err"], "worst": worst,
            "differing": sum(c["differing"] for c in checks.values()),
            "elements": sum(c["elements"] for c in checks.values())}


def write_report(record, env=os.environ):
    """Appends record as one JSON line to $KREPLAY_FUSED_REPORT, if set."""
    path = env.get(REPORT_ENV)
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record, sort_keys=True) + "\n")


# What needs torch: imported by main(), so that the functions above run
# (and are tested) without it.
torch = runner = None
_kernels = {}  # (device index, torch dtype) -> nvrtc_kernel.RowNormKernel
_op = []  # the custom op, registered once per process


def compare(y, ref):
    """The first-call check of a fused output y against the chain's ref."""
    if y.shape != ref.shape or y.dtype != ref.dtype:
        raise RuntimeError(f"fused output {tuple(y.shape)} {y.dtype}, the chain's {tuple(ref.shape)} {ref.dtype}")
    yf, rf = y.float(), ref.float()
    yn, rn = yf.isnan(), rf.isnan()
    same = (yf == rf) | (yn & rn)
    diff = torch.where(same, torch.zeros_like(yf), (yf - rf).abs())
    max_abs = float(diff.max()) if diff.numel() else 0.0
    scale = float(rf.abs().masked_fill(rn, 0).max()) if rf.numel() else 0.0
    nan_mm = int((yn != rn).sum())
    c = dict(shape=list(y.shape), dtype=str(y.dtype).replace("torch.", ""), max_abs_err=max_abs, scale=scale,
             rel_err=max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else float("inf")),
             differing=int((~same).sum()), elements=y.numel(), nan_mismatches=nan_mm)
    c["ok"] = compare_stats(max_abs, scale, nan_mm)
    return c


def load_kernel(dev, dtype_name):
    """rmsnorm_fused.cu's kernel for dtype_name compiled with NVRTC for
    device dev and loaded in its context; returns it and what compiled it."""
    import site
    major, minor = torch.cuda.get_device_capability(dev)
    dirs = [os.path.dirname(os.path.dirname(torch.__file__))]
    for f in ("getsitepackages", "getusersitepackages"):  # a virtualenv's site may lack them
        try:
            v = getattr(site, f)()
            dirs.extend([v] if isinstance(v, str) else v)
        except AttributeError:
            pass
    cuda_major = int(torch.version.cuda.split(".")[0]) if torch.version.cuda else None
    nvrtc = nvrtc_kernel.NVRTC.load(nvrtc_kernel.nvrtc_candidates(os.environ, dirs, cuda_major))
    opts = nvrtc_kernel.compile_options(major, minor)
    with open(KERNEL_FILE) as f:
        src = f.read()
    t0 = time.perf_counter()
    cubin = nvrtc.compile(src, os.path.basename(KERNEL_FILE), opts)
    compile_s = time.perf_counter() - t0
    torch.cuda.set_device(dev)
    torch.zeros(1, device=dev)  # PyTorch's primary context current on this thread
    drv = nvrtc_kernel.Driver()
    name = KERNELS[dtype_name]
    k = nvrtc_kernel.RowNormKernel(drv, drv.function(cubin, name), name)
    ver = nvrtc.version()
    return k, dict(kernel=name, kernel_file=KERNEL_FILE, nvrtc_lib=nvrtc.path, nvrtc_version=f"{ver[0]}.{ver[1]}",
                   options=opts, cubin_bytes=len(cubin), compile_s=round(compile_s, 3))


def rmsnorm_fused(x, w, eps):
    """The custom op's implementation: y = RMSNorm of x's rows (its last
    dimension) with weight w, by one launch of the kernel loaded for x's
    device and dtype, on PyTorch's current stream."""
    k = _kernels.get((x.device.index, x.dtype))
    if k is None:
        raise RuntimeError(f"{OP_NAME}: no kernel loaded for {x.dtype} on {x.device}")
    cols = x.shape[-1]
    if w.dtype != x.dtype or w.dim() != 1 or w.shape[0] != cols or w.device != x.device:
        raise ValueError(f"{OP_NAME}: weight {tuple(w.shape)} {w.dtype} on {w.device} for x {tuple(x.shape)} "
                         f"{x.dtype} on {x.device}: want [{cols}] of x's dtype and device")
    x = x.contiguous()
    w = w.contiguous()
    y = torch.empty_like(x)
    rows = x.numel() // cols if cols else 0
    if rows:
        k.launch(x.data_ptr(), w.data_ptr(), y.data_ptr(), rows, cols, eps, torch.cuda.current_stream(x.device).cuda_stream)
    return y


def register_op():
    """The custom op kreplay_whatif::rmsnorm_fused(x, w, eps) -> y
    (torch.library.custom_op, CUDA only) around rmsnorm_fused, with a fake
    for tracing; registered once per process."""
    if _op:
        return _op[0]
    Tensor = torch.Tensor

    def impl(x: Tensor, w: Tensor, eps: float) -> Tensor:
        return rmsnorm_fused(x, w, eps)

    op = torch.library.custom_op(OP_NAME, impl, mutates_args=(), device_types="cuda")

    @op.register_fake
    def _(x, w, eps):
        return torch.empty_like(x, memory_format=torch.contiguous_format)

    _op.append(op)
    return op


def norms_of(model):
    """The model's RMSNorm modules: those whose class is in CHAIN_CLASSES,
    and the names of other classes named *RMSNorm (which fused mode
    refuses: their forward is not known to be the chain)."""
    chain, other = [], set()
    for name, m in model.named_modules():
        cls = type(m).__name__
        if cls in CHAIN_CLASSES:
            chain.append((name, m))
        elif cls.endswith("RMSNorm"):
            other.add(cls)
    return chain, sorted(other)


def eps_of(m, name):
    for attr in ("variance_epsilon", "eps"):
        v = getattr(m, attr, None)
        if isinstance(v, (int, float)):
            return float(v)
    raise ValueError(f"{name} ({type(m).__name__}): no variance_epsilon or eps")


def replace(norms, op, checks):
    """Replaces each norm's forward by the op, checking on its first call
    (checks[name] gets the result); returns a function that drops the
    checks, leaving the op alone in every forward."""
    plain = {}
    for name, m in norms:
        w, eps, chain = m.weight, eps_of(m, name), m.forward

        def fused(hidden_states, w=w, eps=eps):
            return op(hidden_states, w, eps)

        def checking(hidden_states, name=name, w=w, eps=eps, chain=chain, m=m):
            y = op(hidden_states, w, eps)
            if name not in checks:
                checks[name] = compare(y, chain(hidden_states))
            return y

        m.forward = checking
        plain[name] = (m, fused)

    def settle():
        for m, fused in plain.values():
            m.forward = fused
    return settle


def build(spec):
    """kreplay_runner's build: runner.build on the spec's model, its
    RMSNorms replaced in the fused mode, then one inference (the check)."""
    mode, mspec = workload_spec(spec)
    built = []
    orig_build_model = runner.build_model

    def build_model(s, dev):
        m = orig_build_model(s, dev)
        built.append((m, dev))
        return m

    runner.build_model = build_model  # build() looks it up when it runs
    try:
        run, info = runner.build(mspec)
    finally:
        runner.build_model = orig_build_model
    if len(built) != 1:
        raise RuntimeError(f"fused_model.py: runner.build built {len(built)} models, want 1")
    model, dev = built[0]
    norms, other = norms_of(model)
    if not norms:
        raise RuntimeError(f"fused_model.py: {type(model).__name__} has no RMSNorm of {', '.join(CHAIN_CLASSES)}"
                           + (f" (it has {', '.join(other)})" if other else ""))
    record = dict(pid=os.getpid(), time=time.time(), mode=mode, workload=spec.get("name"), device=dev.index,
                  gpu=torch.cuda.get_device_name(dev), dtype=mspec.get("dtype", "f16"), model=type(model).__name__,
                  norm_classes=sorted({type(m).__name__ for _, m in norms}), norms=len(norms))
    checks = {}
    if mode == "fused":
        if other:
            raise RuntimeError(f"fused_model.py: {', '.join(other)}: RMSNorm classes not known to be the chain "
                               f"({', '.join(CHAIN_CLASSES)} are); nothing replaced")
        dtype = runner.DTYPES[record["dtype"]]
        k, kinfo = load_kernel(dev, record["dtype"])
        _kernels[(dev.index, dtype)] = k
        record.update(kinfo)
        settle = replace(norms, register_op(), checks)
    t0 = time.perf_counter()
    run()
    torch.cuda.synchronize(dev)
    record["check_inference_s"] = round(time.perf_counter() - t0, 3)
    if mode == "fused":
        settle()
        missed = [n for n, _ in norms if n not in checks]
        record["check"] = summary(checks)
        record["checks"] = checks
        lines = check_lines(checks)
        print(f"fused_model.py: {len(norms)} RMSNorms replaced by {record['kernel']} (NVRTC {record['nvrtc_version']}, "
              f"{record['nvrtc_lib']}, {' '.join(record['options'])}); first-call check:", file=sys.stderr)
        print("\n".join(lines), file=sys.stderr)
        record["ok"] = not missed and record["check"]["failed"] == 0
        write_report(record)
        if missed:
            raise RuntimeError(f"fused_model.py: {len(missed)} replaced RMSNorms not called in the check inference: "
                               f"{', '.join(missed[:5])}")
        if record["check"]["failed"]:
            bad = [ln for ln in lines if ln.endswith("FAILED")]
            raise RuntimeError(f"fused_model.py: {OP_NAME} differs from the chain in {record['check']['failed']} of "
                               f"{len(checks)} modules (tolerance {TOLERANCE:g} of max |y|):\n" + "\n".join(bad[:5]))
    else:
        record["ok"] = True
        print(f"fused_model.py: unfused: {len(norms)} RMSNorms left as the chain", file=sys.stderr)
        write_report(record)
    info = dict(info or {}, mode=mode, rmsnorms=len(norms))
    if mode == "fused":
        info.update(kernel=record["kernel"], nvrtc=record["nvrtc_version"], max_rel_err=record["check"]["max_rel_err"])
    return run, info


def main():
    global torch, runner
    import kreplay_runner  # exits with the protocol's error line where torch or pynvml are missing
    # kreplay's runner.py, on PYTHONPATH beside kreplay_runner: importing it
    # also sets what it sets for every model it runs (TF32 off), in both
    # modes; it exits with the protocol's error line without transformers.
    import runner as r
    import torch as t
    torch, runner = t, r
    kreplay_runner.serve(build)


if __name__ == "__main__":
    main()
