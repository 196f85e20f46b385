#!/usr/bin/env bash
# Session 30, call 6 (nvidia-h200): the replay package's GPU tests at 60e6e15 (shared snapshots in OpenGroup, the group's look ahead, the data-flow checks)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
xz -d .bin/*.xz 2>/dev/null; chmod +x .bin/*
t0=$(date +%s)
(cd replay && KREPLAY_REQUIRE_GPU=1 timeout 150 ../.bin/replay.test -test.run GPU -test.v > $OUT/replay-tests.txt 2>&1; echo "replay GPU tests exit $?")
echo "$(grep -c -- '--- PASS' $OUT/replay-tests.txt) passed, $(grep -c -- '--- FAIL' $OUT/replay-tests.txt) failed, $(grep -c -- '--- SKIP' $OUT/replay-tests.txt) skipped in $(( $(date +%s) - t0 )) s"
grep -- '--- FAIL' $OUT/replay-tests.txt | head
