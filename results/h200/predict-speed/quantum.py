"""The kernel medians of a prediction's progress file against a 32 ns step,
and the cat [[8,n] [8,1]] family's members in three runs. Run in
speed/logs of raw5.tar.xz: python3 quantum.py > quantum.txt."""
import collections
import json
import re


def load(p):
    d = {}
    for line in open(p):
        if line.strip():
            e = json.loads(line)["entry"]
            d[e["id"]] = e
    return d


def kernel(e):
    return ((e or {}).get("result") or {}).get("kernel_median_ns")


a, b, f = load("energy.progress.jsonl"), load("energy-one.progress.jsonl"), load("energy-families.progress.jsonl")
steps = collections.Counter()
for e in a.values():
    v = kernel(e)
    if v and v < 5000:
        r = v % 32
        steps["on a 32 ns step (within 1 ns)" if r <= 1 or r >= 31 else "half a step" if abs(r - 16) <= 1 else "other"] += 1
print(f"kernel medians under 5 us in energy.progress.jsonl: {dict(steps)}")
print("cat [[8,n] [8,1]]: n, exact, exact again, families (i: interpolated), ns")
rows = []
for i, e in a.items():
    m = re.match(r"cat \[\[8,(\d+)\] \[8,1\]\]$", e["label"])
    if m:
        rows.append((int(m.group(1)), kernel(e), kernel(b.get(i)), kernel(f.get(i)), "i" if (f.get(i) or {}).get("interpolated") else ""))
for r in sorted(rows):
    print(*r)
