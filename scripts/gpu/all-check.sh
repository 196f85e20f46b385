#!/usr/bin/env bash
# Everything the GPU machine checks in one call: all tests with
# KREPLAY_REQUIRE_GPU=1, then the tier-3 check. Run from the project root
# after `source .gpu/env.sh`; writes under ${OUT:-out}/.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT/a"
export KREPLAY_REQUIRE_GPU=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/a/nvidia-smi.txt" 2>&1
echo "== all tests (KREPLAY_REQUIRE_GPU=1)" | tee "$OUT/allsummary.txt"
timeout ${TEST_TIMEOUT:-300} go test -count=1 -timeout 280s ./... > "$OUT/a/tests.log" 2>&1
grep -E '^(ok|FAIL|--- FAIL|panic)' "$OUT/a/tests.log" | head -60 | tee -a "$OUT/allsummary.txt"
grep -c -- '--- SKIP' "$OUT/a/tests.log" | sed 's/^/skipped: /' | tee -a "$OUT/allsummary.txt"
tar -C "$OUT" -czf "$OUT/all.tgz" a && rm -rf "$OUT/a"
bash scripts/gpu/tier3-check.sh
