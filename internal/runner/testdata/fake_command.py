"""A user's command for the CPU tests of package runner: serves
kreplay_runner's protocol with a fake inference (sleeps 2 ms). What
build(spec) does is steered by spec["command"]["args"]: "mode"; in a group
of ranks, "fail_rank" names a rank that fails at "fail_at" ("load", or
"run": its inferences raise once warmed up), and "collective" makes each
inference meet the other ranks (torch.distributed's stand-in barrier), as
a tensor-parallel one does."""
import os
import time

import torch
import kreplay_runner


def build(spec):
    print("noise on stdout from build")  # must not reach the protocol
    args = spec["command"]["args"]
    mode = args.get("mode", "ok")
    if mode == "oom":
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")
    dist = spec.get("distributed")
    fails = dist is not None and args.get("fail_rank") == dist["rank"]
    if fails and args.get("fail_at", "load") == "load":
        raise RuntimeError(f"rank {dist['rank']} cannot load")
    collective = bool(args.get("collective")) and dist is not None
    count = [0]

    def run_one_inference():
        count[0] += 1
        if fails and args.get("fail_at") == "run" and count[0] > 3:
            raise RuntimeError(f"rank {dist['rank']} failed in inference {count[0]}")
        if collective:
            torch.distributed.barrier()
        time.sleep(0.002)
        for _ in range(2):  # two generated tokens
            kreplay_runner.mark_token()
    info = {"seen_seed": spec.get("seed")}
    if dist is not None:
        info.update(seen_distributed=dist, seen_env={k: os.environ.get(k) for k in (
            "MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK", "KREPLAY_DEVICE", "NCCL_NVLS_ENABLE")},
            seen_world=kreplay_runner.world_size(), seen_rank=kreplay_runner.rank(), seen_device=torch.cuda.current_device())
    return run_one_inference, info


kreplay_runner.serve(build)
