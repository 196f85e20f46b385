#!/usr/bin/env bash
# Measure against torch.cuda.Event timing for 5 GEMM shapes of the traces,
# 3 runs each side, both through CUDA graphs with a 20 ms idle before each
# sample (boost clock). Run from the project root after `source .gpu/env.sh`.
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT/g"
go build -o /tmp/kreplay ./cmd/kreplay || exit 1
L=h100_llama-7b_prefill; B=h100_bloom-560m_prefill
/tmp/kreplay import "embedded:$L.trace.json.gz" -o "$OUT/g/$L.set.json" 2>/dev/null
/tmp/kreplay import "embedded:$B.trace.json.gz" -o "$OUT/g/$B.set.json" 2>/dev/null
W="-tiers 2 -cache warm -kernels=false -cooldown 20ms -budget 3s"
for i in 1 2 3; do
  /tmp/kreplay run $W -ids e6587ef873a9,36d5134099b1,33d30a6c6cfd -json "$OUT/g/l$i.json" "embedded:$L.trace.json.gz" > /dev/null 2>&1
  /tmp/kreplay run $W -ids 4f0c075962c3,0699fe07516f -json "$OUT/g/b$i.json" "embedded:$B.trace.json.gz" > /dev/null 2>&1
done
export COOLDOWN_S=0.02
python3 scripts/gpu/torch_gemm.py "$OUT/g/$L.set.json" "$OUT/g/l1.json,$OUT/g/l2.json,$OUT/g/l3.json" e6587ef873a9 36d5134099b1 33d30a6c6cfd 2>&1 | tee "$OUT/torch.txt"
python3 scripts/gpu/torch_gemm.py "$OUT/g/$B.set.json" "$OUT/g/b1.json,$OUT/g/b2.json,$OUT/g/b3.json" 4f0c075962c3 0699fe07516f 2>&1 | tee -a "$OUT/torch.txt"
python3 - "$OUT"/g/l1.json "$OUT"/g/b1.json <<'PY' | tee -a "$OUT/torch.txt"
import json, sys
for f in sys.argv[1:]:
    for e in json.load(open(f))[0]["entries"]:
        g = (e.get("result") or {}).get("gpu") or {}
        print("kreplay", e["id"], "SM clock", g.get("MinSMClockMHz"), "-", g.get("MaxSMClockMHz"), "MHz, throttled", e["result"]["throttled"])
PY
rm -rf "$OUT/g"
