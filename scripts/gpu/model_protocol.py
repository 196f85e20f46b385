# How the way inferences are timed changes a launch-bound model's wall time:
# BLOOM-560M prefill (batch 4 x 512, random fp16 weights, as the shared traces)
# timed as measured.json timed it (back to back, one sync at the end), then with
# the runner's additions one at a time: an NVML-polling thread (1 ms), that
# thread with a 0.5 ms GIL switch interval, and a CUDA event after each
# inference. Prints ms per inference for each, interleaved over rounds.
import sys, threading, time
import torch, pynvml
from transformers import BloomConfig, BloomForCausalLM

torch.backends.cuda.matmul.allow_tf32 = False
pynvml.nvmlInit(); H = pynvml.nvmlDeviceGetHandleByIndex(0)
cfg = BloomConfig(vocab_size=250880, hidden_size=1024, n_layer=24, n_head=16)
torch.manual_seed(0)
with torch.device("cuda"):
    m = BloomForCausalLM(cfg).to(torch.float16).eval()
g = torch.Generator(device="cuda").manual_seed(1)
ids = torch.randint(0, cfg.vocab_size, (4, 512), device="cuda", generator=g)
def run():
    with torch.no_grad():
        m(ids, use_cache=False)

class Poller(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True); self.stop = False
    def run(self):
        while not self.stop:
            pynvml.nvmlDeviceGetTotalEnergyConsumption(H); time.sleep(0.001)

def timed(n, poller=False, switch=None, events=False):
    p = None
    old = sys.getswitchinterval()
    if switch: sys.setswitchinterval(switch)
    if poller: p = Poller(); p.start()
    torch.cuda.synchronize(); t0 = time.perf_counter()
    for _ in range(n):
        run()
        if events:
            e = torch.cuda.Event(enable_timing=True); e.record()
    torch.cuda.synchronize(); t1 = time.perf_counter()
    if p: p.stop = True; p.join()
    sys.setswitchinterval(old)
    return (t1 - t0) / n * 1e3

for _ in range(5): run()
variants = [("measured.json protocol", {}), ("+ poller 1 ms", {"poller": True}),
            ("+ poller, switch 0.5 ms", {"poller": True, "switch": 0.0005}), ("+ event per inference", {"events": True}),
            ("runner (all three)", {"poller": True, "switch": 0.0005, "events": True})]
res = {k: [] for k, _ in variants}
for _ in range(3):
    for k, kw in variants:
        res[k].append(timed(50, **kw))
for k, _ in variants:
    print(f"{k:28s} " + " ".join(f"{v:7.3f}" for v in res[k]) + " ms per inference")
