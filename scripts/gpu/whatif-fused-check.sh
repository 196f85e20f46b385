#!/usr/bin/env bash
# Issue 46: kreplay whatif against a model run with the fused kernel really
# in place. For each family (FAMILIES, default "llama qwen2": the specs
# scripts/gpu/specs/whatif/FAMILY-{unfused,fused}-prefill.json, both run by
# examples/whatif/rmsnorm/fused_model.py):
#   1. kreplay capture the unfused spec (the model as kreplay's runner
#      builds it: each RMSNorm the eager chain);
#   2. kreplay capture the fused spec (the same model, each RMSNorm one
#      launch of rmsnorm_fused.cu through a custom op; its first call is
#      checked against the chain, and a mismatch fails the capture);
#   3. kreplay whatif -replace llama-rmsnorm -kernel rmsnorm_fused.cu -name
#      KERNEL (rmsnorm_fused for f16, rmsnorm_fused_bf16 for bf16) -energy
#      on the unfused bundle alone, its other flags kreplay's defaults;
#   4. the predicted saving (time and energy per inference) against the
#      measured one, the unfused bundle's measured run less the fused
#      one's (measured.json), with the errors:
#      examples/whatif/rmsnorm/whatif_compare.py -design DESIGN. Both
#      designs are judged and printed (summary.txt, compare.json's
#      "designs"); DESIGN (default timeline) is the compared one: the
#      timeline design (prediction.timeline_design: the timeline check's
#      measured time saving; energy, the unfused run's mean power times
#      it when that run draws at least 95% of the power limit, else the
#      timeline check's energy saving), fixed before its judging runs on
#      Mistral and Qwen3; "default" is the one kreplay whatif's own
#      timeline check compares. The timeline check runs by default in
#      kreplay whatif, and -energy gives it its energies.
# Acceptance: the time within 10%, the energy within 15% of the measured
# saving, the what-if's output check and the fused program's first-call
# check passed. Exit status 0 when every family is accepted, 1 otherwise.
#
# Run from the project root on a GPU machine, with python3 whose torch,
# transformers and pynvml run the model (the specs' argv is python3):
#
#   KREPLAY=/path/to/kreplay OUT=out bash scripts/gpu/whatif-fused-check.sh
#
# KREPLAY is the CLI (default: built with go into $OUT/whatif-fused/).
# Writes under $OUT/whatif-fused/ (OUT default out): per family FAMILY/
# with the bundles unfused/ and fused/, capture-MODE.log, report.jsonl
# (fused_model.py's record, one line per process of either capture, with
# the fused ones' first-call check), whatif.txt, whatif.json,
# whatif.progress, compare.json, summary.txt; and summary.txt, every
# family's summary appended. Knobs: FAMILIES; DESIGN; CAPTURE_FLAGS (default
# "-processes 2 -no-schedule": two measured processes, no host schedule,
# which this comparison does not use); REUSE=1 keeps bundles already
# captured; CAPTURE_TIMEOUT and WHATIF_TIMEOUT in seconds (default 300
# and 400). The what-if finds NVRTC as kreplay does (KREPLAY_NVRTC_LIB
# pins it); with PIN_NVRTC=1, or when kreplay finds none, it runs with the
# one the fused program compiled the kernel with (report.jsonl), its
# directory first on the loader's path. A fused capture that fails in the kernel
# recorder is tried once more with -no-binaries (said in its log): the
# comparison uses only its measured run.
#
# GPUS="0 1" runs the families at the same time, one per GPU (through
# CUDA_VISIBLE_DEVICES, which kreplay's meters follow), in waves of as many
# families as GPUs, each into OUT/gpuN/; the summaries are joined into
# OUT/whatif-fused/summary.txt. With ARCHIVE=1, everything under OUT but
# the kernel binaries goes into OUT/whatif-fused.tar.xz.partNN pieces.
set -uo pipefail
if [ -n "${GPUS:-}" ] && [ -z "${WHATIF_FUSED_CHILD:-}" ]; then
  read -ra gpus <<< "$GPUS"
  read -ra fams <<< "${FAMILIES:-llama qwen2}"
  base=${OUT:-out}
  mkdir -p "$base/whatif-fused"
  status=0
  for ((i = 0; i < ${#fams[@]}; i += ${#gpus[@]})); do
    pids=()
    for ((j = 0; j < ${#gpus[@]} && i + j < ${#fams[@]}; j++)); do
      g=${gpus[$j]} fam=${fams[$((i + j))]}
      WHATIF_FUSED_CHILD=1 CUDA_VISIBLE_DEVICES=$g FAMILIES=$fam OUT="$base/gpu$g-$fam" \
        bash "$0" > "$base/gpu$g-$fam.log" 2>&1 &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || status=1; done
  done
  cat "$base"/gpu*/whatif-fused/summary.txt > "$base/whatif-fused/summary.txt" 2>/dev/null
  if [ -n "${ARCHIVE:-}" ]; then
    tar -C "$base" --exclude='*/kernels' --exclude='./whatif-fused.tar.xz.part*' -cJf - . | split -b 15m -d - "$base/whatif-fused.tar.xz.part"
  fi
  echo "whatif-fused-check: exit $status (${fams[*]} on GPUs ${gpus[*]})" | tee -a "$base/whatif-fused/summary.txt"
  exit $status
fi
OUT=${OUT:-out}/whatif-fused
FAMILIES=${FAMILIES:-llama qwen2}
CAPTURE_FLAGS=${CAPTURE_FLAGS:--processes 2 -no-schedule}
DESIGN=${DESIGN:-timeline}
REUSE=${REUSE:-0}
SPECS=scripts/gpu/specs/whatif
EX=examples/whatif/rmsnorm
mkdir -p "$OUT"
for f in "$EX/fused_model.py" "$EX/rmsnorm_fused.cu" "$EX/whatif_compare.py"; do
  [ -f "$f" ] || { echo "whatif-fused-check: $f missing: run from the project root" >&2; exit 2; }
done
K=${KREPLAY:-}
if [ -z "$K" ]; then
  go build -o "$OUT/kreplay" ./cmd/kreplay || exit 1
  K=$OUT/kreplay
fi
K=$(realpath "$K") || exit 2
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,temperature.gpu --format=csv > "$OUT/gpu.csv" 2>&1
S="$OUT/summary.txt"

# capture FAMILY MODE: the bundle FAMILY/MODE; exit status kreplay's.
capture() {
  local fam=$1 mode=$2 dir b="$OUT/$1/$2" log="$OUT/$1/capture-$2.log"
  dir=$(realpath -m "$OUT/$1")
  if [ "$REUSE" = 1 ] && [ -s "$b/measured.json" ]; then
    echo "$fam $mode: reusing $b" | tee -a "$log"
    return 0
  fi
  local t0=$SECONDS rc
  # shellcheck disable=SC2086 # CAPTURE_FLAGS is a list of flags
  KREPLAY_FUSED_REPORT="$dir/report.jsonl" timeout "${CAPTURE_TIMEOUT:-300}" \
    "$K" capture "$SPECS/$fam-$mode-prefill.json" -o "$b" -force $CAPTURE_FLAGS > "$log" 2>&1
  rc=$?
  if [ $rc -ne 0 ] && [ "$mode" = fused ] && grep -q 'recording its kernels\|recorded kernels' "$log"; then
    echo "== retrying without the kernel recorder (-no-binaries) after exit $rc" >> "$log"
    # shellcheck disable=SC2086
    KREPLAY_FUSED_REPORT="$dir/report.jsonl" timeout "${CAPTURE_TIMEOUT:-300}" \
      "$K" capture "$SPECS/$fam-$mode-prefill.json" -o "$b" -force -no-binaries $CAPTURE_FLAGS >> "$log" 2>&1
    rc=$?
  fi
  echo "$fam $mode: capture exit $rc in $((SECONDS - t0)) s" | tee -a "$S"
  return $rc
}

# kernel_of SPEC: rmsnorm_fused.cu's kernel for the spec's dtype.
kernel_of() {
  python3 -c 'import json, sys; print({"f16": "rmsnorm_fused", "bf16": "rmsnorm_fused_bf16"}[json.load(open(sys.argv[1]))["dtype"]])' "$1"
}

# nvrtc_of REPORT: the NVRTC library the fused program loaded.
nvrtc_of() {
  python3 -c '
import json, sys
for ln in open(sys.argv[1]):
    r = json.loads(ln)
    if r.get("mode") == "fused" and r.get("nvrtc_lib"):
        print(r["nvrtc_lib"])
        break' "$1" 2>/dev/null
}

# whatif DIR KERNEL [NVRTC]: kreplay whatif on DIR's unfused bundle with the
# fused kernel KERNEL, its flags kreplay's defaults but -energy; with NVRTC,
# that library (KREPLAY_NVRTC_LIB) and its directory first on the loader's
# path (NVRTC loads its builtins by soname). Exit status kreplay's.
whatif() {
  local dir=$1 kernel=$2 nvrtc=${3:-} t0=$SECONDS rc
  local args=(-replace llama-rmsnorm -kernel "$EX/rmsnorm_fused.cu" -name "$kernel" -energy -o "$dir/whatif.json")
  echo "$(basename "$dir"): kreplay whatif ${args[*]} $dir/unfused (NVRTC: ${nvrtc:-found by kreplay})" | tee -a "$S"
  rm -f "$dir/whatif.json"
  local ldp=${LD_LIBRARY_PATH:-}
  case "$nvrtc" in */*) ldp="$(dirname "$nvrtc")${ldp:+:$ldp}" ;; esac
  if [ -n "$nvrtc" ]; then
    LD_LIBRARY_PATH="$ldp" KREPLAY_NVRTC_LIB="$nvrtc" \
      timeout "${WHATIF_TIMEOUT:-400}" "$K" whatif "${args[@]}" "$dir/unfused" > "$dir/whatif.txt" 2> "$dir/whatif.progress"
  else
    timeout "${WHATIF_TIMEOUT:-400}" "$K" whatif "${args[@]}" "$dir/unfused" > "$dir/whatif.txt" 2> "$dir/whatif.progress"
  fi
  rc=$?
  echo "$(basename "$dir"): whatif exit $rc in $((SECONDS - t0)) s" | tee -a "$S"
  return $rc
}

status=0
for fam in $FAMILIES; do
  dir="$OUT/$fam"
  mkdir -p "$dir"
  for m in unfused fused; do
    [ -f "$SPECS/$fam-$m-prefill.json" ] || { echo "== $fam: no $SPECS/$fam-$m-prefill.json" | tee -a "$S"; status=1; continue 2; }
  done
  echo "== $fam ($(date -u +%H:%M:%S))" | tee -a "$S"
  [ "$REUSE" = 1 ] || rm -f "$dir/report.jsonl"
  if ! capture "$fam" unfused || ! capture "$fam" fused; then
    tail -5 "$dir"/capture-*.log | tee -a "$S"
    status=1
    continue
  fi
  kernel=$(kernel_of "$SPECS/$fam-fused-prefill.json") || { status=1; continue; }
  nvrtc=${KREPLAY_NVRTC_LIB:-}
  [ -n "$nvrtc" ] || [ "${PIN_NVRTC:-0}" != 1 ] || nvrtc=$(nvrtc_of "$dir/report.jsonl")
  whatif "$dir" "$kernel" "$nvrtc"
  rc=$?
  if [ $rc -ne 0 ] && [ -z "$nvrtc" ] && grep -q 'nvrtc: library not available' "$dir/whatif.progress" "$dir/whatif.txt"; then
    nvrtc=$(nvrtc_of "$dir/report.jsonl")
    if [ -n "$nvrtc" ]; then
      echo "$fam: kreplay found no NVRTC: again with the fused program's" | tee -a "$S"
      whatif "$dir" "$kernel" "$nvrtc"
      rc=$?
    fi
  fi
  if [ ! -s "$dir/whatif.json" ]; then
    tail -5 "$dir/whatif.progress" | tee -a "$S"
    status=1
    continue
  fi
  python3 "$EX/whatif_compare.py" -design "$DESIGN" -report "$dir/report.jsonl" -json "$dir/compare.json" \
    "$dir/whatif.json" "$dir/unfused" "$dir/fused" > "$dir/summary.txt" 2>&1
  rc=$?
  tee -a "$S" < "$dir/summary.txt"
  [ $rc -eq 0 ] || status=1
done
echo "whatif-fused-check: exit $status ($FAMILIES)" | tee -a "$S"
exit $status
