#!/usr/bin/env bash
# Tier-3 faithful strategies, the timeline sibling and tier-3 tables on a
# GPU. Run from the project root after `source .gpu/env.sh`.
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT/l"
export KREPLAY_REQUIRE_GPU=1
go build -o /tmp/kreplay ./cmd/kreplay || exit 1
timeout 200 go test -count=1 -v -run 'TestGPUFaithful|TestGPUSoftmaxFaithful|TestSoftmaxGPU|TestGPUEwTraced' ./tier3/ > "$OUT/l/tier3.log" 2>&1
grep -E '^(ok|FAIL|--- FAIL|panic)|exactly' "$OUT/l/tier3.log" | head -20 | tee "$OUT/last.txt"
timeout 120 go test -count=1 -v -run 'TestGPUTimeline' ./replay/ > "$OUT/l/timeline.log" 2>&1
grep -E '^(ok|FAIL|--- FAIL|panic)|timeline_gpu_test' "$OUT/l/timeline.log" | head -20 | tee -a "$OUT/last.txt"
for t in h100_bloom-560m_prefill h100_llama-7b_prefill h100_bloom-560m_generate; do
  timeout 150 /tmp/kreplay run -tiers 3 -tolerance 0.15 -budget 300ms -json "$OUT/l/$t.tier3.run.json" \
    "embedded:$t.trace.json.gz" > "$OUT/l/$t.tier3.table.txt" 2> "$OUT/l/$t.tier3.progress.log"
  echo "== $t tier 3 (exit $?)" | tee -a "$OUT/last.txt"
  grep -E '^tier3' "$OUT/l/$t.tier3.table.txt" | tee -a "$OUT/last.txt"
done
timeout 120 go test -run '^$' -bench 'Timeline' -benchtime 1x -count 3 -v ./bench/bloom_560m_prefill > "$OUT/l/timeline.bench" 2>&1
grep -E '^BenchmarkTimeline' "$OUT/l/timeline.bench" | tee -a "$OUT/last.txt"
tar -C "$OUT" -czf "$OUT/last.tgz" l && rm -rf "$OUT/l"
