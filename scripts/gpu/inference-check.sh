#!/usr/bin/env bash
# Issue 43's check, on one GPU machine: for each spec named
# (scripts/gpu/specs/inference/NAME.json) kreplay capture writes a bundle
# with the host's schedule of its measured processes, then kreplay predict
# predicts the whole inference from the bundle and the replays alone and
# reports it against the capture's measured run (-model measured: read,
# never fed into the prediction). The summary keeps the figures of both.
#
# Run from the project root on the GPU machine:
#   KREPLAY=path/to/kreplay OUT=dir bash scripts/gpu/inference-check.sh NAME...
# CAPTURE_FLAGS go to kreplay capture; PREDICT_FLAGS to kreplay predict
# (default: energy windows of 4 ticks over the signatures that make 50% of
# the traced time, the rest estimated from their class's power, where the
# signatures get windows of their own: predict's -signature-energy auto
# skips them when the inference's energy is in place, as on a bundle with
# a recorded schedule; 50 ms of sampling per signature; the timeline runs,
# and with it the paced timeline, the model's independent check, which
# measures the in-place energy); DEADLINE=SECONDS (default 540)
# starts no new step after that; CAPTURE_TIMEOUT and PREDICT_TIMEOUT bound
# the steps (300 and 400 s). PREDICT_DEVICE=N predicts on CUDA device N
# (default 0) in the background, one prediction at a time, while the next
# spec is captured on the spec's device: on a machine of two GPUs of one
# kind it halves the time (the capture's host then shares the machine with
# one predicting process). Writes OUT/summary.txt, OUT/logs/ and
# OUT/bundles/ (without their kernels directories; a spec whose replay
# faulted keeps its own as OUT/kernels-SPEC.tar.xz.partNN, keep_faulted
# says how, and each signature that faulted is replayed alone again in
# three cache modes, probe_faulted; COLD_SPECS="SPEC ..." replays those
# specs' signatures with their inputs cold, cold_probe); with ARCHIVE=1 the
# logs and bundles go into OUT/raw.tar.xz.partNN instead, pieces of 15 MiB
# (the device tool brings back at most 8 files of 16 MiB; join them with
# cat before unpacking).
set -uo pipefail
OUT=${OUT:-out}
DEADLINE=${DEADLINE:-540}
mkdir -p "$OUT/logs" "$OUT/bundles"
S="$OUT/summary.txt"
# shellcheck source=scripts/gpu/common.sh
source "$(dirname "$0")/common.sh"
PREDICT_FLAGS=${PREDICT_FLAGS:--energy-share 0.5 -ticks 4 -energywarmup 200ms -budget 50ms}
PREDICT_DEVICE=${PREDICT_DEVICE:-}
# predict_one SPEC predicts SPEC's bundle and writes its summary lines to
# OUT/logs/SPEC.summary.
predict_one() {
  local s=$1 b="$OUT/bundles/$1" log="$OUT/logs/$1" t
  t=$(date +%s)
  # shellcheck disable=SC2086
  timeout "${PREDICT_TIMEOUT:-400}" "$K" predict $PREDICT_FLAGS -device "${PREDICT_DEVICE:-0}" -model measured -o "$log.bench" \
    -progress "$log.progress.jsonl" "$b" >"$log.predict.txt" 2>"$log.predict.err"
  {
    echo "predict $s exit $? in $(( $(date +%s) - t )) s"
    grep -E '^(host probe|inference|kreplay predict: the whole)' "$log.predict.err"
    grep -E '^(paced timeline)' "$log.predict.err"
    grep -E '^(predicted GPU time|trace GPU busy|model wall|model energy|inference|time per output|energy per output|paced timeline|against the acceptance)' "$log.predict.txt"
  } >"$log.summary"
  cold_probe "$s"
  probe_faulted "$s"
  keep_faulted "$s"
  rm -rf "$b/kernels"
}
# cold_probe SPEC, for a SPEC named in COLD_SPECS, replays every signature
# of SPEC's bundle alone again with its inputs cold in L2 (-cache rotating:
# no launch but its own, its tensors rotated through buffers larger than
# L2) into OUT/logs/SPEC.rotating.json, to be set against each signature's
# time in the timeline graph (BenchmarkContext in SPEC.bench): whether the
# graph's memory-bound kernels run as long as with their inputs cold.
cold_probe() {
  local s=$1 b="$OUT/bundles/$1" log="$OUT/logs/$1" t rc
  case " ${COLD_SPECS:-} " in *" $s "*) ;; *) return 0 ;; esac
  t=$(date +%s)
  timeout "${COLD_TIMEOUT:-90}" "$K" run -cache rotating -budget 30ms -device "${PREDICT_DEVICE:-0}" \
    -json "$log.rotating.json" "$b" >"$log.rotating.txt" 2>&1
  rc=$?
  say "$s: every signature replayed with its inputs cold (-cache rotating): exit $rc in $(( $(date +%s) - t )) s"
}
# probe_faulted SPEC replays each signature whose replay lost the CUDA
# context in SPEC's prediction alone again, in three cache modes: context
# (the default: the launches recorded before it run before each sample),
# primed (its producers only) and rotating (no launch but its own), each
# in a process of its own, and says which fault, so that a fault of the
# launches run before it is told from one of its own launch.
probe_faulted() {
  local s=$1 b="$OUT/bundles/$1" log="$OUT/logs/$1" id mode rc
  for id in $(grep -o 'context was lost when signature [0-9a-f]*' "$log.predict.err" 2>/dev/null | awk '{print $NF}' | sort -u); do
    for mode in context primed rotating; do
      timeout "${PROBE_TIMEOUT:-60}" "$K" run -ids "$id" -cache "$mode" -budget 30ms -device "${PREDICT_DEVICE:-0}" "$b" \
        >"$log.fault-$id-$mode.txt" 2>&1
      rc=$?
      say "$s: signature $id replayed alone, cache $mode: exit $rc$(grep -m1 -o -E 'CUDA_ERROR_[A-Z_]+|device-side assert[^;]*' "$log.fault-$id-$mode.txt" | sed 's/^/, /')"
    done
  done
}
# keep_faulted SPEC keeps SPEC's kernels directory, when a replay faulted
# on the GPU (a lost CUDA context), as OUT/kernels-SPEC.tar.xz.partNN (at
# most 3 pieces of 15 MiB, so that with the raw archive and the summary
# they stay within the device tool's 8 files), so that the fault can be
# replayed elsewhere. A directory over KEEP_MAX_MB (default 400) before
# compression, or an archive over 45 MiB after it, is not kept, and the
# summary says so; the compression has KEEP_TIMEOUT seconds (default 60).
keep_faulted() {
  local s=$1 b="$OUT/bundles/$1" f="$OUT/kernels-$1.tar.xz" mb
  grep -q 'context was lost' "$OUT/logs/$s.predict.err" 2>/dev/null || return 0
  [ -d "$b/kernels" ] || return 0
  mb=$(du -sm "$b/kernels" | cut -f1)
  if [ "$mb" -gt "${KEEP_MAX_MB:-400}" ]; then
    say "$s: a replay faulted; its kernels directory, $mb MiB, not kept (over KEEP_MAX_MB)"
    return 0
  fi
  if ! XZ_OPT=-T0 timeout "${KEEP_TIMEOUT:-60}" tar -C "$b" -cJf "$f" kernels; then
    say "$s: a replay faulted; its kernels directory ($mb MiB) could not be archived in time, not kept"
    rm -f "$f"
    return 0
  fi
  if [ "$(stat -c %s "$f")" -gt $(( 45 * 1048576 )) ]; then
    say "$s: a replay faulted; its kernels directory, $(( $(stat -c %s "$f") / 1048576 )) MiB compressed, not kept"
    rm -f "$f"
    return 0
  fi
  split -b 15m -d "$f" "$f.part" && rm -f "$f"
  say "$s: a replay faulted; its kernels directory kept as $f.partNN"
}
pending=() pid=
for s in "$@"; do
  if late; then say "== $s: not started (deadline)"; continue; fi
  b="$OUT/bundles/$s" log="$OUT/logs/$s"
  t=$(date +%s)
  # shellcheck disable=SC2086
  timeout "${CAPTURE_TIMEOUT:-300}" "$K" capture "scripts/gpu/specs/inference/$s.json" -o "$b" -force ${CAPTURE_FLAGS:-} >"$log.capture.out" 2>"$log.capture.err"
  rc=$?
  say "== $s: capture exit $rc in $(( $(date +%s) - t )) s"
  grep -E 'schedule|overhead|per inference|spread|warning|error|blocks' "$log.capture.err" | tail -12 | tee -a "$S"
  [ $rc -eq 0 ] || continue
  if late; then say "predict: not started (deadline)"; rm -rf "$b/kernels"; continue; fi
  if [ -n "$PREDICT_DEVICE" ]; then
    [ -n "$pid" ] && wait "$pid"
    predict_one "$s" &
    pid=$!
  else
    predict_one "$s"
  fi
  pending+=("$s")
done
[ -n "$pid" ] && wait "$pid"
for s in "${pending[@]}"; do
  say "== $s"
  tee -a "$S" <"$OUT/logs/$s.summary"
done
if [ -n "${ARCHIVE:-}" ]; then
  tar -C "$OUT" -cJf - logs bundles | split -b 15m -d - "$OUT/raw.tar.xz.part" && rm -rf "$OUT/logs" "$OUT/bundles"
fi
