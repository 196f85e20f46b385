#!/usr/bin/env python3
"""Summarise kreplay run -json files: the sum of replay x count against the
traced sum, tier 3's share of traced time within +-10% and +-15%, per-class
sums, and (with -v) tier 3's largest errors by traced time.

    python3 scripts/gpu/runsummary.py [-v] RUN.json...

A signature's replay time is its CUPTI kernel median (kernel_median_ns), or
its event median where CUPTI saw none; signatures part of another are left
out, as kreplay's own table does."""
import collections
import json
import sys


def main(args):
    verbose = "-v" in args
    for path in [a for a in args if a != "-v"]:
        with open(path) as f:
            d = json.load(f)
        d = d[0] if isinstance(d, list) else d
        cls = collections.defaultdict(lambda: [0.0, 0.0])
        t3 = [0.0, 0.0, 0.0]
        tot = [0.0, 0.0]
        errs = []
        for e in d["entries"]:
            r = e.get("result") or {}
            v = r.get("kernel_median_ns") or r.get("median_ns")
            if e.get("part_of") or not v:
                continue
            tr, rp = e["traced_median_ns"] * e["count"], v * e["count"]
            c = cls[e["class"]]
            c[0] += tr
            c[1] += rp
            tot[0] += tr
            tot[1] += rp
            if e["tier"] == 3:
                err = v / e["traced_median_ns"] - 1
                t3[0] += tr
                t3[1] += tr if abs(err) <= 0.10 else 0
                t3[2] += tr if abs(err) <= 0.15 else 0
                errs.append((tr * abs(err), e["label"][:60], e["count"], e["traced_median_ns"], v, err, r.get("cache", "")))
        print("== %s: replay x count %.3f ms against traced %.3f ms: %+.1f%%" % (path, tot[1] / 1e6, tot[0] / 1e6, 100 * (tot[1] / tot[0] - 1)))
        if t3[0]:
            print("tier 3 (%.3f ms traced): within ±10%% %.1f%%, within ±15%% %.1f%%" % (t3[0] / 1e6, 100 * t3[1] / t3[0], 100 * t3[2] / t3[0]))
        print("| class | traced ms | replayed ms | error |\n| --- | ---: | ---: | ---: |")
        for k, (a, b) in sorted(cls.items(), key=lambda x: -x[1][0]):
            print("| %s | %.3f | %.3f | %+.1f%% |" % (k, a / 1e6, b / 1e6, 100 * (b / a - 1)))
        if verbose:
            print()
            for _, label, n, tr, v, err, cache in sorted(errs, reverse=True)[:20]:
                print("  %-60s x%-5d traced %7.0f ns replay %7.0f ns %+6.1f%% %s" % (label, n, tr, v, 100 * err, cache))


if __name__ == "__main__":
    main(sys.argv[1:])
