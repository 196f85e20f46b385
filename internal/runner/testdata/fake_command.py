"""A user's command for the CPU tests of package runner: serves
kreplay_runner's protocol with a fake inference (sleeps 2 ms). What
build(spec) does is steered by spec["command"]["args"]["mode"]."""
import time

import torch
import kreplay_runner


def build(spec):
    print("noise on stdout from build")  # must not reach the protocol
    mode = spec["command"]["args"].get("mode", "ok")
    if mode == "oom":
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")

    def run_one_inference():
        time.sleep(0.002)
        for _ in range(2):  # two generated tokens
            kreplay_runner.mark_token()
    return run_one_inference, {"seen_seed": spec.get("seed")}


kreplay_runner.serve(build)
