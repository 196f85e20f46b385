#!/usr/bin/env bash
# Builds and checks kreplay on a GPU machine and records the tier-1/2
# replay tables of the single-GPU shared traces. Run from the project root
# after `source .gpu/env.sh`; writes under ${OUT:-out}/ and prints a summary.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT/r"
export KREPLAY_REQUIRE_GPU=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/r/nvidia-smi.txt" 2>&1
go build -o /tmp/kreplay ./cmd/kreplay || exit 1
echo "== GPU tests" | tee "$OUT/summary.txt"
go test -count=1 ./internal/... ./energy/ ./tier1/ ./tier2/ ./replay/ > "$OUT/r/gputests.log" 2>&1
grep -E '^(ok|FAIL|---|panic)' "$OUT/r/gputests.log" | head -40 | tee -a "$OUT/summary.txt"
grep -c -- '--- SKIP' "$OUT/r/gputests.log" | sed 's/^/skipped: /' | tee -a "$OUT/summary.txt"
for t in ${TRACES:-h100_bloom-560m_prefill h100_llama-7b_prefill h100_bloom-560m_generate}; do
  /tmp/kreplay import "embedded:$t.trace.json.gz" -o "$OUT/r/$t.set.json" 2>/dev/null
  timeout ${RUN_TIMEOUT:-240} /tmp/kreplay run -tiers 1,2 -budget ${BUDGET:-1s} -json "$OUT/r/$t.run.json" \
    "embedded:$t.trace.json.gz" > "$OUT/r/$t.table.txt" 2> "$OUT/r/$t.progress.log"
  echo "== $t (exit $?)" | tee -a "$OUT/summary.txt"
  grep -E '^(tier|all)' "$OUT/r/$t.table.txt" | tee -a "$OUT/summary.txt"
done
echo "== torch vs Measure (warm cache)" | tee -a "$OUT/summary.txt"
L=h100_llama-7b_prefill; B=h100_bloom-560m_prefill
W="-tiers 2 -cache warm -kernels=false -mintime 30ms -budget 2s"
for i in 1 2 3; do
  /tmp/kreplay run $W -ids e6587ef873a9,36d5134099b1,33d30a6c6cfd -json "$OUT/r/warm_llama$i.json" "embedded:$L.trace.json.gz" > "$OUT/r/warm_llama$i.txt" 2>&1
  /tmp/kreplay run $W -ids 4f0c075962c3,0699fe07516f -json "$OUT/r/warm_bloom$i.json" "embedded:$B.trace.json.gz" > "$OUT/r/warm_bloom$i.txt" 2>&1
done
python3 scripts/gpu/torch_gemm.py "$OUT/r/$L.set.json" "$OUT/r/warm_llama1.json,$OUT/r/warm_llama2.json,$OUT/r/warm_llama3.json" e6587ef873a9 36d5134099b1 33d30a6c6cfd 2>&1 | tee -a "$OUT/summary.txt"
python3 scripts/gpu/torch_gemm.py "$OUT/r/$B.set.json" "$OUT/r/warm_bloom1.json,$OUT/r/warm_bloom2.json,$OUT/r/warm_bloom3.json" 4f0c075962c3 0699fe07516f 2>&1 | tee -a "$OUT/summary.txt"
for c in rotating warm; do
  echo "== bloom prefill tier 2, $c cache" | tee -a "$OUT/summary.txt"
  /tmp/kreplay run -tiers 2 -cache $c -budget 1s "embedded:$B.trace.json.gz" > "$OUT/r/$B.$c.table.txt" 2>/dev/null
  grep -E '^(tier2|[0-9a-f]{12})' "$OUT/r/$B.$c.table.txt" | cut -c1-100 | tee -a "$OUT/summary.txt"
done
tar -C "$OUT" -czf "$OUT/results.tgz" r && rm -rf "$OUT/r"
