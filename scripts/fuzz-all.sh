#!/usr/bin/env bash
# Runs every fuzz target of the module, one after another, for FUZZTIME
# each (default 5m: twelve targets make an hour), with one worker, and
# writes one log per target and a summary into OUT (default
# results/fuzz/run-DATE). It exits non-zero when any target failed; a
# failing input is kept by go test under the package's testdata/fuzz.
set -uo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-5m}
OUT=${OUT:-results/fuzz/run-$(date -u +%Y%m%d)}
mkdir -p "$OUT"
S="$OUT/summary.txt"
echo "commit $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (modified)'), $(nproc) cores, FUZZTIME=$FUZZTIME, started $(date -u +%FT%TZ)" | tee "$S"
fail=0
while IFS=: read -r file name; do
  pkg=./$(dirname "$file")
  log="$OUT/$(basename "$pkg")-$name.log"
  t=$(date +%s)
  go test -run '^$' -fuzz "^$name\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 10s -parallel 1 "$pkg" >"$log" 2>&1
  rc=$?
  execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  echo "$pkg $name: exit $rc in $(( $(date +%s) - t )) s, ${execs:-?} executions" | tee -a "$S"
  [ $rc -eq 0 ] || fail=1
done < <(grep -rho --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' . | sort -u | sed 's/^func //' | while read -r n; do
  f=$(grep -rl --include='*_test.go' "^func $n(" . | head -1); echo "${f#./}:$n"; done)
echo "finished $(date -u +%FT%TZ), $([ $fail -eq 0 ] && echo 'no failure' || echo 'FAILURES')" | tee -a "$S"
exit $fail
