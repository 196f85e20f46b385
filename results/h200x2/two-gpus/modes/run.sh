#!/usr/bin/env bash
# Do energy windows or the group path slow big GEMMs' timing? (the TP prefill's +13-15% GEMMs)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
xz -d .bin/kreplay.xz 2>/dev/null; chmod +x .bin/kreplay
W=embedded:h100_llama-7b_prefill
B="-tiers 2 -budget 100ms"
.bin/kreplay run -device 0 $B -json $OUT/plain.json $W > /dev/null 2>$OUT/plain.err
.bin/kreplay run -device 0 $B -energy -ticks 10 -energywarmup 500ms -json $OUT/energy.json $W > /dev/null 2>$OUT/energy.err
.bin/kreplay run -devices 0,1 $B -energy -ticks 10 -energywarmup 500ms -json $OUT/group.json $W > /dev/null 2>$OUT/group.err
.bin/kreplay run -devices 0,1 $B -json $OUT/groupplain.json $W > /dev/null 2>$OUT/groupplain.err
python3 - "$OUT" <<'PY'
import json, sys
o = sys.argv[1]
def load(n):
    d = json.load(open(f"{o}/{n}.json"))
    d = d[0] if isinstance(d, list) else d
    d = d["sets"][0] if "sets" in d else d
    return {e["id"]: (e["label"][:34], (e.get("result") or {}).get("median_ns", 0), e["count"]) for e in d["entries"]}
runs = ["plain", "energy", "group", "groupplain"]
t = {r: load(r) for r in runs}
for k, (lab, _, n) in t["plain"].items():
    print(k, f"{lab:34s}", " ".join(f"{r} {t[r].get(k, ('', 0, 0))[1]/1e3:8.2f}" for r in runs))
PY
