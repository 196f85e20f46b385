#!/usr/bin/env python3
"""List the stand-ins of kreplay run -json files (issue 14's plain-trace
criterion: every stand-in within 2x of its traced time), with each one's
ratio replay/traced, its share of traced time, and what it stood in by.

    python3 scripts/gpu/standins.py RUN.json...

A replay time is the CUPTI kernel median (kernel_median_ns), else the
event median. Prints per file: the approximate share, the count within
2x, and one line per stand-in, largest traced time first."""
import json
import sys


def main(paths):
    for path in paths:
        with open(path) as f:
            d = json.load(f)
        d = d[0] if isinstance(d, list) else d
        total, rows = 0, []
        for e in d["entries"]:
            total += e.get("traced_total_ns", 0)
            r = e.get("result") or {}
            if not r.get("approximate") and e.get("error", "").find("stand-in") < 0:
                continue
            v = r.get("kernel_median_ns") or r.get("median_ns") or 0
            ratio = v / e["traced_median_ns"] if e.get("traced_median_ns") else float("nan")
            rows.append((e.get("traced_total_ns", 0), ratio, e["id"], e["label"][:70], r.get("approximate", e.get("error", ""))[:90]))
        rows.sort(reverse=True)
        within = sum(1 for r in rows if 0.5 <= r[1] <= 2)
        share = sum(r[0] for r in rows) / total if total else 0
        print(f"{path}: {len(rows)} stand-ins, {100*share:.1f}% of traced time; within 2x: {within} of {len(rows)}")
        for t, ratio, i, label, why in rows:
            print(f"  {i}  x{ratio:5.2f}  {t/1e3:9.1f} us  {label}  [{why}]")


if __name__ == "__main__":
    main(sys.argv[1:])
