"""kreplay's full-model runner: real inference of a Hugging Face causal LM,
built from a workload spec, served to kreplay by kreplay_runner (the line
protocol, the timing, NVML metering, profiling and kernel recording are
there; this file only builds the model and its inference).

The spec is the one kreplay resolved (workload/spec.go): the model's
config is inline ("model": {"config": {...}}), so no file and no network
is needed. Weights are random from the spec's seed, as the shipped traces'
were, unless "weights" is "pretrained" (then "dir" holds them). TF32 is
off, as it was for the traces.

Tensor parallel: with "parallel": {"tensor": N} kreplay starts N of these
runners, one per rank, and kreplay_runner has joined the ranks' NCCL
process group before build runs. The model is then sharded as
transformers shards it: from_pretrained(..., tp_plan="auto"), which needs
the model type's tensor-parallel plan (its config class's
base_model_tp_plan: llama, mistral, mixtral, qwen2, qwen3, gemma, phi3,
among others, in transformers 4.51 on; not gpt2, bloom, opt). Random
weights are drawn on rank 0 from the seed, as on one GPU, and written to a
scratch checkpoint that every rank then loads sharded; a model without a
plan is a clear error.
"""
import gc
import os
import shutil
import tempfile

import sys

import kreplay_runner as kr

try:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
except Exception as e:  # noqa: BLE001 - report any import failure plainly
    kr.fail_start(f"{sys.executable} cannot import the runner's modules: {e!r}")
try:
    from transformers import LogitsProcessor, LogitsProcessorList
except ImportError:  # a transformers without them: generate's tokens go unmarked
    LogitsProcessor = LogitsProcessorList = None

torch.backends.cuda.matmul.allow_tf32 = False

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}

# float8_e4m3fn's largest finite value.
FP8_MAX = 448.0


class FP8Linear(torch.nn.Module):
    """nn.Linear in FP8 through torch._scaled_mm, the product in the
    activation's dtype. Tensorwise: the weight quantized once to
    float8_e4m3fn with one scale, the activation with one on the fly.
    Rowwise: one scale per output channel of the weight (float32 [1,N]) and
    per row of the activation ([M,1]), with fast accumulation, as rowwise
    FP8 recipes (torchao's float8 rowwise) call it."""

    def __init__(self, lin, rowwise=False):
        super().__init__()
        self.in_features, self.out_features = lin.in_features, lin.out_features
        self.rowwise = rowwise
        w = lin.weight.detach().float()
        if rowwise:
            ws = (w.abs().amax(dim=1, keepdim=True) / FP8_MAX).clamp(min=1e-12)  # [N,1]
        else:
            ws = (w.abs().max() / FP8_MAX).clamp(min=1e-12).reshape(())
        self.register_buffer("wq", (w / ws).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn))
        # float32: 0-dim (tensorwise) or [1,N] (rowwise)
        self.register_buffer("w_scale", ws.t().contiguous() if rowwise else ws)
        self.bias = lin.bias

    def forward(self, x):
        lead = x.shape[:-1]
        x2 = x.reshape(-1, self.in_features).contiguous()
        if self.rowwise:
            xs = (x2.abs().amax(dim=1, keepdim=True).float() / FP8_MAX).clamp(min=1e-12)  # [M,1]
        else:
            xs = (x2.abs().max().float() / FP8_MAX).clamp(min=1e-12)
        xq = (x2 / xs).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
        # _scaled_mm takes a bias in the output's 16-bit dtype only.
        fused = self.bias is not None and x.dtype in (torch.float16, torch.bfloat16)
        y = torch._scaled_mm(xq, self.wq.t(), scale_a=xs, scale_b=self.w_scale, out_dtype=x.dtype,
                             bias=self.bias if fused else None, use_fast_accum=self.rowwise)
        if self.bias is not None and not fused:
            y = y + self.bias
        return y.reshape(*lead, self.out_features)


def to_fp8(model, dev, rowwise=False):
    """Replaces every nn.Linear but the LM head with an FP8Linear."""
    mode = "fp8-rowwise" if rowwise else "fp8"
    if torch.cuda.get_device_capability(dev) < (8, 9):
        raise ValueError(f'"linear": "{mode}" needs a GPU of compute capability 8.9 or later (FP8 tensor cores); '
                         f"device {dev} is {'.'.join(map(str, torch.cuda.get_device_capability(dev)))}")
    head = model.get_output_embeddings()
    targets, bad = [], []
    for name, mod in model.named_modules():
        for cname, child in mod.named_children():
            full = f"{name}.{cname}" if name else cname
            if not isinstance(child, torch.nn.Linear) or child is head or cname == "lm_head":
                continue
            if child.in_features % 16 or child.out_features % 16:
                bad.append(f"{full} ({child.in_features} -> {child.out_features})")
            targets.append((mod, cname, child))
    if bad:
        raise ValueError(f'"linear": "{mode}": torch._scaled_mm needs dimensions that are multiples of 16; '
                         f"{len(bad)} linear layers are not: {', '.join(bad[:5])}")
    for mod, cname, child in targets:
        setattr(mod, cname, FP8Linear(child, rowwise))
    torch.cuda.empty_cache()
    return len(targets)


class TokenMark(LogitsProcessor or object):
    """Marks each generated token in the host's schedule
    (kreplay_runner.mark_token) and passes the scores through unchanged:
    it adds no GPU work."""

    def __call__(self, input_ids, scores):
        kr.mark_token()
        return scores


def token_marks():
    """generate's keyword arguments that mark each generated token: a
    TokenMark logits processor, where transformers has them."""
    return dict(logits_processor=LogitsProcessorList([TokenMark()])) if LogitsProcessorList else {}


def build_model(spec, dev):
    m = spec["model"]
    dtype = DTYPES[spec.get("dtype", "f16")]
    kw = {}
    if spec.get("attention"):
        kw["attn_implementation"] = spec["attention"]
    torch.manual_seed(int(spec.get("seed", 0)))
    if m.get("weights") == "pretrained":
        try:
            model = AutoModelForCausalLM.from_pretrained(m["dir"], dtype=dtype, local_files_only=True, **kw)
        except TypeError:  # transformers 4: torch_dtype
            model = AutoModelForCausalLM.from_pretrained(m["dir"], torch_dtype=dtype, local_files_only=True, **kw)
        return model.to(dev).eval()
    cfg = dict(m["config"])
    model_type = cfg.pop("model_type")
    config = AutoConfig.for_model(model_type, **cfg)
    with dev:
        try:
            model = AutoModelForCausalLM.from_config(config, dtype=dtype, **kw)
        except TypeError:  # transformers 4: torch_dtype
            model = AutoModelForCausalLM.from_config(config, torch_dtype=dtype, **kw)
    return model.to(dtype).eval()


def compiled(fn, c, generate):
    if generate:
        # Every decode step has a longer KV cache: let dynamo recompile
        # (and mark the length dynamic) instead of falling back to eager.
        torch._dynamo.config.cache_size_limit = max(torch._dynamo.config.cache_size_limit, 64)
    kw = dict(mode=c.get("mode", "default"), fullgraph=bool(c.get("fullgraph", False)))
    if c.get("dynamic") is not None:
        kw["dynamic"] = bool(c["dynamic"])
    return torch.compile(fn, **kw)


def tp_plan_of(config):
    """The model type's tensor-parallel plan (base_model_tp_plan), or a
    ValueError that says there is none."""
    plan = getattr(config, "base_model_tp_plan", None)
    if not plan:
        import transformers
        raise ValueError(f'"parallel": transformers {transformers.__version__} has no tensor-parallel plan for model type '
                         f'{config.model_type!r} (its config has no base_model_tp_plan); tp_plan="auto" needs one '
                         f'(llama, mistral, mixtral, qwen2, qwen3, gemma, phi3, ... have one)')
    return plan


def from_pretrained_tp(path, dtype, kw):
    """The checkpoint at path loaded sharded over the ranks
    (tp_plan="auto", transformers' own tensor parallelism)."""
    try:
        model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype, tp_plan="auto", local_files_only=True, **kw)
    except TypeError:  # transformers 4: torch_dtype
        model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=dtype, tp_plan="auto", local_files_only=True, **kw)
    return model.eval()


def build_model_tp(spec, dev):
    """The model of spec, sharded over the ranks of kreplay_runner's group
    (tp_plan="auto"): pretrained from its directory, or random weights
    drawn on rank 0 from the seed and passed through a scratch checkpoint
    beside the system's temporary files (removed once every rank loaded
    it)."""
    import torch.distributed as tdist
    m = spec["model"]
    dtype = DTYPES[spec.get("dtype", "f16")]
    kw = {"attn_implementation": spec["attention"]} if spec.get("attention") else {}
    if m.get("weights") == "pretrained":
        tp_plan_of(AutoConfig.from_pretrained(m["dir"], local_files_only=True))
        return from_pretrained_tp(m["dir"], dtype, kw)
    cfg = dict(m["config"])
    tp_plan_of(AutoConfig.for_model(cfg.pop("model_type"), **cfg))
    d = spec["distributed"]
    scratch = os.path.join(os.environ.get("KREPLAY_TP_SCRATCH") or tempfile.gettempdir(),
                           f"kreplay-tp-{d['master_port']}")
    if kr.rank() == 0:
        single = dict(spec, distributed=None)
        build_model(single, dev).save_pretrained(scratch)
        gc.collect()
        torch.cuda.empty_cache()
    tdist.barrier(device_ids=[dev.index])
    try:
        torch.manual_seed(int(spec.get("seed", 0)))
        model = from_pretrained_tp(scratch, dtype, kw)
    finally:
        tdist.barrier(device_ids=[dev.index])
        if kr.rank() == 0:
            shutil.rmtree(scratch, ignore_errors=True)
    return model


def build(spec):
    d = spec.get("distributed")
    tp = bool(d) and int(d.get("world_size", 1)) > 1
    dev = torch.device("cuda", int(d["device"]) if tp else int(spec["devices"][0]))
    if tp and spec.get("linear"):
        raise ValueError(f'"linear": "{spec["linear"]}" with "parallel": FP8 linear layers are not sharded; leave one out')
    model = build_model_tp(spec, dev) if tp else build_model(spec, dev)
    info = {"attention": getattr(model.config, "_attn_implementation", None) or "",
            "parameters": sum(p.numel() for p in model.parameters())}
    if tp:
        info["tensor_parallel"] = int(d["world_size"])
    if spec.get("linear") in ("fp8", "fp8-rowwise"):
        info["fp8_linears"] = to_fp8(model, dev, rowwise=spec["linear"] == "fp8-rowwise")
    w = spec["workload"]
    vocab = model.config.vocab_size
    g = torch.Generator(device=dev).manual_seed(int(spec.get("seed", 0)) + 1)
    c = spec.get("compile")
    if w["kind"] == "generate":
        ids = torch.randint(0, vocab, (int(w.get("batch", 1)), int(w["prompt"])), device=dev, generator=g)
        n = int(w["new_tokens"])
        gen = {}
        if c and c.get("mode") in ("reduce-overhead", "max-autotune"):
            # CUDA graphs: the one way that ran on the lent H200 (PyTorch
            # 2.11, transformers 5.17; scripts/gpu/cudagraph_decode_probe.py)
            # is transformers' own: a static KV cache, which the graphs
            # update in place, and generate compiling the decode steps
            # itself (the prefill runs eager). Compiling model.forward
            # ourselves failed with either cache, or crashed.
            from transformers import CompileConfig
            kw = dict(mode=c["mode"])
            if c.get("fullgraph"):
                kw["fullgraph"] = True
            if c.get("dynamic") is not None:
                kw["dynamic"] = bool(c["dynamic"])
            gen = dict(cache_implementation="static", compile_config=CompileConfig(**kw))
            info["compile"] = "by transformers' generate (static KV cache; the prefill eager)"
        elif c:
            model.forward = compiled(model.forward, c, True)

        marks = token_marks()

        def run():
            with torch.no_grad():
                model.generate(ids, max_new_tokens=n, min_new_tokens=n, do_sample=False, pad_token_id=0,
                               **marks, **gen)
        return run, info
    ids = torch.randint(0, vocab, (int(w.get("batch", 1)), int(w["seq"])), device=dev, generator=g)
    fwd = compiled(model, c, False) if c else model

    def run():
        with torch.no_grad():
            fwd(ids, use_cache=False)
    return run, info


if __name__ == "__main__":
    kr.serve(build)
