"""Times PyTorch's softmax over GPT-2-medium-shaped attention scores
(f16 [4, 16, 512, 512], the last dim) by the share of masked scores, as a
captured replay fills them: the real causally masked scores (half mask),
the first 256 rows of one head tiled over every head (a bundle's 256 KiB
snapshot: three quarters mask), and no mask.

Issue 14, fourteenth session: GPT-2's captured softmax replayed at 45.15 us
against 40.64 traced (x1.111). Prints one line per fill: the median of
200 launches by CUDA events, and the share of masked scores.
"""
import torch

torch.manual_seed(0)
B, H, S = 4, 16, 512
dev = "cuda"
low = torch.finfo(torch.float16).min


def causal():
    s = torch.randn(B, H, S, S, device=dev, dtype=torch.float16)
    mask = torch.ones(S, S, device=dev, dtype=torch.bool).tril()
    return torch.where(mask, s, torch.tensor(low, device=dev, dtype=torch.float16))


def first_rows(x, rows=256):
    head = x[0, 0, :rows]  # the first 256 KiB of the buffer
    reps = (B * H * S) // rows
    return head.repeat(reps, 1).view(B, H, S, S).contiguous()


def time_softmax(x, n=200):
    for _ in range(20):
        torch.softmax(x, -1)
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    for a, b in ev:
        a.record()
        torch.softmax(x, -1)
        b.record()
    torch.cuda.synchronize()
    t = sorted(a.elapsed_time(b) * 1000 for a, b in ev)
    return t[n // 2]


def main():
    real = causal()
    fills = [("causal (real layout)", real), ("first 256 rows tiled", first_rows(real)),
             ("no mask", torch.randn(B, H, S, S, device=dev, dtype=torch.float16))]
    for rnd in range(2):
        for name, x in fills:
            share = (x == low).float().mean().item()
            print(f"{rnd} {name:<22} {time_softmax(x):7.2f} us  mask {100 * share:4.1f}%")


if __name__ == "__main__":
    main()
