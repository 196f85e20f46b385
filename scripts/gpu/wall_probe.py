# Probe (issue 13, 2026-11-25): what sets the wall time of a launch-bound
# inference from one measured run to the next? In one process it loads a
# workload spec as kreplay's runner does, warms it up as kreplay does (3
# inferences and 3 s), then takes ROUNDS measured runs with the runner's own
# _measure (20 NVML ticks each). Before each round it times the host: a fixed
# pure-Python loop, and 2000 launches of a tiny CUDA op (launch rate). One
# JSON line per round: wall ms per inference, the spans' p10/p50/p90 and
# every span in run order, the host probes, the CPU the main thread is on,
# the machine's busy and steal shares of CPU time over the round
# (/proc/stat), and the process's context switches (getrusage).
# 2026-11-26: KREPLAY_PROBE_CPUS (a list such as "0" or "1-15") pins the
# process to those CPUs before torch loads, and each round also reports the
# garbage collector's pauses inside it (count and ms per generation),
# its page faults and the machine's memory (/proc/meminfo), to
# test three mechanisms for the process-to-process spread: the CPU the runner
# lands on, Python's cyclic GC, and a small guest's page cache.
# Run on a GPU machine from the project root:
#   python3 scripts/gpu/wall_probe.py scripts/gpu/specs/qwen05b-sdpa-prefill.json [ROUNDS]
import ctypes
import gc
import json
import os
import resource
import sys
import time


def _cpu_list(v):
    """The CPUs of a list such as "0,2-3"."""
    out = set()
    for part in v.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


if os.environ.get("KREPLAY_PROBE_CPUS"):
    os.sched_setaffinity(0, _cpu_list(os.environ["KREPLAY_PROBE_CPUS"]))

_gc = []  # (generation, start, seconds) of each collection
_gc_t0 = [0.0]


def _gc_cb(phase, info):
    if phase == "start":
        _gc_t0[0] = time.perf_counter()
    else:
        _gc.append((info["generation"], _gc_t0[0], time.perf_counter() - _gc_t0[0]))


gc.callbacks.append(_gc_cb)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "internal", "runner"))
import kreplay_runner as kr  # noqa: E402
import runner  # noqa: E402
import torch  # noqa: E402


_libc = ctypes.CDLL(None)


def python_loop_ms():
    t = time.perf_counter()
    s = 0
    for i in range(1_000_000):
        s += i & 7
    return (time.perf_counter() - t) * 1e3


def launch_us():
    x = torch.zeros(16, device="cuda")
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(2000):
        x.add_(1.0)
    dt = time.perf_counter() - t
    torch.cuda.synchronize()
    return dt / 2000 * 1e6


_last_spans = []
_percentiles = kr._percentiles


def _keep_spans(xs, ps):
    """kr._percentiles, keeping the spans (in run order) for the probe."""
    _last_spans[:] = xs
    return _percentiles(xs, ps)


kr._percentiles = _keep_spans


def cpu_times():
    """The machine's CPU times from /proc/stat: (busy, steal, total) jiffies."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (v + [0] * 8)[:8]
    return user + nice + system + irq + softirq, steal, sum(v[:8])


def meminfo_mb():
    """MemTotal, MemAvailable and Cached from /proc/meminfo, in MB."""
    out = {}
    with open("/proc/meminfo") as f:
        for line in f:
            k, v = line.split(":")
            if k in ("MemTotal", "MemAvailable", "Cached"):
                out[k] = int(v.split()[0]) // 1024
    return out


def main():
    spec = json.load(open(sys.argv[1]))
    spec.setdefault("devices", [0])
    spec.setdefault("seed", 0)
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    kr._load(runner.build, {"spec": spec})
    w = kr._warmup({"n": 3, "min_s": 3})
    print(json.dumps({"warmup": w, "affinity": sorted(os.sched_getaffinity(0))}), flush=True)
    for i in range(rounds):
        py, la = python_loop_ms(), launch_us()
        c0, ru0 = cpu_times(), resource.getrusage(resource.RUSAGE_SELF)
        _gc.clear()
        r = kr._measure(20, 120, kr._state["run"])
        c1, ru1 = cpu_times(), resource.getrusage(resource.RUSAGE_SELF)
        tot = max(1, c1[2] - c0[2])
        print(json.dumps({"round": i, "wall_ms": r["wall_s_per_inference"] * 1e3, "span_ms": r["span_ms"],
                          "inferences": r["inferences"], "sm_clock_mhz": r.get("sm_clock_mhz"),
                          "py_loop_ms": round(py, 2), "launch_us": round(la, 3), "cpu": _libc.sched_getcpu(),
                          "machine_busy": round((c1[0] - c0[0]) / tot, 4), "steal": round((c1[1] - c0[1]) / tot, 4),
                          "gc": {g: [sum(1 for x in _gc if x[0] == g), round(sum(x[2] for x in _gc if x[0] == g) * 1e3, 2)]
                                 for g in (0, 1, 2)},
                          "majflt": ru1.ru_majflt - ru0.ru_majflt, "minflt": ru1.ru_minflt - ru0.ru_minflt,
                          "mem_mb": meminfo_mb(),
                          "nivcsw": ru1.ru_nivcsw - ru0.ru_nivcsw, "nvcsw": ru1.ru_nvcsw - ru0.ru_nvcsw,
                          "spans": [round(x, 3) for x in _last_spans]}),
              flush=True)


if __name__ == "__main__":
    main()
