import json, sys
def load(p):
    out = {}
    for l in open(p):
        e = json.loads(l)["entry"]
        out[e["id"]] = e
    return out
def rep(r):
    return r.get("kernel_median_ns") or r.get("median_ns") or 0
for p in sys.argv[1:]:
    es = load(p)
    tot = sum(rep(e["result"]) * e["count"] for e in es.values() if e.get("result") and not e.get("part_of"))
    traced = sum(e.get("traced_total_ns", 0) for e in es.values() if not e.get("part_of"))
    nk = sum(1 for e in es.values() if e.get("result") and e["result"].get("kernel_median_ns"))
    same = sum(1 for e in es.values() if e.get("same_kernel"))
    print(f"{p}: {len(es)} entries, sum reported x count {tot/1e6:.3f} ms, traced {traced/1e6:.3f} ms, with CUPTI kernel time {nk}, same kernel {same}")
