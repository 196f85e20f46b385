"""kreplay's full-model runner: real inference of a Hugging Face causal LM,
driven by kreplay over a line protocol on stdin/stdout (one JSON object per
line each way).

Requests and replies:
  {"cmd": "load", "model": "bloom-560m"|"llama-7b", "workload": "prefill"|"generate",
   "batch": 4, "seq": 512, "prompt": 32, "new_tokens": 16, "device": 0, "seed": 0}
      -> {"ok": true, "gpu": ..., "torch": ..., "cuda": ..., "driver": ...}
  {"cmd": "warmup", "n": 3, "min_s": 2}    -> {"ok": true, "inferences": k, "s": ...}
  {"cmd": "run", "min_ticks": 20, "max_s": 120}
      -> {"ok": true, "inferences": k, "wall_s_per_inference": ..., "event_ms_per_inference": ...,
          "energy_j_per_inference": ..., "window_s": ..., "ticks": ..., "idle_w": ...}
  {"cmd": "capture", "path": "out.trace.json.gz"}  -> {"ok": true, "path": ..., "bytes": ...}
  {"cmd": "quit"}                           -> exits
Errors: {"ok": false, "error": "..."}. A missing torch, transformers or pynvml
is reported as the first line, then the runner exits with status 2.

Timing: inferences run back to back with no host synchronization between
them (as a serving loop runs and as the shared traces' measured.json timed
them), a CUDA event after each; wall_s_per_inference is the host time from
the first launch to the last inference's end over the count, and
event_ms_per_inference the same span on the GPU's clock.

Energy: NVML's total-energy counter advances about every 100 ms, so a
thread polls the counter every millisecond while the inferences run; the
window spans every whole tick inside the inferences' span on the GPU (at
least min_ticks), and the inferences inside it count by the fraction of
their time inside. Models are built from a config with
random fp16 weights, as the shared traces were (TF32 off).
"""
import json, sys, threading, time

def reply(**kw):
    sys.stdout.write(json.dumps(kw) + "\n")
    sys.stdout.flush()

try:
    import torch
    import pynvml
    from transformers import BloomConfig, BloomForCausalLM, LlamaConfig, LlamaForCausalLM
except Exception as e:  # noqa: BLE001 - report any import failure plainly
    reply(ok=False, error=f"python3 cannot import the runner's modules: {e!r}")
    sys.exit(2)

torch.backends.cuda.matmul.allow_tf32 = False
state = {}

def build(name):
    if name == "bloom-560m":
        return BloomForCausalLM, BloomConfig(vocab_size=250880, hidden_size=1024, n_layer=24, n_head=16)
    if name == "llama-7b":
        return LlamaForCausalLM, LlamaConfig(vocab_size=32000, hidden_size=4096, intermediate_size=11008,
                                             num_hidden_layers=32, num_attention_heads=32,
                                             num_key_value_heads=32, max_position_embeddings=2048)
    raise ValueError(f"unknown model {name!r} (bloom-560m, llama-7b)")

def load(req):
    if not torch.cuda.is_available():
        raise RuntimeError("torch sees no CUDA device")
    dev = int(req.get("device", 0))
    torch.cuda.set_device(dev)
    cls, cfg = build(req["model"])
    torch.manual_seed(int(req.get("seed", 0)))
    with torch.device("cuda"):
        model = cls(cfg).to(torch.float16).eval()
    g = torch.Generator(device="cuda").manual_seed(1)
    if req.get("workload", "prefill") == "generate":
        ids = torch.randint(0, cfg.vocab_size, (1, int(req.get("prompt", 32))), device="cuda", generator=g)
        n = int(req.get("new_tokens", 16))
        def run():
            with torch.no_grad():
                model.generate(ids, max_new_tokens=n, min_new_tokens=n, do_sample=False, pad_token_id=0)
    else:
        ids = torch.randint(0, cfg.vocab_size, (int(req.get("batch", 4)), int(req.get("seq", 512))),
                            device="cuda", generator=g)
        def run():
            with torch.no_grad():
                model(ids, use_cache=False)
    pynvml.nvmlInit()
    state.update(run=run, nvml=pynvml.nvmlDeviceGetHandleByIndex(dev), model=model)
    return dict(gpu=torch.cuda.get_device_name(dev), torch=torch.__version__, cuda=torch.version.cuda,
                driver=pynvml.nvmlSystemGetDriverVersion())

def counter():
    return pynvml.nvmlDeviceGetTotalEnergyConsumption(state["nvml"])  # mJ

class Poller(threading.Thread):
    """Records (time, counter) at each counter change."""
    def __init__(self):
        super().__init__(daemon=True)
        self.changes, self.stop = [], False
    def run(self):
        last = counter()
        while not self.stop:
            v = counter()
            if v != last:
                self.changes.append((time.perf_counter(), v))
                last = v
            time.sleep(0.001)

def window(changes, min_ticks):
    if len(changes) < min_ticks + 1:
        return None
    return changes[0], changes[min_ticks]

def measure(min_ticks, max_s, fn):
    """Runs fn back to back, as a real serving loop does and as the traces'
    measured.json timed them: no host synchronization between inferences,
    so the CPU launches the next inference while the GPU runs the last.
    A CUDA event after each inference places it on the GPU's timeline,
    mapped to host time through an event recorded on an idle GPU; the
    energy window spans the counter changes inside the inferences' span."""
    torch.cuda.synchronize()
    old = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)  # keep the poller's timestamps within ~1 ms
    p = Poller(); p.start()
    try:
        time.sleep(0.002)
        evs = [torch.cuda.Event(enable_timing=True)]
        evs[0].record(); evs[0].synchronize()
        t_base = time.perf_counter()
        t_end = t_base + max_s
        while True:
            fn()
            ev = torch.cuda.Event(enable_timing=True); ev.record(); evs.append(ev)
            if sum(1 for t, _ in p.changes if t > t_base) >= min_ticks + 2 or time.perf_counter() > t_end:
                break
        evs[-1].synchronize()
        host_s = time.perf_counter() - t_base
        time.sleep(0.002)
    finally:
        p.stop = True; p.join()
        sys.setswitchinterval(old)
    ends = [t_base + evs[0].elapsed_time(e) / 1000.0 for e in evs]
    spans = list(zip(ends[:-1], ends[1:]))
    inside_changes = [c for c in p.changes if ends[0] < c[0] <= ends[-1]]
    if len(inside_changes) < min_ticks + 1:
        raise RuntimeError(f"energy counter changed {len(inside_changes)} times in {ends[-1] - ends[0]:.2f}s of "
                           f"inferences; need {min_ticks + 1} (raise max_s)")
    # Every whole tick inside the inferences' span counts.
    (ta, ea), (tb, eb) = inside_changes[0], inside_changes[-1]
    inside = sum(max(0.0, min(b, tb) - max(a, ta)) / (b - a) for a, b in spans if b > a)
    k = len(spans)
    return dict(inferences=k, inside=inside, window_s=tb - ta, ticks=len(inside_changes) - 1,
                energy_j=(eb - ea) / 1000.0, wall_s_per_inference=host_s / k,
                event_ms_per_inference=(ends[-1] - ends[0]) * 1000.0 / k)

def run(req):
    r = measure(int(req.get("min_ticks", 20)), float(req.get("max_s", 120)), state["run"])
    r["energy_j_per_inference"] = r["energy_j"] / r["inside"] if r["inside"] > 0 else None
    # Idle power over whole ticks, for the idle-gap energy term.
    time.sleep(0.5)
    r["idle_w"] = idle_power(10)
    return r

def idle_power(ticks):
    p = Poller(); p.start()
    t_end = time.perf_counter() + ticks * 0.2 + 2
    while len(p.changes) < ticks + 1 and time.perf_counter() < t_end:
        time.sleep(0.01)
    p.stop = True; p.join()
    w = window(p.changes, ticks)
    if w is None:
        return None
    (ta, ea), (tb, eb) = w
    return (eb - ea) / 1000.0 / (tb - ta)

def capture(req):
    import gzip, os
    from torch.profiler import profile, ProfilerActivity
    path = req["path"]
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        state["run"](); torch.cuda.synchronize()
    tmp = path + ".tmp.json"
    prof.export_chrome_trace(tmp)
    with open(tmp, "rb") as f, gzip.open(path, "wb", compresslevel=6) as g:
        g.write(f.read())
    os.remove(tmp)
    return dict(path=path, bytes=os.path.getsize(path))

def main():
    reply(ok=True, ready=True)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            cmd = req.get("cmd")
            if cmd == "quit":
                reply(ok=True); return
            if cmd != "load" and "run" not in state:
                raise RuntimeError(f"{cmd}: no model loaded")
            if cmd == "load":
                reply(ok=True, **load(req))
            elif cmd == "warmup":
                # At least n inferences and min_s seconds: a launch-bound
                # model's host side takes seconds to reach its steady pace.
                n, min_s, k = int(req.get("n", 3)), float(req.get("min_s", 0)), 0
                t0 = time.perf_counter()
                while k < n or time.perf_counter() - t0 < min_s:
                    state["run"](); k += 1
                torch.cuda.synchronize(); reply(ok=True, inferences=k, s=time.perf_counter() - t0)
            elif cmd == "run":
                reply(ok=True, **run(req))
            elif cmd == "capture":
                reply(ok=True, **capture(req))
            else:
                raise ValueError(f"unknown command {cmd!r}")
        except Exception as e:  # noqa: BLE001 - every failure goes back as a reply
            reply(ok=False, error=f"{type(e).__name__}: {e}")

main()
