#!/usr/bin/env bash
# Tier-3 check on a GPU machine: GPU tests of kreplay's kernels, their
# bandwidth and attention benchmarks, and the tier-3 replay tables of the
# single-GPU shared traces. Run from the project root after
# `source .gpu/env.sh`; writes under ${OUT:-out}/ and prints a summary.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT/t"
export KREPLAY_REQUIRE_GPU=1
go build -o /tmp/kreplay ./cmd/kreplay || exit 1
echo "== tier3 GPU tests" | tee "$OUT/t3summary.txt"
go test -count=1 -v -run 'GPU' ./tier3/ > "$OUT/t/tier3-tests.log" 2>&1
grep -E '^(ok|FAIL|--- FAIL|panic)|relative error|GB/s|TFLOP' "$OUT/t/tier3-tests.log" | head -60 | tee -a "$OUT/t3summary.txt"
echo "== tier3 benchmarks" | tee -a "$OUT/t3summary.txt"
timeout ${BENCH_TIMEOUT:-150} go test -count=1 -run '^$' -bench 'GPU' -benchtime ${BENCHTIME:-50x} ./tier3/ > "$OUT/t/tier3-bench.log" 2>&1
grep -E '^Benchmark|GB/s|TFLOP' "$OUT/t/tier3-bench.log" | head -40 | tee -a "$OUT/t3summary.txt"
for t in ${TRACES:-h100_bloom-560m_prefill h100_llama-7b_prefill h100_bloom-560m_generate}; do
  timeout ${RUN_TIMEOUT:-200} /tmp/kreplay run -tiers 3 -tolerance 0.15 -budget ${BUDGET:-500ms} -json "$OUT/t/$t.tier3.run.json" \
    "embedded:$t.trace.json.gz" > "$OUT/t/$t.tier3.table.txt" 2> "$OUT/t/$t.tier3.progress.log"
  echo "== $t tier 3 (exit $?)" | tee -a "$OUT/t3summary.txt"
  grep -E '^(tier3|all)' "$OUT/t/$t.tier3.table.txt" | tee -a "$OUT/t3summary.txt"
done
tar -C "$OUT" -czf "$OUT/tier3.tgz" t && rm -rf "$OUT/t"
