#!/usr/bin/env python3
"""Compare kreplay runs of one workload (say, -cache auto and -cache context)
on the signatures every run measured: the sum of replay x count against the
traced sum, overall and per class, one column per run.

    python3 scripts/gpu/modes.py RUN.json|RUN.jsonl ...

Reads `kreplay run -json FILE` output or the JSON lines `kreplay run -out
FILE.jsonl` writes as each signature is measured (so a run cut short still
counts). A signature's replay time is its CUPTI kernel median, or its event
median where CUPTI saw none; signatures part of another are left out.

The traced side is each signature's traced median x count, like for like
with the replay's medians; with --total it is the trace's summed durations
(traced_total_ns), as `kreplay predict`'s class table has it, which counts
the trace's outliers too (stretched memsets):

    python3 scripts/gpu/modes.py --total RUN.jsonl ..."""
import collections
import json
import os
import sys


def entries(path):
    """The entries of a -json file (its first set) or a -out JSON-lines file."""
    with open(path) as f:
        if path.endswith(".jsonl"):
            return [json.loads(line)["entry"] for line in f if line.strip()]
        d = json.load(f)
    d = d[0] if isinstance(d, list) else d
    return d["entries"]


def times(path, total=False):
    """id -> (class, traced ns per call, count, replay ns) for measured
    entries; traced per call is the median, or with total the mean."""
    out = {}
    for e in entries(path):
        r = e.get("result") or {}
        v = r.get("kernel_median_ns") or r.get("median_ns")
        if e.get("part_of") or not v:
            continue
        tr = e["traced_total_ns"] / e["count"] if total else e["traced_median_ns"]
        out[e["id"]] = (e["class"], tr, e["count"], v)
    return out


def main(args):
    total = "--total" in args
    paths = [a for a in args if a != "--total"]
    if not paths:
        sys.exit(__doc__)
    runs = [times(p, total) for p in paths]
    common = set(runs[0])
    for r in runs[1:]:
        common &= set(r)
    if not common:
        sys.exit("no signature measured in every run")
    traced = collections.Counter()
    replayed = [collections.Counter() for _ in runs]
    for sid in common:
        cls, tr, n, _ = runs[0][sid]
        traced[cls] += tr * n
        traced["all"] += tr * n
        for i, r in enumerate(runs):
            replayed[i][cls] += r[sid][3] * n
            replayed[i]["all"] += r[sid][3] * n
    names = [os.path.basename(p) for p in paths]
    print("%d signatures measured in all %d runs, %.3f ms traced (%s)" % (
        len(common), len(runs), traced["all"] / 1e6, "summed durations" if total else "median x count"))
    print("| class | traced ms | " + " | ".join(names) + " |")
    print("| --- | ---: |" + " ---: |" * len(runs))
    for cls, tr in sorted(traced.items(), key=lambda kv: (kv[0] != "all", -kv[1])):
        cells = ["%+.1f%%" % (100 * (rep[cls] / tr - 1)) for rep in replayed]
        print("| %s | %.3f | %s |" % (cls, tr / 1e6, " | ".join(cells)))


if __name__ == "__main__":
    main(sys.argv[1:])
