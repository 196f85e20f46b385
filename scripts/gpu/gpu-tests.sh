#!/usr/bin/env bash
# Runs the GPU tests of test binaries built elsewhere (go test -c -o
# BIN/PKG.test ./PKG, with the package path's slashes as '_') with
# KREPLAY_REQUIRE_GPU=1, each in its package directory, and prints one line
# per binary: passed, failed and skipped tests. RUN is the -test.run pattern
# (default GPU), EACH the timeout per binary in seconds (default 120).
# Writes the logs under ${OUT:-out}/tests/. Exit status 1 when any failed.
set -uo pipefail
BIN=$(cd "${BIN:-.dev/bin}" && pwd)
OUT=${OUT:-out}
mkdir -p "$OUT/tests"
LOGS=$(cd "$OUT/tests" && pwd)
export KREPLAY_REQUIRE_GPU=1
rc=0
for t in "$BIN"/*.test; do
  n=$(basename "$t" .test)
  dir=${n//_//}
  [ -d "$dir" ] || { echo "$n: no package directory $dir"; rc=1; continue; }
  (cd "$dir" && timeout "${EACH:-120}" "$t" -test.run "${RUN:-GPU}" -test.v -test.count=1 >"$LOGS/$n.log" 2>&1)
  st=$?
  p=$(grep -c -- '--- PASS' "$LOGS/$n.log")
  f=$(grep -c -- '--- FAIL' "$LOGS/$n.log")
  s=$(grep -c -- '--- SKIP' "$LOGS/$n.log")
  echo "$n: exit $st, $p passed, $f failed, $s skipped"
  [ "$st" -eq 0 ] || { rc=1; grep -m5 -- '--- FAIL' "$LOGS/$n.log"; }
done
exit $rc
