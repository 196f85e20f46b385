"""Does a GEMM's power depend on its data? A probe on one GPU, with the real
library: torch.mm (cuBLAS) on bf16 operands of the prefills' shapes, fed
(a) kreplay's replay data (uniform in [-1, 1), what launch.FillRandom
writes), (b) what a randomly initialised Hugging Face model feeds it
(activations about N(0, 1) after a norm, weights N(0, 0.02), the
initializer_range of the specs' from_config models), (c) both N(0, 1).
Each case runs back to back for a window between two changes of NVML's
energy counter (so that the window holds whole ticks), rounds interleaved
(A B C A B C ...) so that a drift in temperature falls on every case;
prints per shape and case the median power, time per GEMM (CUDA events)
and energy per GEMM, the GPU's temperature at each round's end, and the
ratio to case (b).

Run on the GPU machine: python3 scripts/gpu/data-power.py [ROUNDS] [TICKS]
"""
import ctypes
import statistics
import sys
import time

import torch

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
TICKS = int(sys.argv[2]) if len(sys.argv) > 2 else 15
# (name, M, K, N): activations [M, K] times weights [N, K] transposed, as nn.Linear.
SHAPES = [
    ("phi3 prefill 4x256 gate_up", 1024, 3072, 16384),
    ("mistral prefill 2x512 up", 1024, 4096, 14336),
    ("opt-1.3b prefill fc1", 1024, 2048, 8192),
]

nvml = ctypes.CDLL("libnvidia-ml.so.1")
nvml.nvmlInit_v2()
dev = ctypes.c_void_p()
nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev))


def energy_mj():
    e = ctypes.c_ulonglong()
    rc = nvml.nvmlDeviceGetTotalEnergyConsumption(dev, ctypes.byref(e))
    if rc != 0:
        raise RuntimeError(f"nvmlDeviceGetTotalEnergyConsumption: {rc}")
    return e.value


def temperature_c():
    t = ctypes.c_uint()
    rc = nvml.nvmlDeviceGetTemperature(dev, 0, ctypes.byref(t))  # NVML_TEMPERATURE_GPU
    return t.value if rc == 0 else float("nan")


def operands(case, m, k, n, gen):
    def uniform(*shape):
        return (torch.rand(*shape, device="cuda", generator=gen) * 2 - 1).to(torch.bfloat16)

    def normal(std, *shape):
        return (torch.randn(*shape, device="cuda", generator=gen) * std).to(torch.bfloat16)

    if case == "kreplay uniform":
        return uniform(m, k), uniform(n, k)
    if case == "model N(0,1) x N(0,0.02)":
        return normal(1.0, m, k), normal(0.02, n, k)
    return normal(1.0, m, k), normal(1.0, n, k)


CASES = ["kreplay uniform", "model N(0,1) x N(0,0.02)", "both N(0,1)"]


def window(a, w, batch=20):
    """GEMMs back to back from one change of the energy counter to the
    TICKS-th after it: power (W), ms per GEMM (events), the GPU's
    temperature (C) at the window's end."""
    out = torch.empty(a.shape[0], w.shape[0], device="cuda", dtype=torch.bfloat16)
    t_end = time.monotonic() + 0.5
    while time.monotonic() < t_end:  # warm-up
        for _ in range(batch):
            torch.mm(a, w.t(), out=out)
        torch.cuda.synchronize()
    e0 = energy_mj()
    while True:  # a tick's edge opens the window
        for _ in range(batch):
            torch.mm(a, w.t(), out=out)
        torch.cuda.synchronize()
        e = energy_mj()
        if e != e0:
            break
    start_e, start_t, last, ticks, n = e, time.monotonic(), e, 0, 0
    ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ev0.record()
    while ticks < TICKS:
        for _ in range(batch):
            torch.mm(a, w.t(), out=out)
        n += batch
        torch.cuda.synchronize()
        e = energy_mj()
        if e != last:
            ticks, last = ticks + 1, e
    ev1.record()
    torch.cuda.synchronize()
    secs = time.monotonic() - start_t
    return (last - start_e) / 1e3 / secs, ev0.elapsed_time(ev1) / n, temperature_c()


def main():
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, {ROUNDS} rounds, windows of {TICKS} ticks")
    for name, m, k, n in SHAPES:
        gen = torch.Generator(device="cuda")
        gen.manual_seed(1)
        data = {c: operands(c, m, k, n, gen) for c in CASES}
        got = {c: [] for c in CASES}
        for _ in range(ROUNDS):
            for c in CASES:
                got[c].append(window(*data[c]))
        ref_w = statistics.median(p for p, _, _ in got[CASES[1]])
        ref_ms = statistics.median(ms for _, ms, _ in got[CASES[1]])
        for c in CASES:
            watts = statistics.median(p for p, _, _ in got[c])
            ms = statistics.median(t for _, t, _ in got[c])
            spread = max(p for p, _, _ in got[c]) - min(p for p, _, _ in got[c])
            temps = "/".join(f"{t:.0f}" for _, _, t in got[c])
            print(f"{name} [{m},{k}]x[{k},{n}] {c}: {watts:.0f} W (rounds {spread:.0f} W apart, at {temps} C), "
                  f"{ms * 1e3:.1f} us per GEMM, {watts * ms:.4g} mJ per GEMM; x{watts / ref_w:.3f} power, "
                  f"x{ms / ref_ms:.3f} time, x{watts * ms / (ref_w * ref_ms):.3f} energy against the model's data")
        del data
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
