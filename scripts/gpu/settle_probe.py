# Probe (issue 13, 2026-11-26): how does the host's single-thread speed move
# over a lent machine's first minutes? Every 0.5 s it times a fixed
# pure-Python loop (1e6 iterations) and prints the machine's uptime with
# it, one line each, until killed or MAX_S passed. Run it in the background
# beside the workload processes (scripts/gpu/wall_probe.py).
#   python3 scripts/gpu/settle_probe.py [MAX_S]
import sys
import time

max_s = float(sys.argv[1]) if len(sys.argv) > 1 else 600
t_end = time.perf_counter() + max_s
while time.perf_counter() < t_end:
    t = time.perf_counter()
    s = 0
    for i in range(1_000_000):
        s += i & 7
    ms = (time.perf_counter() - t) * 1e3
    with open("/proc/uptime") as f:
        up = float(f.read().split()[0])
    print(f"{up:.1f} {ms:.2f}", flush=True)
    time.sleep(0.5)
