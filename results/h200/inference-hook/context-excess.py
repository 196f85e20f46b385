"""Where the timeline's time beyond the trace's busy time goes: for each
recorded prediction named (BASE, the path of its logs without the
extension: BASE.bench and BASE.progress.jsonl), each signature's median
time in context (BenchmarkContext: its kernels' CUPTI durations inside the
timeline graph) against its traced median and its isolated replay, summed
over its invocations, by class, with the six largest excesses.

Run after unpacking raw3.tar.xz and raw4.tar.xz here:
  python3 context-excess.py call*/logs/*[0-9] logs/*[0-9] > context-excess.txt
(each BASE given without .bench).
"""
import json
import re
import sys


def one(base):
    ctx = {}
    for line in open(base + ".bench"):
        m = re.match(r"BenchmarkContext/workload=[^/]+/sig=([0-9a-f]+)-\d+ \d+ ([\d.e+]+) ns/op", line)
        if m:
            ctx[m.group(1)] = float(m.group(2))
    ents = {}
    for line in open(base + ".progress.jsonl"):
        if line.strip():
            e = json.loads(line)["entry"]
            ents[e["id"]] = e
    rows, traced, context, isolated = [], 0.0, 0.0, 0.0
    for i, e in ents.items():
        r = e.get("result")
        if i not in ctx or not r:
            continue
        n, tm = e["count"], e["traced_total_ns"] / e["count"]
        rep, c = r.get("kernel_median_ns") or r.get("median_ns"), ctx[i]
        traced, context, isolated = traced + tm * n, context + c * n, isolated + rep * n
        rows.append(((c - tm) * n / 1e3, (rep - tm) * n / 1e3, i, e["label"][:55], n, tm / 1e3, rep / 1e3, c / 1e3, e.get("class")))
    name = base.split("/")[-1]
    print(f"{name}: traced {traced / 1e6:.3f} ms, isolated replays {isolated / 1e6:.3f} ms ({100 * (isolated / traced - 1):+.1f}%), "
          f"in context {context / 1e6:.3f} ms ({100 * (context / traced - 1):+.1f}%) over {len(rows)} signatures")
    by = {}
    for r in rows:
        by[r[8]] = by.get(r[8], 0) + r[0]
    print("  in context beyond traced, by class (µs):", ", ".join(f"{k} {v:+.0f}" for k, v in sorted(by.items(), key=lambda x: -x[1])))
    for r in sorted(rows, reverse=True)[:6]:
        print("  %+8.1f µs (isolated %+7.1f) %s %s x%d: traced %.2f, isolated %.2f, in context %.2f µs" % r[:8])


for b in sys.argv[1:]:
    one(b.removesuffix(".bench"))
