"""The reference chain of the RMSNorm what-if: what rmsnorm_fused.cu replaces.

Hugging Face transformers' LlamaRMSNorm.forward (modeling_llama.py), as the
embedded Llama-7B prefill ran it (transformers 5.17, PyTorch 2.11, f16).
In eager PyTorch an f16 model launches eight kernels for it, the traced
chain kreplay's recipe llama-rmsnorm names:

    aten::copy_   h = x.to(torch.float32)
    aten::pow     h.pow(2)
    aten::mean    .mean(-1, keepdim=True)
    aten::add     variance + eps          (eps a 0-dim double: its value is not traced)
    aten::rsqrt   torch.rsqrt(...)
    aten::mul     h * ...
    aten::copy_   .to(torch.float16)
    aten::mul     weight * ...

An f32 model launches the six without the casts (recipe llama-rmsnorm-f32).

Run on a GPU machine with PyTorch to list the kernels the chain launches
there (python3 reference.py); kreplay does not need it. Not run in kreplay's
tests.
"""

import torch


def rmsnorm_chain(hidden_states: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """LlamaRMSNorm.forward, op for op."""
    input_dtype = hidden_states.dtype
    hidden_states = hidden_states.to(torch.float32)
    variance = hidden_states.pow(2).mean(-1, keepdim=True)
    hidden_states = hidden_states * torch.rsqrt(variance + eps)
    return weight * hidden_states.to(input_dtype)


def main() -> None:
    x = torch.rand(4, 512, 4096, device="cuda", dtype=torch.float16) * 2 - 1
    w = torch.rand(4096, device="cuda", dtype=torch.float16) * 2 - 1
    rmsnorm_chain(x, w)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA], record_shapes=True) as prof:
        rmsnorm_chain(x, w)
        torch.cuda.synchronize()
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            print(f"{e.name[:100]:100s} {e.device_time:8.2f} us")


if __name__ == "__main__":
    main()
