#!/usr/bin/env bash
# Issue 45's check on one GPU machine: a decode of about 450 signatures
# (specs/families/l1b-sdpa-decode-b8-t32.json) captured, then predicted
# three ways, each timed: every signature measured (the reference, as
# -exact would), with -families, and with -devices 0,1 where two GPUs are
# there; kreplay diff compares each with the reference signature by
# signature, and the summary gives the wall time of each prediction and
# the predicted GPU time and energy against the reference's.
#
# Run from the project root on the GPU machine:
#   KREPLAY=path/to/kreplay OUT=dir bash scripts/gpu/families-check.sh
# PREDICT_FLAGS go to every kreplay predict (default: energy windows of
# 6 ticks after 300 ms over the signatures that make 95% of the traced
# time, 100 ms of sampling a signature, no timeline, no model, no whole
# inference); SPEC names another spec. Writes OUT/summary.txt and, with
# ARCHIVE=1, the logs and outputs as OUT/raw.tar.xz.partNN pieces.
set -uo pipefail
OUT=${OUT:-out}
DEADLINE=${DEADLINE:-560}
mkdir -p "$OUT/logs"
S="$OUT/summary.txt"
# shellcheck source=scripts/gpu/common.sh
source "$(dirname "$0")/common.sh"
SPEC=${SPEC:-scripts/gpu/specs/families/l1b-sdpa-decode-b8-t32.json}
PREDICT_FLAGS=${PREDICT_FLAGS:--ticks 6 -energywarmup 300ms -energy-share 0.95 -budget 100ms -no-timeline -model none -inference=false}
B="$OUT/bundle"
t=$(date +%s)
"$K" capture "$SPEC" -o "$B" -force -processes 1 -no-schedule >"$OUT/logs/capture.out" 2>"$OUT/logs/capture.err"
say "capture exit $? in $(( $(date +%s) - t )) s"
grep -E 'signatures|GPU busy' "$OUT/logs/capture.err" | tail -2 | tee -a "$S"
# predict_as NAME FLAGS... predicts the bundle with FLAGS, timed.
predict_as() {
  local name=$1 t
  shift
  if late; then say "$name: not started (deadline)"; return 1; fi
  t=$(date +%s)
  # shellcheck disable=SC2086
  "$K" predict $PREDICT_FLAGS "$@" -o "$OUT/logs/$name.bench" -progress "$OUT/logs/$name.progress.jsonl" "$B" \
    >"$OUT/logs/$name.txt" 2>"$OUT/logs/$name.err"
  say "$name: predict exit $? in $(( $(date +%s) - t )) s"
  grep -E '^(predicted GPU time|predicted energy|interpolated|.*signatures interpolated)' "$OUT/logs/$name.txt" | tee -a "$S"
}
predict_as exact
predict_as families -families
if [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -ge 2 ]; then
  predict_as devices -devices 0,1
fi
for name in families devices; do
  [ -s "$OUT/logs/$name.bench" ] && [ -s "$OUT/logs/exact.bench" ] || continue
  "$K" diff "$OUT/logs/exact.bench" "$OUT/logs/$name.bench" >"$OUT/logs/diff-$name.txt" 2>&1
  say "== $name against exact (kreplay diff)"
  head -12 "$OUT/logs/diff-$name.txt" | tee -a "$S"
done
rm -rf "$B/kernels"
if [ -n "${ARCHIVE:-}" ]; then
  tar -C "$OUT" -cJf - logs bundle | split -b 15m -d - "$OUT/raw.tar.xz.part" && rm -rf "$OUT/logs" "$OUT/bundle"
fi
