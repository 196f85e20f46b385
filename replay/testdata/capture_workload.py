"""A small transformer-like step for kreplay's captured-binary GPU test.

  python3 capture_workload.py record-profile OUT.trace.json.gz
      one step recorded by the kernel recorder (CUDA_INJECTION64_PATH and
      KREPLAY_INJECT_LIB set by the test), which then lets go of CUPTI, and
      the next step profiled (Kineto) in the same process, as kreplay
      capture does

After three warm-up steps both steps launch the same kernels: cuBLAS
GEMMs, PyTorch's embedding, RMSNorm and softmax kernels, cuDNN's fused
attention (bf16 SDPA), a torch.compile'd Triton kernel, an FP8
torch._scaled_mm (cuBLASLt), a CUDA graph (a GEMM and an elementwise
kernel), captured during the warm-up and only replayed after it, as
torch.compile's reduce-overhead mode runs a model, and on Hopper a grouped
GEMM (torch._grouped_mm, as transformers runs a mixture of experts), whose
kernel reads its operands' addresses from arrays in device memory.
"""
import ctypes, gzip, os, shutil, sys
import torch
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
torch.manual_seed(0)
dev, dt = "cuda", torch.bfloat16
B, S, H, D, E, FF, V = 2, 1024, 16, 64, 1024, 4096, 32000
ids = torch.randint(0, V, (B * S,), device=dev)
emb = torch.randn(V, E, device=dev, dtype=dt) * 0.02
norm_w = torch.ones(E, device=dev, dtype=dt)
wq = torch.randn(E, E, device=dev, dtype=dt) * 0.02
w1 = torch.randn(FF, E, device=dev, dtype=dt) * 0.02
w3 = torch.randn(FF, E, device=dev, dtype=dt) * 0.02
w2 = torch.randn(E, FF, device=dev, dtype=dt) * 0.02
w2_scale = (w2.abs().amax().float() / 448.0)
w2q = (w2.float() / w2_scale).to(torch.float8_e4m3fn)


@torch.compile
def gate(a, b):
    return F.silu(a) * b


gx = torch.randn(B * S, E, device=dev, dtype=dt)
gw = torch.randn(E, E, device=dev, dtype=dt) * 0.02


# a mixture of experts' grouped GEMM: 4 experts' weights, the rows routed
# to each ending at offs
G = 4
moe_x = torch.randn(B * S, E, device=dev, dtype=dt)
moe_w = (torch.randn(G, 512, E, device=dev, dtype=dt) * 0.02).transpose(-2, -1)
moe_offs = torch.tensor([300, 900, 1500, B * S], device=dev, dtype=torch.int32)
grouped = torch.cuda.get_device_capability() >= (9, 0)


def graphed():
    return torch.tanh(F.linear(gx, gw))


side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    graphed()  # cuBLAS sets up outside the capture
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    gy = graphed()


def step():
    graph.replay()
    h = F.embedding(ids, emb)
    h = F.rms_norm(h, (E,), norm_w)
    q = F.linear(h, wq).view(B, S, H, D).transpose(1, 2)
    o = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    o = o.transpose(1, 2).reshape(B * S, E)
    m = gate(F.linear(o, w1), F.linear(o, w3))
    m_scale = m.abs().amax().float().clamp(min=1e-6) / 448.0
    mq = (m.float() / m_scale).to(torch.float8_e4m3fn)
    y = torch._scaled_mm(mq, w2q.t(), scale_a=m_scale, scale_b=w2_scale, out_dtype=dt)
    if grouped:
        torch._grouped_mm(moe_x, moe_w, offs=moe_offs)
    return torch.softmax(y.float(), dim=-1)


for _ in range(3):
    step()
torch.cuda.synchronize()
if len(sys.argv) != 3 or sys.argv[1] != "record-profile":
    sys.exit("usage: capture_workload.py record-profile OUT")
lib = ctypes.CDLL(os.environ["KREPLAY_INJECT_LIB"])
if lib.kr_inject_arm(1) != 0:
    sys.exit("the recorder was not loaded (CUDA_INJECTION64_PATH)")
step()
torch.cuda.synchronize()
lib.kr_inject_arm(0)
if lib.kr_inject_flush() != 0 or lib.kr_inject_detach() != 0:
    sys.exit("the recorder failed to write or to let go of CUPTI")

from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
    step()
    torch.cuda.synchronize()
tmp = sys.argv[2] + ".json"
prof.export_chrome_trace(tmp)
with open(tmp, "rb") as f, gzip.open(sys.argv[2], "wb") as g:
    shutil.copyfileobj(f, g)
os.remove(tmp)
