#!/usr/bin/env bash
# the data-power probe (a GEMM's power against its data), then issue 43's fifth design on a decode new to it
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
xz -d .bin/*.xz 2>/dev/null; chmod +x .bin/*
t0=$(date +%s)
nvidia-smi --query-gpu=index,name,driver_version,power.limit,pci.bus_id --format=csv > $OUT/gpus.csv
lscpu | grep -m1 "Model name" >> $OUT/gpus.csv; nproc >> $OUT/gpus.csv
timeout 150 python3 scripts/gpu/data-power.py 3 15 > $OUT/data-power.txt 2>&1
echo "probe exit $? in $(( $(date +%s) - t0 )) s"
KREPLAY=.bin/kreplay OUT=$OUT/inf CAPTURE_FLAGS="-processes 2" CAPTURE_TIMEOUT=170 DEADLINE=${DL:-200} PREDICT_TIMEOUT=${PT:-200} ARCHIVE=1 \
  timeout ${CT:-400} bash scripts/gpu/inference-check.sh $SPECS > $OUT/inf.log 2>&1
echo "check exit $? elapsed $(( $(date +%s) - t0 )) s"
if [ ! -e $OUT/inf/raw.tar.xz.part00 ]; then
  cat $OUT/inf/logs/*.summary >> $OUT/inf/summary.txt 2>/dev/null
  find $OUT/inf/bundles -maxdepth 2 -name kernels -type d -exec rm -rf {} + 2>/dev/null
  tar -C $OUT/inf -cJf - logs bundles | split -b 15m -d - $OUT/inf/raw.tar.xz.part && rm -rf $OUT/inf/logs $OUT/inf/bundles
fi
echo "elapsed $(( $(date +%s) - t0 )) s"
cat $OUT/data-power.txt
cut -c1-420 $OUT/inf/summary.txt | grep -v "^\[" | tail -30
