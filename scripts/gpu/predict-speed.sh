#!/usr/bin/env bash
# Issue 45's speed check, on one GPU: kreplay capture writes a bundle of
# SPEC (scripts/gpu/specs/SPEC.json; default a decode of about 450
# signatures, batch 8, 32 new tokens), then kreplay predict predicts it
# from the bundle alone (-model none), timed: times only (TIME_FLAGS; with
# NOPAUSE=1 the same again without the pause before each signature, -pause
# 0; with FAMILIES=1 the same again with -families, the signature
# families interpolated, which FAMILIES=energy leaves to the energy
# predictions; TIMES=0 skips the times-only predictions) and
# with energy (with DEVICES=all or a list, spread over those GPUs, and
# with ONE=1 again on device 0 alone; ENERGY_FLAGS, default the issue's own: windows of 6
# ticks after 300 ms over the signatures that make 95% of the traced time,
# 100 ms of sampling each, where -signature-energy on or a bundle without
# a recorded schedule gives the signatures windows of their own; with
# FAMILIES=1 again with -families). With TOP=N (default 0: none), before
# the energy prediction, the N signatures of the largest traced time get
# their energy measured twice by kreplay run, with the short windows
# (SHORT_FLAGS) and with kreplay's default ones (31 ticks after 1 s), so
# that the two can be held against each other. Writes OUT/summary.txt and
# OUT/logs/.
#
# Run from the project root on the GPU machine:
#   KREPLAY=path/to/kreplay OUT=dir bash scripts/gpu/predict-speed.sh [SPEC]
set -uo pipefail
OUT=${OUT:-out}
DEADLINE=${DEADLINE:-540}
mkdir -p "$OUT/logs"
S="$OUT/summary.txt"
# shellcheck source=scripts/gpu/common.sh
source "$(dirname "$0")/common.sh"
SPEC=${1:-pythia14b-sdpa-decode-b8-t32}
ENERGY_FLAGS=${ENERGY_FLAGS:--energy-share 0.95 -ticks 6 -energywarmup 300ms -budget 100ms}
TIME_FLAGS=${TIME_FLAGS:--energy=false -budget 60ms}
SHORT_FLAGS=${SHORT_FLAGS:--ticks 6 -energywarmup 300ms -budget 100ms}
TOP=${TOP:-0}
b="$OUT/bundle" L="$OUT/logs"

t=$(date +%s)
timeout "${CAPTURE_TIMEOUT:-200}" "$K" capture "scripts/gpu/specs/$SPEC.json" -o "$b" -force -processes 1 \
  >"$L/capture.out" 2>"$L/capture.err"
say "capture $SPEC exit $? in $(( $(date +%s) - t )) s"

# timed NAME FLAGS...: one prediction, its wall time and how many signatures.
timed() {
  local name=$1 t
  shift
  t=$(date +%s%N)
  # shellcheck disable=SC2068
  timeout "$(left "${PREDICT_TIMEOUT:-200}")" "$K" predict $@ -model none -o "$L/$name.bench" -progress "$L/$name.progress.jsonl" "$b" \
    >"$L/$name.txt" 2>"$L/$name.err"
  local rc=$?
  say "predict ($name: $*) exit $rc in $(( ($(date +%s%N) - t) / 1000000 )) ms; $(grep -c '"entry"' "$L/$name.progress.jsonl") signatures"
  grep -E '^time over|^energy:' "$L/$name.err" | tee -a "$S"
  grep -E '^(predicted GPU time|inference wall|inference energy)' "$L/$name.txt" | tee -a "$S"
}
if [ "${TIMES:-1}" != 0 ]; then
  late || timed times $TIME_FLAGS
  [ -z "${NOPAUSE:-}" ] || late || timed nopause $TIME_FLAGS -pause 0
  [ -z "${FAMILIES:-}" ] || [ "$FAMILIES" = energy ] || late || timed families $TIME_FLAGS -families
fi

# energyrun NAME FLAGS...: the TOP signatures' energy by kreplay run.
energyrun() {
  local name=$1 t
  shift
  t=$(date +%s)
  # shellcheck disable=SC2068
  timeout "$(left "${RUN_TIMEOUT:-150}")" "$K" run -ids "$ids" -energy $@ -json "$L/$name.json" "$b" >"$L/$name.txt" 2>"$L/$name.err"
  say "run -ids (top $TOP) -energy $* exit $? in $(( $(date +%s) - t )) s"
}
ids=
[ "$TOP" -le 0 ] || ids=$(python3 - "$L/times.progress.jsonl" "$TOP" <<'EOF'
import json, sys
es = [json.loads(l)["entry"] for l in open(sys.argv[1]) if l.strip()]
es = list({e["id"]: e for e in es if e.get("result")}.values())
es.sort(key=lambda e: -e.get("traced_total_ns", 0))
print(",".join(e["id"] for e in es[: int(sys.argv[2])]))
EOF
)
if [ -n "$ids" ] && ! late; then
  # shellcheck disable=SC2086
  energyrun short $SHORT_FLAGS
  late || energyrun long
  python3 - "$L/short.json" "$L/long.json" <<'EOF' | tee -a "$S"
import json, sys


def entries(path):
    try:
        doc = json.load(open(path))
    except (OSError, ValueError):
        return {}
    outs = doc if isinstance(doc, list) else doc.get("sets", [])
    return {e["id"]: e for o in outs for e in o.get("entries") or [] if (e.get("result") or {}).get("energy")}


short, long = entries(sys.argv[1]), entries(sys.argv[2])
print("id label | short windows: J/op W ticks | default windows: J/op W ticks | default/short")
for i, s in short.items():
    if i in long:
        se, le = s["result"]["energy"], long[i]["result"]["energy"]
        print(f'{i} {s.get("label", "")[:40]} | {se["joules_per_op"]:.4g} {se["watts"]:.0f} {se["ticks"]} | '
              f'{le["joules_per_op"]:.4g} {le["watts"]:.0f} {le["ticks"]} | {le["joules_per_op"] / se["joules_per_op"]:.3f}')
EOF
fi
# shellcheck disable=SC2086
late || timed energy $ENERGY_FLAGS ${DEVICES:+-devices $DEVICES}
[ -z "${ONE:-}" ] || late || timed energy-one $ENERGY_FLAGS -devices 0
[ -z "${FAMILIES:-}" ] || late || timed energy-families $ENERGY_FLAGS -families
rm -rf "$b/kernels"
