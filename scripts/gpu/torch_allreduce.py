"""Bus bandwidth of torch.distributed all_reduce (NCCL), to compare with
kreplay's Group.MeasureCollective on the same machine and sizes.

Usage: NCCL_NVLS_ENABLE=0 torchrun --nproc_per_node=2 torch_allreduce.py [NELEMS ...]

Each size (f16 elements; default the TP traces' 8388608) is warmed up,
then timed with CUDA events around batches of 20 calls, 30 times; rank 0
prints the median time per call and the bus bandwidth, 2(n-1)/n x bytes /
time as nccl-tests defines it.
"""
import os, statistics, sys
import torch, torch.distributed as dist

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
torch.cuda.set_device(rank)
dist.init_process_group("nccl")
sizes = [int(a) for a in sys.argv[1:]] or [8388608]
for n in sizes:
    x = torch.empty(n, dtype=torch.float16, device="cuda").uniform_(-1, 1)
    for _ in range(20):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    per = []
    for _ in range(30):
        dist.barrier()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(20):
            dist.all_reduce(x)
        e.record(); e.synchronize()
        per.append(s.elapsed_time(e) / 20 * 1e-3)  # s per call
    t = statistics.median(per)
    bus = 2 * (world - 1) / world * n * 2 / t / 1e9
    if rank == 0:
        print(f"torch all_reduce f16[{n}] x{world}: {t*1e6:.2f} us per call, bus {bus:.1f} GB/s", flush=True)
dist.destroy_process_group()
