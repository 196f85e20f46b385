#!/usr/bin/env bash
# x2 call 3: issue 47's Llama-2-7B TP2 prefill and decode (pre-registered 536f9b6)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
xz -d .bin/*.xz 2>/dev/null; chmod +x .bin/*
t0=$(date +%s); K=$PWD/.bin/kreplay
nvidia-smi --query-gpu=index,name,driver_version,power.limit,pci.bus_id,temperature.gpu --format=csv > $OUT/gpus.csv
KREPLAY=$K OUT=$OUT/tp ARCHIVE=1 DEADLINE=500 CAPTURE_TIMEOUT=230 RUN_TIMEOUT=220 \
  RUN_FLAGS="-energy -ticks 6 -energywarmup 300ms -budget 30ms -energy-share 0.95" \
  bash scripts/gpu/tp-capture-check.sh llama2-7b-tp2-prefill llama2-7b-tp2-decode > $OUT/tp.log 2>&1
echo "tp done at $(( $(date +%s) - t0 )) s"
cut -c1-500 $OUT/tp/summary.txt | tail -50
ls -la $OUT/tp
