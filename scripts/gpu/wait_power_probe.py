# Probe (issue 43): the GPU's power while a host-bound decode keeps it
# waiting. The whole-inference energy is the replays' kernel energies plus
# the host probe's "power while waiting" times (wall - busy); on two
# host-bound decodes it came out 5% under the measured energy. This probe
# asks whether a GPU that runs a tiny kernel every g microseconds draws more
# than (its kernels' energy measured back to back) + (idle power x the
# rest), as that model says.
#
# Two kernels: an in-place add on 16 KB (on-chip data, ~2 us) and a
# decode-shaped GEMM whose 16 weight sets (96 MB) stream from DRAM. Each is
# launched with the host spinning g us between launches, g from 0 to 10 ms,
# each for about 2.5 s; the NVML energy counter over whole counter ticks
# inside each run gives its mean power. The model's power for the same run:
# the kernel's energy and time back to back (a CUDA graph of it replayed,
# as kreplay's replays measure a kernel) times the launches, plus the idle
# power (measured first, 3 s with nothing launched) times the time left.
# Prints one line per gap; the last column is the measured power over the
# model's.
# Run on a GPU machine: python3 scripts/gpu/wait_power_probe.py
import sys, threading, time, torch
import pynvml

pynvml.nvmlInit()
h = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())


class Poller(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.changes, self.stop = [], False

    def run(self):
        last = pynvml.nvmlDeviceGetTotalEnergyConsumption(h)
        while not self.stop:
            v = pynvml.nvmlDeviceGetTotalEnergyConsumption(h)
            if v != last:
                self.changes.append((time.perf_counter(), v))
                last = v
            time.sleep(0.0005)


def window(changes, t0, t1):
    """Mean power (W) over the whole counter ticks inside [t0, t1]."""
    c = [x for x in changes if t0 < x[0] <= t1]
    if len(c) < 3:
        return float("nan"), 0
    (ta, ea), (tb, eb) = c[0], c[-1]
    return (eb - ea) / 1000.0 / (tb - ta), len(c) - 1


def spin(us):
    t = time.perf_counter()
    while (time.perf_counter() - t) * 1e6 < us:
        pass


sys.setswitchinterval(0.0005)  # the poller's timestamps within ~1 ms, as the runner's
p = Poller()
p.start()
time.sleep(0.3)
t0 = time.perf_counter()
time.sleep(3.0)
idle, ticks = window(p.changes, t0, time.perf_counter())
print(f"idle {idle:.1f} W over {ticks} ticks")

x = torch.zeros(4096, device="cuda")
a = torch.randn(16, 1024, device="cuda", dtype=torch.bfloat16)
# 16 weight sets of 6 MB: 96 MB, twice the L2, streamed from DRAM as a
# decode's weights are.
ws = [torch.randn(1024, 3072, device="cuda", dtype=torch.bfloat16) for _ in range(16)]
kinds = {
    "add f32[4096] (on-chip)": lambda i: x.add_(1.0),
    "mm bf16[16,1024]x[1024,3072] (weights from DRAM)": lambda i: torch.mm(a, ws[i % 16]),
}


def probe(name, fn):
    for i in range(1000):
        fn(i)
    torch.cuda.synchronize()
    # Back to back on the GPU: a CUDA graph of 160 launches, replayed (as
    # kreplay's replays measure a kernel's energy: a tight loop).
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        with torch.cuda.graph(graph, stream=stream):
            for i in range(160):
                fn(i)
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0, k = time.perf_counter(), 0
    s.record()
    while time.perf_counter() - t0 < 2.5:
        graph.replay()
        k += 1
        if k % 50 == 0:
            torch.cuda.current_stream().synchronize()
    e.record()
    e.synchronize()
    b2b_w, ticks = window(p.changes, t0, time.perf_counter())
    t_k = s.elapsed_time(e) / 1000.0 / (k * 160)
    e_k = b2b_w * t_k
    print(f"== {name}: back to back {t_k * 1e6:.2f} us per kernel, {b2b_w:.1f} W over {ticks} ticks, "
          f"{e_k * 1e6:.2f} uJ per kernel")
    print("gap_us launches/s gpu_busy_share power_W ticks model_W measured/model")
    for g in (0, 5, 20, 80, 400, 10000):
        time.sleep(0.5)
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < 2.5:
            fn(n)
            n += 1
            if g:
                spin(g)
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        w, ticks = window(p.changes, t0, t0 + dt)
        busy = min(1.0, n * t_k / dt)
        model = (n * e_k + idle * max(0.0, dt - n * t_k)) / dt
        print(f"{g:6d} {n / dt:10.0f} {busy:6.3f} {w:8.1f} {ticks:5d} {model:8.1f} {w / model:7.3f}", flush=True)


for name, fn in kinds.items():
    probe(name, fn)
p.stop = True
p.join()
