#!/usr/bin/env bash
# Issue 13's wall-time check, all on one GPU machine: for each spec named
# (scripts/gpu/specs/NAME.json), kreplay capture writes a bundle (its
# measured run), kreplay predict replays it (with PREDICT=1), then kreplay
# gen writes a package from the bundle, go test -c builds it and its
# BenchmarkModel runs N times (default 3). The summary holds the capture's
# median inference against BenchmarkModel's ns/op (the median inference of
# each run; their median is what benchstat centres on).
#
# Run from the project root on the GPU machine, with go on PATH:
#   KREPLAY=path/to/kreplay N=3 bash scripts/gpu/model-check.sh SPEC...
# Writes under ${OUT:-out}/ (summary.txt, logs/, bundles/ without their
# kernels directories). NOBIN=1 captures without kernel binaries; NOMODEL=1
# leaves out gen and BenchmarkModel; NOCAPTURE=1 takes the bundle an earlier
# run left in OUT (run on the same machine); KEEP_KERNELS=1 keeps the
# bundle's kernel binaries (for a later run's NOCAPTURE=1 predict);
# CAPTURE_FLAGS are passed to kreplay capture (-processes 1), PREDICT_FLAGS
# to kreplay predict; DEADLINE=SECONDS (default 540)
# starts no new step after that many seconds; CAPTURE_TIMEOUT,
# PREDICT_TIMEOUT and MODEL_TIMEOUT bound those steps (seconds; 300, 600,
# 600).
set -uo pipefail
OUT=${OUT:-out}
N=${N:-3}
DEADLINE=${DEADLINE:-540}
mkdir -p "$OUT/logs" "$OUT/bundles"
OUT=$(realpath "$OUT") # the packages run from their own directory
S="$OUT/summary.txt"
# shellcheck source=scripts/gpu/common.sh
source "$(dirname "$0")/common.sh"
K=$(realpath "$K")
export KREPLAY_REQUIRE_GPU=1
nobin=(); [ "${NOBIN:-0}" = 1 ] && nobin=(-no-binaries)
# The lent machines ran launch-bound workloads slow for their first ~150 s
# (results/h100/capture, ninth session): the summary says when each step began.
uptime_s() { cut -d. -f1 /proc/uptime; }

for s in "$@"; do
  if late; then say "== $s: not started (deadline)"; continue; fi
  log="$OUT/logs/$s" b="$OUT/bundles/$s"
  if [ "${NOCAPTURE:-0}" = 1 ]; then
    [ -f "$b/measured.json" ] || { say "== $s: no bundle at $b (NOCAPTURE=1)"; continue; }
    say "== $s: the bundle of an earlier run ($b)"
  else
    t=$(date +%s)
    say "$s: capture starts $(uptime_s) s after the machine booted"
    # shellcheck disable=SC2086
    timeout "${CAPTURE_TIMEOUT:-300}" "$K" capture "scripts/gpu/specs/$s.json" -o "$b" -force "${nobin[@]}" ${CAPTURE_FLAGS:-} >"$log.capture.out" 2>"$log.capture.err"
    rc=$?
    say "== $s: capture exit $rc in $(( $(date +%s) - t )) s"
    grep -E 'per inference|spans on|measured run at|per process|warning' "$log.capture.err" | tee -a "$S"
    [ $rc -eq 0 ] || continue
  fi
  if [ "${PREDICT:-0}" = 1 ] && ! late; then
    t=$(date +%s)
    # shellcheck disable=SC2086
    timeout "${PREDICT_TIMEOUT:-600}" "$K" predict ${PREDICT_FLAGS:-} -o "$log.bench" "$b" >"$log.predict.txt" 2>"$log.predict.err"
    say "predict exit $? in $(( $(date +%s) - t )) s"
    grep -E '^(predicted|trace GPU busy|model|total energy|prediction)' "$log.predict.txt" | tee -a "$S"
  fi
  [ "${KEEP_KERNELS:-0}" = 1 ] || rm -rf "$b/kernels"
  if late || [ "${NOMODEL:-0}" = 1 ]; then continue; fi
  p=zz_$(echo "$s" | tr -- '-.' '__')
  rm -rf "bench/$p"
  if ! "$K" gen -o "bench/$p" -pkg "$p" "$b" >"$log.gen.txt" 2>&1 || ! go test -c -o "$OUT/$p.test" "./bench/$p" >"$log.build.txt" 2>&1; then
    say "gen or build failed: $(tail -2 "$log.gen.txt" "$log.build.txt" | tr '\n' ' ')"
    continue
  fi
  t=$(date +%s)
  say "BenchmarkModel starts $(uptime_s) s after the machine booted"
  (cd "bench/$p" && timeout "${MODEL_TIMEOUT:-600}" "$OUT/$p.test" -test.run '^$' -test.bench Model -test.benchtime 1x -test.count "$N") >"$log.model.txt" 2>&1
  say "BenchmarkModel x$N exit $? in $(( $(date +%s) - t )) s"
  rm -rf "bench/$p" "$OUT/$p.test"
  python3 - "$b/measured.json" "$log.model.txt" <<'PY' | tee -a "$S"
import json, statistics, sys
m = json.load(open(sys.argv[1]))
run = next(iter(next(iter(m.values()))["runs"].values()))
cap, mean = run.get("span_ms_per_iter", [0, 0, 0])[1], run["wall_s_per_iter"] * 1e3
ns = []
for line in open(sys.argv[2]):
    if line.startswith("BenchmarkModel"):
        f = line.split()
        ns.append(float(f[f.index("ns/op") - 1]) / 1e6)
if ns and cap:
    med = statistics.median(ns)
    print(f"wall: capture median {cap:.4g} ms (mean {mean:.4g}); BenchmarkModel ns/op {', '.join(f'{x:.4g}' for x in ns)} ms, "
          f"median {med:.4g}: {100 * (med / cap - 1):+.1f}% (runs {', '.join(f'{100 * (x / cap - 1):+.1f}%' for x in ns)})")
else:
    print(f"wall: no comparison (capture median {cap}, {len(ns)} BenchmarkModel lines)")
PY
done
