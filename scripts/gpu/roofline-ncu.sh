#!/usr/bin/env bash
# Prepares the roofline comparison of issue 20: kreplay's roofline shares
# of chosen signatures next to Nsight Compute's own throughput percentages
# for the same replays. It only prepares the comparison: it prints both
# sides and their difference in points, and judges nothing.
#
# Needs a GPU, Nsight Compute (`ncu` on PATH, or NCU=/path/to/ncu) with
# permission to read the GPU's performance counters, Go and python3 (the
# standard library only). Run from the project root, after
# `source .gpu/env.sh` on a machine without network:
#
#   bash scripts/gpu/roofline-ncu.sh [TRACE [ID ...]]
#
# TRACE defaults to embedded:h100_bloom-560m_prefill.trace.json.gz and the
# IDs to five of its signatures: two GEMMs (the LM head mm, an addmm) and
# three memory-heavy kernels (mul, _softmax, copy_ to f32). Writes under
# ${OUT:-out}/roofline-ncu/ and prints table.txt.
#
# What runs:
#   1. kreplay run -roofline -ids IDS: the device's peaks (cached per
#      device, or measured) and each signature's place on two roofs, with
#      CUPTI, so the JSON names the kernels each replay ran:
#        - the measured roof (memory share: GB/s over the copy bandwidth;
#          compute share: FLOP/s over the dtype's cuBLAS GEMM peak; share
#          of roof; bound);
#        - the hardware roof ("hw"): GB/s over the DRAM bandwidth NVML
#          gives (max memory clock x bus width x 2 / 8), FLOP/s over SMs x
#          data-sheet FLOPs per SM per clock x the SM clock the replay ran
#          at: "probe" where kreplay's clock probe measured it on the GPU
#          (SM cycles over %globaltimer while the replay's launches ran
#          once more after the timed samples; -roofline turns it on),
#          "nvml" where the probe failed and NVML's mean during the replay
#          stands in, "max" where neither is there and the device's
#          maximum is assumed. It is the one that holds work against what
#          ncu holds it against;
#   2. per signature, the same replay alone under
#      ncu --clock-control none --cache-control $NCU_CACHE --replay-mode $NCU_REPLAY, profiling one
#      launch (after $SKIP of them, or half the timed launches where fewer) of the longest kernel it ran, by its
#      mangled name; CUPTI is off in that run (-kernels=false), since ncu
#      holds the counters;
#   3. a table: kreplay's shares (measured and hw) and the clock its hw
#      share is taken at with that clock's source, NVML's mean, and ncu's
#      sm__throughput, gpu__compute_memory_throughput and dram__throughput
#      percentages of peak sustained elapsed, its duration, DRAM GB/s and
#      SM clock (sm__cycles_elapsed.avg.per_second); then the points
#      difference of each of kreplay's two shares from ncu's percentage
#      for the bound kreplay names (dram % for memory, sm % for compute,
#      memory-unit % for latency): "hw - ncu" is kreplay's hw share at
#      kreplay's own clock (the "kreplay MHz" column) minus ncu's; and,
#      for compute-bound rows, the hw share taken again at ncu's clock.
#      A signature whose clock probe failed gets a line saying why. TABLE_ONLY=1 makes the table
#      again from what an earlier run left in the folder (columns an
#      older run lacks print "-").
#
# By default both sides measure in steady state: kreplay replays each
# signature in the L2 mode CACHE (default rotating: back to back through
# buffer sets larger than the L2, so each launch reads its operands from
# device memory and writes back what the launch before it left), and ncu
# profiles one launch of that same replay after SKIP of them (default 40,
# or half the timed launches where fewer), without touching the caches
# (NCU_CACHE=none), each of its passes rerunning the whole replay
# (NCU_REPLAY=application), so no pass starts from memory ncu restored.
# BUDGET (default 1s) is each profiled replay's sampling budget.
#
# The flush protocol, CACHE=cold NCU_CACHE=all NCU_REPLAY=kernel SKIP=5
# BUDGET=200ms (the default before 2026-11-26), starts every launch from
# an empty L2. A write-heavy kernel then leaves part of its writes in the
# L2 when it ends (the BLOOM softmax: 22.3 of its 67.1 MB), which ncu's
# DRAM counters of that launch do not see and kreplay's operand bytes
# count: that softmax came out 11-12 points over ncu's DRAM share, against
# 3 in steady state (results/h100/roofline-whatif/).
#
# kreplay's measured share holds throughput against what this GPU measured
# (a device copy, a cuBLAS GEMM), ncu against the hardware's own peaks, per
# cycle: its sm % does not depend on the clock the kernel ran at. The hw
# share is the comparable one. What still differs: kreplay counts the
# bytes an op's operands span, ncu the DRAM traffic it saw; kreplay's time
# is the median of many launches (a split-K GEMM's kernels together), its
# clock probed over a run of the same launches after the timed ones, ncu's
# one launch of the one kernel at the clock it saw; and ncu's sm % is the
# busiest SM pipe's, not FLOPs.
set -uo pipefail
NCU=${NCU:-ncu}
OUT=${OUT:-out}/roofline-ncu
TRACE=${1:-embedded:h100_bloom-560m_prefill.trace.json.gz}
shift $(( $# > 0 ? 1 : 0 ))
IDS=("$@")
[ ${#IDS[@]} -gt 0 ] || IDS=(f400919612b9 0699fe07516f ae0c7f8bfabe df084478313f 0672c4674565)
CACHE=${CACHE:-rotating}
NCU_CACHE=${NCU_CACHE:-none}
SKIP=${SKIP:-40}
NCU_REPLAY=${NCU_REPLAY:-application}
BUDGET=${BUDGET:-1s}
METRICS=${METRICS:-gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_elapsed.avg.per_second}

mkdir -p "$OUT"
if [ -z "${TABLE_ONLY:-}" ]; then
command -v "$NCU" >/dev/null || { echo "roofline-ncu: no ncu (set NCU=/path/to/ncu)" >&2; exit 2; }
if [ -n "${KREPLAY:-}" ]; then cp "$KREPLAY" "$OUT/kreplay" || exit 1; else go build -o "$OUT/kreplay" ./cmd/kreplay || exit 1; fi
ids_csv=$(IFS=,; echo "${IDS[*]}")
{
  nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  "$NCU" --version
  git rev-parse HEAD
} > "$OUT/machine.txt" 2>&1

echo "== kreplay run -roofline -cache $CACHE -ids $ids_csv $TRACE"
"$OUT/kreplay" run -roofline -cache "$CACHE" -ids "$ids_csv" -json "$OUT/kreplay.json" "$TRACE" \
  > "$OUT/kreplay.txt" 2> "$OUT/kreplay.log" || { tail -5 "$OUT/kreplay.log"; exit 1; }

# The longest kernel each signature's replay ran, by mangled name, and the
# launches ncu skips: SKIP, or for a replay that converged in fewer timed
# launches (the LM-head GEMM: 20 of 1.5 ms), half of them.
python3 - "$OUT/kreplay.json" "$SKIP" > "$OUT/kernels.txt" <<'EOF' || exit 1
import json, sys
skip = int(sys.argv[2])
for out in json.load(open(sys.argv[1])):
    for e in out["entries"]:
        res = e.get("result") or {}
        ran = [r for r in res.get("ran") or [] if r["kind"] == "kernel"]
        if ran:
            k = max(ran, key=lambda r: r["dur_ns"] * r["per_call"])
            timed = (res.get("samples") or 0) * (res.get("batch") or 0)
            print(e["id"], k["name"], min(skip, max(1, timed // 2)) if timed else skip)
        else:
            print(e["id"], "-", skip)
EOF

while read -r id kernel skip; do
  if [ "$kernel" = "-" ]; then echo "== $id: no kernel recorded by CUPTI, not profiled"; continue; fi
  echo "== ncu $id: ${kernel:0:80}, after $skip launches"
  rx=$(python3 -c 'import re, sys; print(re.escape(sys.argv[1]))' "$kernel")
  "$NCU" --target-processes all --clock-control none --cache-control "$NCU_CACHE" --replay-mode "$NCU_REPLAY" --kernel-name-base mangled -k "regex:^${rx}\$" \
    --launch-skip "$skip" --launch-count 1 --metrics "$METRICS" -f -o "$OUT/ncu-$id" \
    "$OUT/kreplay" run -cache "$CACHE" -kernels=false -budget "$BUDGET" -ids "$id" "$TRACE" \
    < /dev/null > "$OUT/ncu-$id.log" 2>&1 || { echo "ncu failed for $id:"; tail -5 "$OUT/ncu-$id.log"; continue; }
  "$NCU" -i "$OUT/ncu-$id.ncu-rep" --csv --page raw --print-units base > "$OUT/ncu-$id.csv" 2>> "$OUT/ncu-$id.log"
done < "$OUT/kernels.txt"
fi

python3 - "$OUT" > "$OUT/table.txt" <<'EOF'
import csv, json, os, sys
out = sys.argv[1]
runs = json.load(open(os.path.join(out, "kreplay.json")))
peaks = runs[0].get("peaks") or {}
rows = {r["id"]: r for run in runs for r in run.get("roofline") or []}

def ncu(id):
    path = os.path.join(out, f"ncu-{id}.csv")
    if not os.path.exists(path):
        return None
    lines = [l for l in open(path) if l.startswith('"')]
    recs = list(csv.reader(lines))
    if len(recs) < 3:
        return None
    head, data = recs[0], recs[2]  # recs[1] holds the units
    def num(name):
        try:
            return float(data[head.index(name)].replace(",", ""))
        except (ValueError, IndexError):
            return None
    return {m: num(m) for m in ["gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed", "dram__bytes_read.sum", "dram__bytes_write.sum",
            "sm__cycles_elapsed.avg.per_second"]}

def f(v, fmt="%.1f"):
    return "-" if v is None else fmt % v

print("Prepared by scripts/gpu/roofline-ncu.sh: kreplay's roofline shares next to Nsight Compute's")
print("throughput percentages. A comparison to read, not a result: see the script's header for how")
print("the two sides differ. Peaks (kreplay):", json.dumps({"copy_gbps": peaks.get("copy_gbps"), "tflops": peaks.get("tflops")}))
print("Hardware (kreplay: NVML, CUDA):", json.dumps(peaks.get("hw")))
print("share: kreplay's share of its measured roof; hw: of the hardware roof (DRAM bandwidth; SMs x data-sheet")
print("FLOPs per SM per clock x kreplay's SM clock, \"kreplay MHz\": \"probe\" measured on the GPU during the replay,")
print("\"nvml\" NVML's mean where the probe failed, \"max\" where assumed; nvml MHz: NVML's mean, for reference).")
print("share - ncu, hw - ncu: each minus ncu's")
print("dram % (memory bound), sm % (compute bound) or memory-unit % (gpu__compute_memory_throughput; latency")
print("bound), in points. hw @ncu clk: the hw compute share taken at ncu's SM clock (compute bound only).")
print()
cols = ["id", "bound", "kreplay us", "of copy %", "of peak %", "share %", "hw %", "kreplay MHz", "nvml MHz", "ncu us", "ncu MHz",
        "ncu dram %", "ncu mem %", "ncu sm %", "ncu DRAM GB/s", "share - ncu pts", "hw - ncu pts", "hw @ncu clk %", "label"]
table = [cols]
notes = []
for run in runs:
    for e in run["entries"]:
        r = rows.get(e["id"])
        pt = (r or {}).get("point")
        n = ncu(e["id"]) or {}
        dur = n.get("gpu__time_duration.sum")
        rd, wr = n.get("dram__bytes_read.sum"), n.get("dram__bytes_write.sum")
        gbps = (rd + wr) / dur if dur and rd is not None and wr is not None else None
        hz = n.get("sm__cycles_elapsed.avg.per_second")
        ncu_mhz = hz / 1e6 if hz else None
        diff = hw_diff = hw_at_ncu = hw = clock = None
        if pt:
            hw = 100 * pt["hw_share"] if pt.get("hw_share") else None
            if pt.get("clock_mhz"):
                # Output from before the probe names no source: its clock was NVML's, or the maximum.
                src = "max" if pt.get("clock_assumed") else {"max (assumed)": "max"}.get(pt.get("clock_source"), pt.get("clock_source") or "nvml")
                clock = "%.0f %s" % (pt["clock_mhz"], src)
            if pt["bound"] == "compute" and pt.get("hw_compute_share") and ncu_mhz:
                hw_at_ncu = 100 * pt["hw_compute_share"] * pt["clock_mhz"] / ncu_mhz
            ref = {"memory": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
                   "compute": "sm__throughput.avg.pct_of_peak_sustained_elapsed"}.get(pt["bound"],
                   "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")
            if n.get(ref) is not None:
                diff = 100 * pt["share"] - n[ref]
                if hw is not None:
                    hw_diff = hw - n[ref]
        res = e.get("result") or {}
        nvml_mhz = (res.get("gpu") or {}).get("MeanSMClockMHz")
        if res.get("clock_error"):
            notes.append("%s: no probed SM clock: %s" % (e["id"], res["clock_error"]))
        table.append([e["id"], pt["bound"] if pt else "not placed: " + (r or {}).get("why", "no result"),
                         f(pt and pt["ns"] / 1e3, "%.2f"), f(pt and 100 * pt["memory_share"]), f(pt and 100 * pt["compute_share"]),
                         f(pt and 100 * pt["share"]), f(hw), clock or "-", f(nvml_mhz, "%.0f"), f(dur and dur / 1e3, "%.2f"), f(ncu_mhz, "%.0f"),
                         f(n.get("dram__throughput.avg.pct_of_peak_sustained_elapsed")),
                         f(n.get("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")),
                         f(n.get("sm__throughput.avg.pct_of_peak_sustained_elapsed")), f(gbps, "%.0f"), f(diff, "%+.1f"),
                         f(hw_diff, "%+.1f"), f(hw_at_ncu), e.get("label", "")[:60]])
widths = [max(len(r[i]) for r in table) for i in range(len(cols))]
for r in table:
    print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
for n in notes:
    print(n)
EOF
cat "$OUT/table.txt"
