#!/usr/bin/env bash
# Records generated-benchmark output for the BLOOM-560M prefill workload
# (every signature, 6 runs, and the real model once), reports it, and
# checks per-signature energy repeatability. Run from the project root
# after `source .gpu/env.sh`; writes under ${OUT:-out}/.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT/e"
export KREPLAY_REQUIRE_GPU=1
go build -o /tmp/kreplay ./cmd/kreplay || exit 1
P=./bench/bloom_560m_prefill
echo "== go test -bench Replay -count ${COUNT:-6}" | tee "$OUT/benchsummary.txt"
timeout ${REPLAY_TIMEOUT:-240} go test -run '^$' -bench Replay -benchtime 1x -count ${COUNT:-6} -timeout 0 $P > "$OUT/e/prefill.bench" 2> "$OUT/e/prefill.stderr"
echo "exit $?; $(grep -c '^BenchmarkReplay' "$OUT/e/prefill.bench") result lines" | tee -a "$OUT/benchsummary.txt"
timeout ${MODEL_TIMEOUT:-150} go test -run '^$' -bench Model -benchtime 1x -count 1 -v -timeout 0 $P >> "$OUT/e/prefill.bench" 2>> "$OUT/e/prefill.stderr"
grep -E '^BenchmarkModel|model_test|bench.go|FAIL' "$OUT/e/prefill.bench" | head -5 | tee -a "$OUT/benchsummary.txt"
/tmp/kreplay report "$OUT/e/prefill.bench" > "$OUT/e/prefill.report.txt" 2>&1
head -60 "$OUT/e/prefill.report.txt" | tee -a "$OUT/benchsummary.txt"
echo "== energy repeatability (two runs, top GEMMs and tier-3 ops)" | tee -a "$OUT/benchsummary.txt"
IDS=${IDS:-f400919612b9,4f0c075962c3,f2a81e1f3fe1,0699fe07516f,ead9ce6de968,df084478313f}
for i in 1 2; do
  /tmp/kreplay run -energy -ticks ${TICKS:-30} -ids $IDS -json "$OUT/e/energy$i.json" embedded:h100_bloom-560m_prefill.trace.json.gz > "$OUT/e/energy$i.txt" 2>&1
done
python3 - "$OUT/e/energy1.json" "$OUT/e/energy2.json" <<'PY' | tee -a "$OUT/benchsummary.txt"
import json, sys
a, b = (json.load(open(f))[0]["entries"] for f in sys.argv[1:3])
for x, y in zip(a, b):
    ex, ey = (x.get("result") or {}).get("energy"), (y.get("result") or {}).get("energy")
    if not ex or not ey:
        print(x["id"], "no energy:", (x.get("result") or {}).get("energy_error"), x.get("error")); continue
    d = ey["joules_per_op"] / ex["joules_per_op"] - 1
    print(f'{x["id"]} {x["result"]["median_ns"]/1e3:9.2f} us  {ex["joules_per_op"]*1e3:9.4f} mJ/op  {ey["joules_per_op"]*1e3:9.4f} mJ/op  {100*d:+6.2f}%  {ex["watts"]:5.0f} W  {x["label"][:50]}')
PY
tar -C "$OUT" -czf "$OUT/bench.tgz" e && rm -rf "$OUT/e"
