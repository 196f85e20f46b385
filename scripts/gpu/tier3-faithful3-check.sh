#!/usr/bin/env bash
# Tier-3 faithful cat, reduce_kernel, vectorized layer norm and generic
# result layouts on a GPU: their GPU tests, then the tier-3 tables of the
# single-GPU traces. Run from the project root after `source .gpu/env.sh`.
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT/f3"
export KREPLAY_REQUIRE_GPU=1
go build -o /tmp/kreplay ./cmd/kreplay || exit 1
timeout 300 go test -count=1 -v -run 'TestGPUFaithful|TestGPUReduceFaithful|TestGPULayerNormFaithful|TestLayerNormGPU|TestReduceGPU|TestGPUEwTraced' ./tier3/ > "$OUT/f3/tier3.log" 2>&1
grep -E '^(ok|FAIL|--- FAIL|panic)|exactly' "$OUT/f3/tier3.log" | head -20 | tee "$OUT/f3.txt"
for t in h100_llama-7b_prefill h100_bloom-560m_prefill h100_bloom-560m_generate; do
  timeout 150 /tmp/kreplay run -tiers 3 -tolerance 0.15 -budget 300ms -json "$OUT/f3/$t.tier3.run.json" \
    "embedded:$t.trace.json.gz" > "$OUT/f3/$t.tier3.table.txt" 2> "$OUT/f3/$t.tier3.progress.log"
  echo "== $t tier 3 (exit $?)" | tee -a "$OUT/f3.txt"
  grep -E '^tier3' "$OUT/f3/$t.tier3.table.txt" | tee -a "$OUT/f3.txt"
done
# The Llama mean reads 33.5 MB that the trace's pow had just pushed out
# of L2; warm (auto) replays it from L2.
timeout 60 /tmp/kreplay run -tiers 3 -cache rotating -budget 300ms -ids 823849f76925 \
  embedded:h100_llama-7b_prefill.trace.json.gz 2>/dev/null | grep -E '^[0-9a-f]{12}' | tee -a "$OUT/f3.txt"
tar -C "$OUT" -czf "$OUT/f3.tgz" f3 && rm -rf "$OUT/f3"
