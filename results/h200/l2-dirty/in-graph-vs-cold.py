"""Each signature's kernel time in the timeline graph (BenchmarkContext) against
its traced median, its isolated replay (the default cache mode, context) and
its replay with -cache rotating (cold_probe in scripts/gpu/inference-check.sh),
summed over its invocations by class, with the ten largest in-graph excesses
and the rotating replay's buffer sets. For BASE, the path of a prediction's
logs without the extension (BASE.bench, BASE.progress.jsonl,
BASE.rotating.json). Run after unpacking ../inference-hook/raw6.tar.xz in a
scratch folder:
  python3 in-graph-vs-cold.py call1/logs/inf-qwen15b-sdpa-prefill-b8 call1/logs/inf-pythia410m-eager-prefill-b4
"""
import json
import re
import sys

def one(base):
    ctx = {}
    for line in open(base + ".bench"):
        m = re.match(r"BenchmarkContext/workload=[^/]+/sig=([0-9a-f]+)-\d+ \d+ ([\d.e+]+) ns/op", line)
        if m: ctx[m.group(1)] = float(m.group(2))
    iso = {}
    for line in open(base + ".progress.jsonl"):
        if line.strip():
            e = json.loads(line)["entry"]; iso[e["id"]] = e
    cold = {e["id"]: e for e in json.load(open(base + ".rotating.json"))[0]["entries"]}
    rows = []; T = {"traced":0,"iso":0,"ctx":0,"cold":0}; by = {}
    for i, e in iso.items():
        r, c = e.get("result"), cold.get(i, {}).get("result")
        if not r or not c or i not in ctx: continue
        n = e["count"]; tm = e["traced_total_ns"]/n
        ri = r.get("kernel_median_ns") or r["median_ns"]; rc = c.get("kernel_median_ns") or c["median_ns"]; cx = ctx[i]
        for k, v in (("traced", tm), ("iso", ri), ("ctx", cx), ("cold", rc)): T[k] += v*n
        cl = e.get("class"); b = by.setdefault(cl, [0,0,0,0])
        b[0] += tm*n; b[1] += ri*n; b[2] += cx*n; b[3] += rc*n
        rows.append(((cx-tm)*n, e["label"][:50], n, tm, ri, cx, rc, c.get("sets")))
    print(f"{base.split('/')[-1]}: traced {T['traced']/1e6:.3f} ms, isolated {T['iso']/1e6:.3f}, in graph {T['ctx']/1e6:.3f} ({100*(T['ctx']/T['traced']-1):+.1f}%), -cache rotating {T['cold']/1e6:.3f} ({100*(T['cold']/T['traced']-1):+.1f}%)")
    for cl, b in sorted(by.items(), key=lambda x: -(x[1][2]-x[1][0])):
        print(f"  {cl:12s} traced {b[0]/1e3:8.1f} iso {b[1]/1e3:8.1f} graph {b[2]/1e3:8.1f} rotating {b[3]/1e3:8.1f} µs")
    rows.sort(reverse=True)
    print("  largest in-graph excesses (per invocation, µs: traced / isolated / in graph / -cache rotating, its buffer sets):")
    for x in rows[:10]:
        print(f"   {x[0]/1e3:+7.1f} µs  {x[1]:50s} x{x[2]:<4d} {x[3]/1e3:7.2f} {x[4]/1e3:7.2f} {x[5]/1e3:7.2f} {x[6]/1e3:7.2f} {x[7]}")
for b in sys.argv[1:]: one(b)
