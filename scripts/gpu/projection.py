#!/usr/bin/env python3
"""Projection check (issue 16): the H100 trace of a workload replayed on
another GPU (kreplay run -json RUN.json embedded:h100_W) against that
GPU's own trace of the same workload (kreplay capture; kreplay inspect
BUNDLE > INSPECT.txt gives its busy time).

usage: projection.py RUN.json INSPECT.txt [RUN.json INSPECT.txt ...]

The predicted busy time is the sum over signatures of the replay's median
(CUPTI kernel time where recorded, else event time) x invocations;
signatures replayed as part of another (split-K reduces) count in it."""
import json
import re
import sys

args = sys.argv[1:]
if not args or len(args) % 2:
    sys.exit(__doc__)
for run_path, inspect_path in zip(args[::2], args[1::2]):
    m = re.search(r"busy ([\d.]+)(µs|ms|s)\b", open(inspect_path).read())
    if not m:
        sys.exit(f"{inspect_path}: no busy time")
    busy_ms = float(m.group(1)) * {"µs": 1e-3, "ms": 1, "s": 1e3}[m.group(2)]
    pred = traced = missing = 0.0
    for out in json.load(open(run_path)):
        for e in out["entries"]:
            r = e.get("result") or {}
            v = r.get("kernel_median_ns") or r.get("median_ns")
            traced += e["traced_total_ns"]
            if v:
                pred += v * e["count"]
            elif not e.get("part_of"):
                missing += e["traced_total_ns"]
    print(f"{run_path}: traced kernels {traced / 1e6:.3f} ms; replayed here {pred / 1e6:.3f} ms; "
          f"this GPU's own trace busy {busy_ms:.3f} ms: {100 * (pred / 1e6 / busy_ms - 1):+.1f}%; "
          f"not replayed {missing / 1e6:.3f} ms")
