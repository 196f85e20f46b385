#!/usr/bin/env bash
# Session 30, call 5 (nvidia-h200), CLI of c19d06b: the README's main job (kreplay predict on the embedded default), as a newcomer runs it.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
xz -d .bin/*.xz 2>/dev/null; chmod +x .bin/*
K=$PWD/.bin/kreplay; t0=$(date +%s); mkdir -p $OUT/main && cd $OUT/main
nvidia-smi --query-gpu=index,name,driver_version,power.limit,pci.bus_id,temperature.gpu --format=csv > gpus.csv
timeout 470 $K predict > predict.txt 2> predict.log; echo "kreplay predict exit $? in $(( $(date +%s) - t0 )) s"
head -14 predict.txt | cut -c1-220; grep -E "^done in" predict.log
