#!/usr/bin/env bash
# The H100 checks of tier 3 (faithful strategies) and of Measure against
# PyTorch: tier-3 GPU tests, tier-3 tables, bandwidth, torch comparison.
# Run from the project root after `source .gpu/env.sh`.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT/f"
export KREPLAY_REQUIRE_GPU=1
go build -o /tmp/kreplay ./cmd/kreplay || exit 1
echo "== tier3 GPU tests" | tee "$OUT/final.txt"
timeout 240 go test -count=1 -v -run 'TestGPUFaithful|TestGPUEwTraced|TestGPUEwBandwidth' ./tier3/ > "$OUT/f/tier3-tests.log" 2>&1
grep -E '^(ok|FAIL|--- FAIL|panic)|GB/s|exactly' "$OUT/f/tier3-tests.log" | head -30 | tee -a "$OUT/final.txt"
for t in h100_bloom-560m_prefill h100_llama-7b_prefill h100_bloom-560m_generate; do
  timeout 150 /tmp/kreplay run -tiers 3 -tolerance 0.15 -budget 300ms -json "$OUT/f/$t.tier3.run.json" \
    "embedded:$t.trace.json.gz" > "$OUT/f/$t.tier3.table.txt" 2> "$OUT/f/$t.tier3.progress.log"
  echo "== $t tier 3 (exit $?)" | tee -a "$OUT/final.txt"
  grep -E '^tier3' "$OUT/f/$t.tier3.table.txt" | tee -a "$OUT/final.txt"
done
echo "== torch vs Measure (warm cache, 3 runs each side)" | tee -a "$OUT/final.txt"
L=h100_llama-7b_prefill; B=h100_bloom-560m_prefill
/tmp/kreplay import "embedded:$L.trace.json.gz" -o "$OUT/f/$L.set.json" 2>/dev/null
/tmp/kreplay import "embedded:$B.trace.json.gz" -o "$OUT/f/$B.set.json" 2>/dev/null
W="-tiers 2 -cache warm -kernels=false -mintime 30ms -budget 2s"
for i in 1 2 3; do
  /tmp/kreplay run $W -ids e6587ef873a9,36d5134099b1,33d30a6c6cfd -json "$OUT/f/warm_llama$i.json" "embedded:$L.trace.json.gz" > /dev/null 2>&1
  /tmp/kreplay run $W -ids 4f0c075962c3,0699fe07516f -json "$OUT/f/warm_bloom$i.json" "embedded:$B.trace.json.gz" > /dev/null 2>&1
done
python3 scripts/gpu/torch_gemm.py "$OUT/f/$L.set.json" "$OUT/f/warm_llama1.json,$OUT/f/warm_llama2.json,$OUT/f/warm_llama3.json" e6587ef873a9 36d5134099b1 33d30a6c6cfd 2>&1 | tee -a "$OUT/final.txt"
python3 scripts/gpu/torch_gemm.py "$OUT/f/$B.set.json" "$OUT/f/warm_bloom1.json,$OUT/f/warm_bloom2.json,$OUT/f/warm_bloom3.json" 4f0c075962c3 0699fe07516f 2>&1 | tee -a "$OUT/final.txt"
rm -f "$OUT"/f/*.set.json
tar -C "$OUT" -czf "$OUT/final.tgz" f && rm -rf "$OUT/f"
