#!/usr/bin/env bash
# Does another GPU's work disturb one GPU's replay times and energy windows? (issue 45 item 1)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
xz -d .bin/*.xz 2>/dev/null; chmod +x .bin/*
F="-tiers 2 -energy -ticks 10 -energywarmup 500ms -budget 100ms"
W=embedded:h100_llama-7b_prefill
.bin/kreplay run -device 0 $F -json $OUT/alone0.json $W > $OUT/alone0.txt 2>$OUT/alone0.err
.bin/kreplay run -device 0 $F -json $OUT/both0.json $W > $OUT/both0.txt 2>$OUT/both0.err &
.bin/kreplay run -device 1 $F -json $OUT/both1.json $W > $OUT/both1.txt 2>$OUT/both1.err &
wait
KREPLAY_REQUIRE_GPU=1 timeout 60 .bin/replay.test -test.run 'TestGPURunSetPrefill$|TestGPUGroupRunSet$' -test.v > $OUT/tests.txt 2>&1; echo "tests rc $?"
grep -E '^(--- |ok|FAIL|PASS)' $OUT/tests.txt
python3 - "$OUT" <<'PY'
import json, sys
o = sys.argv[1]
def load(n):
    d = json.load(open(f"{o}/{n}.json"))
    if isinstance(d, dict) and "entries" not in d:
        d = d["sets"][0]
    es = d["entries"] if isinstance(d, dict) else d
    r = {}
    for e in es:
        res = e.get("result") or {}
        en = res.get("energy") or {}
        if res.get("median_ns"):
            r[e["id"]] = (e.get("label", "")[:40], res["median_ns"], en.get("joules_per_op"), e.get("count", 1))
    return r
a, b, c = load("alone0"), load("both0"), load("both1")
ta = tb = ea = eb = 0
for k, (lab, t, j, n) in sorted(a.items(), key=lambda kv: -kv[1][1] * kv[1][3]):
    if k not in b: continue
    t2, j2 = b[k][1], b[k][2]
    ta += t * n; tb += t2 * n
    if j and j2: ea += j * n; eb += j2 * n
    print(f"{k} {lab:40s} time {t/1e3:9.2f} -> {t2/1e3:9.2f} us ({(t2/t-1)*100:+5.1f}%)  J {j if j is None else round(j,5)} -> {j2 if j2 is None else round(j2,5)} ({((j2/j-1)*100) if j and j2 else float('nan'):+5.1f}%)")
print(f"total time x count: alone {ta/1e6:.3f} ms, with GPU 1 busy {tb/1e6:.3f} ms ({(tb/ta-1)*100:+.2f}%); energy {ea:.3f} -> {eb:.3f} J ({(eb/ea-1)*100 if ea else float('nan'):+.2f}%)")
PY
