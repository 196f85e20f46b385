#!/usr/bin/env bash
# Every generated benchmark of every committed workload package, with the
# timeline and model siblings, exactly as the README runs them (one count,
# no energy), then kreplay report on the output. Run from the project root
# after `source .gpu/env.sh`; writes $OUT/all.bench, $OUT/all.report.txt
# and $OUT/all.txt (summary).
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT"
export KREPLAY_REQUIRE_GPU=1 KREPLAY_KERNEL_CACHE=${KREPLAY_KERNEL_CACHE:-/tmp/kcache}
start=$(date +%s)
timeout ${BENCH_TIMEOUT:-540} go test -p 1 -timeout 30m -run '^$' -bench . -benchtime 1x -count 1 -v ./bench/... > "$OUT/all.bench" 2>&1
echo "go test exit $? after $(( $(date +%s) - start )) s" > "$OUT/all.txt"
grep -E '^(ok|FAIL|--- FAIL|panic)' "$OUT/all.bench" >> "$OUT/all.txt"
for k in Replay Timeline Model; do
  echo "Benchmark$k result lines: $(grep -cE "^Benchmark$k/.*ns/op" "$OUT/all.bench")" >> "$OUT/all.txt"
done
echo "skipped: $(grep -c -- '--- SKIP' "$OUT/all.bench")" >> "$OUT/all.txt"
go run ./cmd/kreplay report "$OUT/all.bench" > "$OUT/all.report.txt" 2>&1
echo "report exit $?" >> "$OUT/all.txt"
grep -E '^(workload|predicted GPU|trace GPU|timeline|model wall)' "$OUT/all.report.txt" >> "$OUT/all.txt"
cat "$OUT/all.txt"
