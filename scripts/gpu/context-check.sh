#!/usr/bin/env bash
# The context cache mode (the default) against auto, by captured binaries
# (issue 14): for
# each spec named (scripts/gpu/specs/NAME.json), kreplay capture writes a
# bundle, then kreplay run replays it with -cache auto and -cache context,
# each writing its results as they come (-out, so that a run cut short by
# its timeout still counts), and scripts/gpu/modes.py compares the two per
# class on the signatures both measured.
#
# Run from the project root on the GPU machine:
#   KREPLAY=path/to/kreplay bash scripts/gpu/context-check.sh SPEC...
# Default specs: a compiled prefill (compute-bound GEMMs), a compiled decode
# not tuned on and the one tuned on. BUDGET (default 50ms) is each signature's; RUN_TIMEOUT
# (default 150) bounds each run in seconds; KEEP=1 keeps the bundles. Writes
# under ${OUT:-out}/context/.
set -uo pipefail
K=${KREPLAY:-}
if [ -z "$K" ]; then
  go build -o /tmp/kreplay ./cmd/kreplay || exit 1
  K=/tmp/kreplay
fi
O=${OUT:-out}/context
mkdir -p "$O"
export KREPLAY_REQUIRE_GPU=1
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=(l1b-compile-prefill qwen05b-compile-decode l1b-compile-decode)
for s in "${specs[@]}"; do
  b="$O/bundles/$s"
  timeout 300 "$K" capture "scripts/gpu/specs/$s.json" -o "$b" -force >"$O/$s.capture.out" 2>"$O/$s.capture.err" ||
    { echo "== $s: capture failed: $(tail -1 "$O/$s.capture.err")"; continue; }
  for m in auto context; do
    timeout "${RUN_TIMEOUT:-150}" "$K" run -cache "$m" -budget "${BUDGET:-50ms}" -out "$O/$s.$m.jsonl" "$b" \
      >"$O/$s.$m.txt" 2>"$O/$s.$m.err"
    echo "== $s: run -cache $m exit $?"
  done
  python3 scripts/gpu/modes.py "$O/$s.auto.jsonl" "$O/$s.context.jsonl" | tee "$O/$s.modes.md"
  [ -n "${KEEP:-}" ] || rm -rf "$b"
done
