#!/usr/bin/env bash
# x2 call 4: the group's CUPTI timing (90d3bd2): TestGPUGroupRunSet on two GPUs, then issue 45's speed check again (two GPUs by default, then -devices 0)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
xz -d .bin/*.xz 2>/dev/null; chmod +x .bin/*
t0=$(date +%s); K=$PWD/.bin/kreplay
el() { echo "$(( $(date +%s) - t0 )) s"; }
nvidia-smi --query-gpu=index,name,driver_version,power.limit,pci.bus_id,temperature.gpu --format=csv > $OUT/gpus.csv
(cd replay && KREPLAY_REQUIRE_GPU=1 timeout 80 ../.bin/replay.test -test.run 'TestGPUGroupRunSet$' -test.v > $OUT/group-test.log 2>&1; echo "TestGPUGroupRunSet exit $? at $(el)")
grep -E "^(---|ok|FAIL)|Error|no CUPTI" $OUT/group-test.log | head -20
TIMES=0 ONE=1 KREPLAY=$K OUT=$OUT/speed DEADLINE=290 PREDICT_TIMEOUT=110 CAPTURE_TIMEOUT=170 bash scripts/gpu/predict-speed.sh > $OUT/speed.log 2>&1
echo "speed done at $(el)"
tar -C $OUT --exclude='speed/bundle/kernels' --exclude='*.trace.json.gz' --exclude='schedule*.txt.gz' -cJf $OUT/speed.tar.xz speed && rm -rf $OUT/speed
grep -v '^$' $OUT/speed.log | cut -c1-600 | tail -30
