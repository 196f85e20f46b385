#!/usr/bin/env bash
# Issue 47's check on a machine of two (or, with WORLD=4, four) GPUs: for
# each tensor-parallel spec named (scripts/gpu/specs/tp/NAME.json), kreplay
# capture (ranks started by kreplay, a host schedule per rank), then kreplay
# run over the spec's GPUs with energy: per rank GPU time against busy
# less waiting, kernel identity, and the group's whole inference against
# the measured run. -out keeps every result as measured, so a replay that
# faults goes on in a new process (-resume -skip).
#
# Run from the project root on the GPU machine:
#   KREPLAY=path/to/kreplay OUT=dir bash scripts/gpu/tp-capture-check.sh NAME...
# RUN_FLAGS go to kreplay run (default: energy windows of 10 ticks after
# 500 ms, 30 ms of sampling a signature); DEADLINE=SECONDS (default 540)
# starts no new step after that (leave a minute for ARCHIVE). Writes
# OUT/summary.txt and OUT/logs/; with ARCHIVE=1 the logs and bundles
# (without kernels, removed once a bundle's run ended or was not started)
# as OUT/raw.tar.xz.partNN pieces.
set -uo pipefail
OUT=${OUT:-out}
DEADLINE=${DEADLINE:-540}
mkdir -p "$OUT/logs" "$OUT/bundles"
S="$OUT/summary.txt"
# shellcheck source=scripts/gpu/common.sh
source "$(dirname "$0")/common.sh"
RUN_FLAGS=${RUN_FLAGS:--energy -ticks 10 -energywarmup 500ms -budget 30ms}
for s in "$@"; do
  if late; then say "== $s: not started (deadline)"; continue; fi
  spec="scripts/gpu/specs/tp/$s.json" b="$OUT/bundles/$s" log="$OUT/logs/$s"
  devs=$(python3 -c 'import json,sys; print(",".join(str(d) for d in json.load(open(sys.argv[1]))["devices"]))' "$spec")
  t=$(date +%s)
  timeout "${CAPTURE_TIMEOUT:-300}" "$K" capture "$spec" -o "$b" -force -processes 1 >"$log.capture.txt" 2>&1
  rc=$?
  say "== $s: capture exit $rc in $(( $(date +%s) - t )) s (devices $devs)"
  grep -E 'schedule|per inference|blocks|warning|error' "$log.capture.txt" | tail -10 | tee -a "$S"
  [ $rc -eq 0 ] || continue
  if late; then say "run: not started (deadline)"; rm -rf "$b/kernels"; continue; fi
  t=$(date +%s)
  # shellcheck disable=SC2086
  timeout "${RUN_TIMEOUT:-400}" "$K" run -devices "$devs" $RUN_FLAGS -out "$log.progress.jsonl" -json "$log.run.json" "$b" \
    >"$log.run.txt" 2>"$log.run.err"
  say "run exit $? in $(( $(date +%s) - t )) s"
  grep -E '^(tier|all) ' "$log.run.txt" | tee -a "$S"
  sed -n '/^per rank/,/^whole set/p' "$log.run.txt" | tee -a "$S"
  grep -E '^group inference' "$log.run.txt" | tee -a "$S"
  grep -E 'going on|lost|kreplay run:' "$log.run.err" | tail -5 | tee -a "$S"
  rm -rf "$b/kernels"
done
if [ -n "${ARCHIVE:-}" ]; then
  tar -C "$OUT" -cJf - logs bundles | split -b 15m -d - "$OUT/raw.tar.xz.part" && rm -rf "$OUT/logs" "$OUT/bundles"
fi
