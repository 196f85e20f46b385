"""Probe (issues 43 and 47): the power of a GPU whose rank waits for its peer
inside an NCCL all-reduce, against the power of a GPU waiting for its host.

The group model of a tensor-parallel inference counts both waits at the host
probe's waiting power (about 127 W on an H200). On two recorded TP2 decodes
the measured runs' waits drew 145-169 W (results/h200x2/tp-capture/). A
rank that reaches an all-reduce before its peer runs NCCL's kernel, which
spins until the peer arrives; this probe measures that power.

Two ranks, one GPU each, an NCCL communicator between them. Phases of about
PHASE seconds each, the NVML energy counter of both GPUs read at the phase's
ends (after a synchronize):
  idle:   both ranks sleep, the communicator alive.
  host:   both ranks launch a tiny all-reduce (f16[4096]) together, then
          sleep GAP ms on the host: each GPU waits for its host.
  spin:   rank 0 launches the all-reduce at once, rank 1 after sleeping GAP
          ms: rank 0's GPU spins in NCCL's kernel for about GAP ms a round,
          rank 1's waits for its host.
Prints, per phase and rank, the mean power and the rounds; the spin phase's
rank 0 is the peer-wait power, its rank 1 the host-wait power beside it.

Run on a machine of two GPUs:
  NCCL_NVLS_ENABLE=0 python3 scripts/gpu/nccl_wait_power.py [GAP_MS] [PHASE_S]
"""
import os
import sys
import time

import pynvml
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def energy_j(h):
    return pynvml.nvmlDeviceGetTotalEnergyConsumption(h) / 1e3


def phase(name, rank, h, x, gap, seconds):
    dist.barrier()
    torch.cuda.synchronize()
    e0, t0, rounds = energy_j(h), time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds:
        if name == "idle":
            time.sleep(gap)
        elif name == "host":
            dist.all_reduce(x)
            torch.cuda.synchronize()
            time.sleep(gap)
        else:  # spin: rank 1 joins gap late
            if rank == 1:
                time.sleep(gap)
            dist.all_reduce(x)
            torch.cuda.synchronize()
        rounds += 1
        stop = torch.tensor([time.perf_counter() - t0 >= seconds], device="cuda")
        dist.all_reduce(stop, op=dist.ReduceOp.MAX)  # both ranks end after the same round
        if stop.item():
            break
    torch.cuda.synchronize()
    dt, de = time.perf_counter() - t0, energy_j(h) - e0
    print(f"{name:5s} rank {rank}: {de / dt:7.1f} W over {dt:.2f} s, {rounds} rounds", flush=True)


def main(rank, gap, seconds):
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=2, device_id=torch.device("cuda", rank))
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(rank)
    x = torch.ones(4096, dtype=torch.float16, device="cuda")
    for _ in range(50):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    for name in ("idle", "host", "spin", "host", "idle"):
        phase(name, rank, h, x, gap, seconds)
    dist.destroy_process_group()


if __name__ == "__main__":
    gap_ms = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    phase_s = float(sys.argv[2]) if len(sys.argv) > 2 else 4.0
    mp.spawn(main, args=(gap_ms / 1e3, phase_s), nprocs=2)
