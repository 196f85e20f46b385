# One profiled prefill (batch 4 x 512, random fp16 weights, as the shared
# traces) of BLOOM-560M or Llama-7B after three warm-up forwards, between
# cudaProfilerStart and Stop, for ncu --profile-from-start off.
import sys, torch
from transformers import BloomConfig, BloomForCausalLM, LlamaConfig, LlamaForCausalLM
torch.manual_seed(0)
if sys.argv[1] == "bloom":
    cfg = BloomConfig(vocab_size=250880, hidden_size=1024, n_layer=24, n_head=16); cls = BloomForCausalLM
else:
    cfg = LlamaConfig(); cls = LlamaForCausalLM
with torch.device("cuda"):
    m = cls(cfg).to(torch.float16).eval()
ids = torch.randint(0, cfg.vocab_size, (4, 512), device="cuda")
with torch.no_grad():
    for _ in range(3): m(ids, use_cache=False)
    torch.cuda.synchronize(); torch.cuda.cudart().cudaProfilerStart()
    m(ids, use_cache=False)
    torch.cuda.synchronize(); torch.cuda.cudart().cudaProfilerStop()
