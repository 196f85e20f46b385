"""Probe (2026-11-26, eleventh session): which way of running a Hugging Face
generate under torch.compile's CUDA graphs (mode reduce-overhead) works on
this machine's PyTorch and transformers, for kreplay's runner to use. Each
variant runs in a process of its own (a crash is a result), builds the
Qwen2-0.5B-shaped model of scripts/gpu/specs/qwen05b-ro-decode.json with
random bf16 weights, and runs generate three times (batch 4, prompt 128, 16
new tokens), printing the per-generate wall time or the error.

  python3 cudagraph_decode_probe.py            # all variants, at once
  python3 cudagraph_decode_probe.py VARIANT    # one
"""
import subprocess
import sys
import time

VARIANTS = {
    "dynamic-step": "dynamic cache, forward compiled by us, cudagraph_mark_step_begin before each forward",
    "static-ours": "static cache, forward compiled by us (fullgraph=False), no step marking",
    "static-ours-step": "static cache, forward compiled by us, step marking, transformers' compile off",
    "static-ours-full": "static cache, forward compiled by us with fullgraph=True, no step marking",
    "static-hf": "static cache, transformers' own compile (compile_config mode reduce-overhead)",
}


def run(variant):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
    torch.manual_seed(0)
    cfg = AutoConfig.for_model("qwen2", vocab_size=151936, hidden_size=896, intermediate_size=4864,
                               num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
                               max_position_embeddings=8192, rope_theta=1e6, tie_word_embeddings=True,
                               rms_norm_eps=1e-6)
    dev = torch.device("cuda", 0)
    with dev:
        model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    model = model.to(torch.bfloat16).eval()
    ids = torch.randint(0, 151936, (4, 128), device=dev)
    gen = {}
    if variant == "dynamic-step" or variant == "static-ours-step":
        fwd = torch.compile(model.forward, mode="reduce-overhead")

        def stepped(*a, **kw):
            torch.compiler.cudagraph_mark_step_begin()
            return fwd(*a, **kw)
        model.forward = stepped
    elif variant in ("static-ours", "static-ours-full"):
        model.forward = torch.compile(model.forward, mode="reduce-overhead", fullgraph=variant.endswith("full"))
    if variant.startswith("static"):
        gen["cache_implementation"] = "static"
    if variant == "static-ours-step":
        gen["disable_compile"] = True
    if variant == "static-hf":
        from transformers import CompileConfig
        gen["compile_config"] = CompileConfig(mode="reduce-overhead")
    for i in range(3):
        t = time.perf_counter()
        with torch.no_grad():
            out = model.generate(ids, max_new_tokens=16, min_new_tokens=16, do_sample=False, pad_token_id=0, **gen)
        torch.cuda.synchronize()
        print(f"{variant}: generate {i}: {1e3 * (time.perf_counter() - t):.1f} ms, {tuple(out.shape)}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 2:
        run(sys.argv[1])
        sys.exit(0)
    procs = {v: subprocess.Popen([sys.executable, __file__, v], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for v in VARIANTS}
    for v, p in procs.items():
        try:
            out, _ = p.communicate(timeout=360)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
        tail = [l for l in out.splitlines() if l.strip()][-3:]
        print(f"== {v} ({VARIANTS[v]}): exit {p.returncode}", flush=True)
        for l in tail:
            print("   " + l[:300], flush=True)
