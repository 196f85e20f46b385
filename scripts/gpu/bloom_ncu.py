# BLOOM-560M (random fp16 weights, as the shared traces): a few warm-up
# forwards, then one profiled prefill (batch 4 x 512) and, with
# mode "decode", 6 decode steps after a prefill of 1 x 32, between
# cudaProfilerStart and Stop, for ncu --profile-from-start off.
import sys, torch
from transformers import BloomConfig, BloomForCausalLM
mode = sys.argv[1]
cfg = BloomConfig(vocab_size=250880, hidden_size=1024, n_layer=24, n_head=16)
torch.manual_seed(0)
with torch.device("cuda"):
    m = BloomForCausalLM(cfg).to(torch.float16).eval()
with torch.no_grad():
    if mode == "prefill":
        ids = torch.randint(0, cfg.vocab_size, (4, 512), device="cuda")
        for _ in range(3): m(ids, use_cache=False)
        torch.cuda.synchronize(); torch.cuda.cudart().cudaProfilerStart()
        m(ids, use_cache=False)
    else:
        ids = torch.randint(0, cfg.vocab_size, (1, 32), device="cuda")
        out = m(ids, use_cache=True); past = out.past_key_values
        nxt = out.logits[:, -1:].argmax(-1)
        for i in range(8):
            if i == 2: torch.cuda.synchronize(); torch.cuda.cudart().cudaProfilerStart()
            out = m(nxt, past_key_values=past, use_cache=True); past = out.past_key_values
            nxt = out.logits[:, -1:].argmax(-1)
    torch.cuda.synchronize(); torch.cuda.cudart().cudaProfilerStop()
