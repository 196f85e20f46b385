"""Probe: the energy per launch of a heavy GEMM, back to back (at the power
cap) against duty-cycled (bursts with idle gaps, under the cap), and which
of the two predicts the energy of a mix of the GEMM with a low-power
elementwise kernel, as a model interleaves them.

Run on the GPU machine: python3 scripts/gpu/energy_probe.py > probe.txt
Nothing here changes clocks or limits; it only reads NVML.

Each window spans whole ticks of NVML's total-energy counter (about 100 ms
a tick on an H100) inside the launches' span. A "burst" is a CUDA graph of
about 5 ms of launches, synchronised; duty-cycled windows sleep a gap after
each burst. The energy of one launch at the unthrottled clock comes from
two windows with the same gap: bursts of n launches (a) and of 1 launch
(b): e = (J/cycle_a - J/cycle_b) / (n - 1), so the gap's energy cancels.
"""
import json
import sys
import threading
import time

import pynvml
import torch

import probelib

pynvml.nvmlInit()
H = pynvml.nvmlDeviceGetHandleByIndex(0)
CAP = 0x4  # NVML clocks-event reason: software power cap


def counter():
    return pynvml.nvmlDeviceGetTotalEnergyConsumption(H)


class Sampler(threading.Thread):
    """Counter changes every ms; SM clock, power and reasons every 5 ms."""

    def __init__(self):
        super().__init__(daemon=True)
        self.changes, self.states, self.stop = [], [], False

    def run(self):
        last, k = counter(), 0
        while not self.stop:
            v = counter()
            now = time.perf_counter()
            if v != last:
                self.changes.append((now, v))
                last = v
            if k % 5 == 0:
                try:
                    r = pynvml.nvmlDeviceGetCurrentClocksEventReasons(H)
                except Exception:  # noqa: BLE001
                    r = pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(H)
                self.states.append((now, pynvml.nvmlDeviceGetClockInfo(H, pynvml.NVML_CLOCK_SM),
                                    pynvml.nvmlDeviceGetPowerUsage(H) / 1000.0, r))
            k += 1
            time.sleep(0.001)


def graph_of(fn, n):
    probelib.warm_on_side_stream(fn)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(n):
            fn()
    torch.cuda.synchronize()
    return g


def time_one(fn):
    g = graph_of(fn, 20)
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    g.replay()
    torch.cuda.synchronize()
    a.record()
    g.replay()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) / 20 * 1e3  # us, a short burst: unthrottled


def window(cycle, ops_per_cycle, min_ticks=15, warm_s=0.5, pause_s=0.3):
    """Runs cycle() (which synchronises) until min_ticks whole ticks fit
    after warm_s; returns J per cycle, ops per s, clock and throttle."""
    time.sleep(pause_s)
    smp = Sampler()
    smp.start()
    spans = []
    t0 = time.perf_counter()
    while True:
        a = time.perf_counter()
        cycle()
        b = time.perf_counter()
        spans.append((a, b))
        ch = [c for c in smp.changes if c[0] > t0 + warm_s]
        if len(ch) >= min_ticks + 1:
            break
    smp.stop = True
    smp.join()
    ch = [c for c in smp.changes if c[0] > t0 + warm_s]
    (ta, ea), (tb, eb) = ch[0], ch[min_ticks]
    # cycles inside [ta, tb]: each cycle occupies [start_i, start_i+1)
    starts = [s for s, _ in spans] + [spans[-1][1]]
    inside = 0.0
    for i in range(len(spans)):
        a, b = starts[i], starts[i + 1]
        inside += max(0.0, min(b, tb) - max(a, ta)) / (b - a)
    st = [s for s in smp.states if ta <= s[0] <= tb]
    clk = sum(s[1] for s in st) / len(st)
    capped = sum(1 for s in st if s[3] & CAP) / len(st)
    joules = (eb - ea) / 1000.0
    return dict(j_per_cycle=joules / inside, cycles=inside, s=tb - ta, watts=joules / (tb - ta),
                ops=inside * ops_per_cycle, sm_mhz=round(clk), capped=round(capped, 3),
                s_per_cycle=(tb - ta) / inside)


def spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def probe_kernel(name, fn, us, out):
    n = max(2, round(5000 / us))
    g = graph_of(fn, n)
    g1 = graph_of(fn, 1)
    burst_s = n * us * 1e-6

    def b2b():
        g.replay()
        torch.cuda.synchronize()
    r = window(b2b, n)
    r.update(kind="back-to-back", j_per_op=r["j_per_cycle"] / n, us_per_op=r["s_per_cycle"] / n * 1e6)
    out.append(dict(kernel=name, **r))
    print(json.dumps(out[-1]), flush=True)
    for duty in (0.75, 0.5):
        gap = burst_s * (1 - duty) / duty

        def ca():
            g.replay()
            torch.cuda.synchronize()
            spin(gap)

        def cb():
            g1.replay()
            torch.cuda.synchronize()
            spin(gap)
        ra = window(ca, n)
        rb = window(cb, 1)
        e = (ra["j_per_cycle"] - rb["j_per_cycle"]) / (n - 1)
        gap_w = (rb["j_per_cycle"] - e) / (rb["s_per_cycle"] - us * 1e-6)
        out.append(dict(kernel=name, kind=f"duty {duty}", j_per_op=e, gap_w=gap_w, a=ra, b=rb,
                        naive_j_per_op=ra["j_per_cycle"] / n))
        print(json.dumps(out[-1]), flush=True)
    return g, n


def main():
    torch.manual_seed(0)
    dt = torch.bfloat16
    dev = "cuda"
    out = []
    a = torch.randn(4096, 2048, device=dev, dtype=dt)
    b = torch.randn(2048, 8192, device=dev, dtype=dt)
    c = torch.empty(4096, 8192, device=dev, dtype=dt)
    bh = torch.randn(2048, 128256, device=dev, dtype=dt) * 0.02
    ch = torch.empty(4096, 128256, device=dev, dtype=dt)
    x = torch.randn(2, 2048, 8192, device=dev, dtype=dt)
    y = torch.randn(2, 2048, 8192, device=dev, dtype=dt)
    z = torch.empty_like(x)
    kernels = {
        "mm bf16[4096,2048]x[2048,8192]": lambda: torch.mm(a, b, out=c),
        "mm bf16[4096,2048]x[2048,128256]": lambda: torch.mm(a, bh, out=ch),
        "mul bf16[2,2048,8192]": lambda: torch.mul(x, y, out=z),
    }
    us = {k: time_one(f) for k, f in kernels.items()}
    print(json.dumps(dict(unthrottled_us=us)), flush=True)
    idle = window(lambda: time.sleep(0.01), 0, min_ticks=10)
    print(json.dumps(dict(idle=idle)), flush=True)
    graphs = {}
    for k, f in kernels.items():
        if k.startswith("mul"):
            n = max(2, round(5000 / us[k]))
            graphs[k] = (graph_of(f, n), n)

            def b2b(g=graphs[k][0]):
                g.replay()
                torch.cuda.synchronize()
            r = window(b2b, n)
            r.update(kind="back-to-back", j_per_op=r["j_per_cycle"] / n)
            out.append(dict(kernel=k, **r))
            print(json.dumps(out[-1]), flush=True)
        else:
            graphs[k] = probe_kernel(k, f, us[k], out)
    # The mix: a burst of the GEMM, then a burst of the elementwise kernel,
    # back to back, as a model interleaves them.
    mul = "mul bf16[2,2048,8192]"
    gm, nm = graphs[mul]
    for k in kernels:
        if k == mul:
            continue
        gg, ng = graphs[k]

        def mix():
            gg.replay()
            gm.replay()
            torch.cuda.synchronize()
        r = window(mix, ng + nm)
        est = {}
        for row in out:
            if row["kernel"] == k:
                est[row["kind"]] = row["j_per_op"] * ng
        e_mul = next(row["j_per_op"] for row in out if row["kernel"] == mul)
        pred = {kind: v + e_mul * nm for kind, v in est.items()}
        out.append(dict(kernel=f"mix {k} + {mul}", kind="mix", measured_j_per_cycle=r["j_per_cycle"],
                        predicted_j_per_cycle=pred,
                        error={kind: v / r["j_per_cycle"] - 1 for kind, v in pred.items()}, window=r))
        print(json.dumps(out[-1]), flush=True)
    print("SUMMARY")
    for row in out:
        if row["kind"] == "mix":
            print(row["kernel"], " ".join(f"{k}: {v:+.1%}" for k, v in row["error"].items()),
                  f"(mix window {row['window']['watts']:.0f} W, SM {row['window']['sm_mhz']} MHz, capped {row['window']['capped']})")
        else:
            extra = f" gap {row['gap_w']:.0f} W; a: {row['a']['watts']:.0f} W SM {row['a']['sm_mhz']} capped {row['a']['capped']}" \
                if "gap_w" in row else f" {row['watts']:.0f} W SM {row['sm_mhz']} capped {row['capped']}"
            print(f"{row['kernel']} {row['kind']}: {row['j_per_op'] * 1e3:.4f} mJ/op{extra}")


if __name__ == "__main__":
    sys.exit(main())
