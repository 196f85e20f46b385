#!/usr/bin/env bash
# The acceptance runs of the capture and exact-kernel issues on a GPU machine:
# for each spec named (scripts/gpu/specs/NAME.json), kreplay capture writes a
# bundle, kreplay inspect says what each signature replays by, and kreplay run
# replays it twice: by the captured binaries and as a plain trace
# (-binaries=false, left out with NOPLAIN=1), each as a table and JSON. With
# PREDICT=1 kreplay predict (energy, timeline, the bundle's measured run)
# follows.
#
# Run from the project root on the GPU machine:
#   KREPLAY=path/to/kreplay bash scripts/gpu/accept.sh SPEC...
# KREPLAY defaults to a kreplay built with go. Writes under ${OUT:-out}/
# (summary.txt, logs/, bundles/); BUNDLES=DIR captures nothing and reads the
# bundles already in DIR. DEADLINE=SECONDS (default 540) starts no new step
# after that many seconds, so that the call ends with its files. MODES="warm
# rotating" adds runs under those cache modes (-cache) for the specs named in
# MODES_FOR. NORUN=1 leaves out the runs (PREDICT=1 alone); PREDICT_FLAGS are
# passed to kreplay predict; KEEP=DIR copies each bundle there without its
# kernels directory (trace, spec, measured run: enough for kreplay gen).
# CAPTURE_TIMEOUT and PREDICT_TIMEOUT bound those steps (seconds; 300, 900).
set -uo pipefail
OUT=${OUT:-out}
DEADLINE=${DEADLINE:-540}
BUDGET=${BUDGET:-300ms}
mkdir -p "$OUT/logs"
S="$OUT/summary.txt"
# shellcheck source=scripts/gpu/common.sh
source "$(dirname "$0")/common.sh"
B=${BUNDLES:-$OUT/bundles}
mkdir -p "$B"
export KREPLAY_REQUIRE_GPU=1

for s in "$@"; do
  if late; then say "== $s: not started (deadline)"; continue; fi
  log="$OUT/logs/$s"
  if [ -z "${BUNDLES:-}" ]; then
    t=$(date +%s)
    timeout "${CAPTURE_TIMEOUT:-300}" "$K" capture "scripts/gpu/specs/$s.json" -o "$B/$s" -force >"$log.capture.out" 2>"$log.capture.err"
    rc=$?
    say "== $s: capture exit $rc in $(( $(date +%s) - t )) s: $(tail -1 "$log.capture.err")"
    grep -E 'recorded|note:|ms per inference|J per' "$log.capture.err" | head -6 | tee -a "$S"
    [ $rc -eq 0 ] || continue
  fi
  "$K" inspect -top 8 "$B/$s" >"$log.inspect.txt" 2>&1
  say "inspect exit $?"
  if [ -n "${KEEP:-}" ]; then
    mkdir -p "$KEEP/$s" && find "$B/$s" -maxdepth 1 -type f -exec cp {} "$KEEP/$s/" \;
  fi
  if late; then continue; fi
  if [ "${NORUN:-0}" != 1 ]; then
    t=$(date +%s)
    "$K" run -budget "$BUDGET" -json "$log.run.json" "$B/$s" >"$log.run.txt" 2>"$log.run.err"
    say "run (binaries) exit $? in $(( $(date +%s) - t )) s"
    grep -E '^(tier|all)' "$log.run.txt" | tee -a "$S"
  fi
  if [ "${NORUN:-0}" != 1 ] && [ "${NOPLAIN:-0}" != 1 ] && ! late; then
    t=$(date +%s)
    "$K" run -binaries=false -budget "$BUDGET" -json "$log.plain.json" "$B/$s" >"$log.plain.txt" 2>"$log.plain.err"
    say "run (plain trace) exit $? in $(( $(date +%s) - t )) s"
    grep -E '^(tier|all)' "$log.plain.txt" | tee -a "$S"
  fi
  for m in ${MODES:-}; do
    case " ${MODES_FOR:-} " in *" $s "*) ;; *) continue ;; esac
    if late; then break; fi
    "$K" run -cache "$m" -budget "$BUDGET" -json "$log.$m.json" "$B/$s" >"$log.$m.txt" 2>"$log.$m.err"
    say "run (binaries, cache $m) exit $?"
    grep -E '^(tier|all)' "$log.$m.txt" | tee -a "$S"
  done
  if [ "${PREDICT:-0}" = 1 ] && ! late; then
    t=$(date +%s)
    # shellcheck disable=SC2086
    timeout "${PREDICT_TIMEOUT:-900}" "$K" predict ${PREDICT_FLAGS:-} -o "$log.bench" -progress "$log.progress.jsonl" "$B/$s" >"$log.predict.txt" 2>"$log.predict.err"
    say "predict exit $? in $(( $(date +%s) - t )) s"
    grep -E 'predicted|busy|model|energy' "$log.predict.txt" | head -10 | tee -a "$S"
  fi
done
say "== total $(( $(date +%s) - t0 )) s"
