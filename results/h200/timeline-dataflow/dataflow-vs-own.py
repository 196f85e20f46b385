"""Each signature's kernel time inside the timeline graph with buffers of its
own (the default) and on the recorded data flow (kreplay predict
-timeline-dataflow), against its traced median and its isolated replay,
summed over its invocations by class, with the eight largest own-buffer
excesses. BASE is the path of the logs without the extension: BASE.default.bench,
BASE.dataflow.bench (BenchmarkContext lines) and BASE.default.progress.jsonl.
Run after unpacking raw.tar.xz in a scratch folder:
  python3 dataflow-vs-own.py call4/logs/inf-qwen15b-sdpa-prefill-b8
"""
import json
import re
import sys


def context(path):
    c = {}
    for line in open(path):
        m = re.match(r"BenchmarkContext/workload=[^/]+/sig=([0-9a-f]+)-\d+ \d+ ([\d.e+]+) ns/op", line)
        if m:
            c[m.group(1)] = float(m.group(2))
    return c


def main(base):
    own, flow = context(base + ".default.bench"), context(base + ".dataflow.bench")
    ents = {}
    for line in open(base + ".default.progress.jsonl"):
        if line.strip():
            e = json.loads(line)["entry"]
            ents[e["id"]] = e
    tot, by, rows = [0.0] * 4, {}, []
    for i, e in ents.items():
        r = e.get("result")
        if not r or i not in own or i not in flow:
            continue
        n = e["count"]
        tm = e["traced_total_ns"] / n
        iso = r.get("kernel_median_ns") or r["median_ns"]
        v = [tm * n, iso * n, own[i] * n, flow[i] * n]
        b = by.setdefault(e.get("class"), [0.0] * 4)
        for k in range(4):
            tot[k] += v[k]
            b[k] += v[k]
        rows.append(((own[i] - tm) * n, e["label"][:45], n, tm / 1e3, iso / 1e3, own[i] / 1e3, flow[i] / 1e3))
    pct = lambda x: 100 * (x / tot[0] - 1)  # noqa: E731
    print(f"{base.split('/')[-1]}: traced {tot[0] / 1e6:.3f} ms, isolated {tot[1] / 1e6:.3f} ({pct(tot[1]):+.1f}%), "
          f"in the graph on buffers of their own {tot[2] / 1e6:.3f} ({pct(tot[2]):+.1f}%), on the data flow {tot[3] / 1e6:.3f} ({pct(tot[3]):+.1f}%)")
    for c, b in sorted(by.items(), key=lambda x: -x[1][0]):
        print(f"  {c:12s} traced {b[0] / 1e3:8.1f}  isolated {b[1] / 1e3:8.1f}  own buffers {b[2] / 1e3:8.1f}  data flow {b[3] / 1e3:8.1f} µs")
    rows.sort(key=lambda x: -x[0])
    print("  largest own-buffer excesses, per invocation (µs): traced / isolated / own buffers / data flow")
    for r in rows[:8]:
        print(f"   {r[1]:45s} x{r[2]:<3d} {r[3]:7.2f} {r[4]:7.2f} {r[5]:7.2f} {r[6]:7.2f}")


for b in sys.argv[1:]:
    main(b)
