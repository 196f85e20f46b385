#!/usr/bin/env bash
# x2 call 1: issue 45's two-GPU speed (default spread vs -devices 0), then issue 47's Mistral TP2 prefill (pre-registered 536f9b6)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
xz -d .bin/*.xz 2>/dev/null; chmod +x .bin/*
t0=$(date +%s); K=$PWD/.bin/kreplay
el() { echo "$(( $(date +%s) - t0 )) s"; }
nvidia-smi --query-gpu=index,name,driver_version,power.limit,pci.bus_id,temperature.gpu --format=csv > $OUT/gpus.csv
lscpu | grep -E "Model name|^CPU\(s\)" >> $OUT/gpus.csv
TIMES=0 ONE=1 KREPLAY=$K OUT=$OUT/speed DEADLINE=280 PREDICT_TIMEOUT=120 CAPTURE_TIMEOUT=160 bash scripts/gpu/predict-speed.sh > $OUT/speed.log 2>&1
echo "speed done at $(el)"
tar -C $OUT --exclude='speed/bundle/kernels' --exclude='*.trace.json.gz' --exclude='schedule*.txt.gz' -cJf $OUT/speed.tar.xz speed && rm -rf $OUT/speed
left=$(( 575 - ($(date +%s) - t0) ))
KREPLAY=$K OUT=$OUT/tp ARCHIVE=1 DEADLINE=$(( left - 60 )) CAPTURE_TIMEOUT=170 RUN_TIMEOUT=$(( left - 200 )) \
  RUN_FLAGS="-energy -ticks 6 -energywarmup 300ms -budget 30ms -energy-share 0.95" \
  bash scripts/gpu/tp-capture-check.sh mistral7b-tp2-prefill > $OUT/tp.log 2>&1
echo "tp done at $(el)"
cat $OUT/speed.log | grep -v '^$' | cut -c1-400 | tail -30
cut -c1-400 $OUT/tp/summary.txt | tail -30
ls -la $OUT $OUT/tp
