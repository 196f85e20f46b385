#!/usr/bin/env bash
# Tensor-parallel check on 2 GPUs: the group's GPU tests (collective
# energy included), then the Llama-7B TP=2 prefill replayed over both GPUs
# with energy and compared, per rank and as a whole, with the run measured
# without the profiler (replay/testdata/measured.json). Run from the
# project root after `source .gpu/env.sh`; writes $OUT/tp.txt (summary),
# $OUT/tp.table.txt (the full table, rank tables at the end), $OUT/tp.run.json,
# $OUT/tp.progress.jsonl (each result as measured) and $OUT/tp.tgz (logs).
# About 6-7 minutes. If the run is cut off, running the script again
# resumes it from the progress file (SKIP_TESTS=1 skips the tests).
#
# Energy windows here are 10 counter ticks (about 1 s) after 0.5 s of
# warm-up instead of the default 101 ticks after 1 s (about 11 s a
# signature): ~200 signatures would otherwise take over 15 minutes on two
# GPUs. Windows are aligned to ticks, so the energy is the exact counter
# difference; what 10 ticks loses is averaging of the window's length
# (one tick is 10% of it, against 1%).
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT/tp"
export KREPLAY_REQUIRE_GPU=1
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv > "$OUT/tp/nvidia-smi.txt" 2>&1
go build -o /tmp/kreplay ./cmd/kreplay || exit 1
: > "$OUT/tp.txt"
if [ -z "${SKIP_TESTS:-}" ]; then
  echo "== group GPU tests" | tee -a "$OUT/tp.txt"
  timeout 180 go test -count=1 -v -run 'TestGPUGroup' ./replay/ > "$OUT/tp/group-tests.log" 2>&1
  echo "exit $?" >> "$OUT/tp/group-tests.log"
  grep -E '^(ok|FAIL|--- FAIL|--- SKIP|panic)|J per call|J per invocation|exit ' "$OUT/tp/group-tests.log" | head -40 | tee -a "$OUT/tp.txt"
fi
T=2xh200_llama-7b-tp2_prefill
echo "== $T over GPUs 0,1 with energy (10 ticks)" | tee -a "$OUT/tp.txt"
timeout ${RUN_TIMEOUT:-420} /tmp/kreplay run -devices 0,1 -energy -ticks ${TICKS:-10} -energywarmup 500ms -budget 300ms \
  -measured replay/testdata/measured.json -json "$OUT/tp.run.json" -out "$OUT/tp.progress.jsonl" -resume \
  "embedded:$T.rank0.trace.json.gz" "embedded:$T.rank1.trace.json.gz" > "$OUT/tp.table.txt" 2> "$OUT/tp/run.log"
echo "exit $?" | tee -a "$OUT/tp.txt"
grep -E '^device|idle|kreplay run:' "$OUT/tp/run.log" | head -20 | tee -a "$OUT/tp.txt"
grep -E '^(tier|all)' "$OUT/tp.table.txt" | tee -a "$OUT/tp.txt"
sed -n '/^per rank/,$p' "$OUT/tp.table.txt" | tee -a "$OUT/tp.txt"
grep -E 'allreduce' "$OUT/tp/run.log" | tee -a "$OUT/tp.txt"
tar -C "$OUT" -czf "$OUT/tp.tgz" tp && rm -rf "$OUT/tp"
