#!/usr/bin/env bash
# Records the fused-kernel what-if of issue 20 on a GPU: Llama's RMSNorm
# chain (eight kernels in the f16 trace: copy_, pow, mean, add, rsqrt,
# mul, copy_, mul) replaced by examples/whatif/rmsnorm/rmsnorm_fused.cu on
# the embedded Llama-7B prefill.
#
# Run from the project root (after `source .gpu/env.sh` on a machine
# without network):
#
#   bash scripts/gpu/whatif-check.sh
#
# Needs a GPU with NVRTC, Go, and python3 (the standard library only) for
# the summary. Writes under ${OUT:-out}/whatif/:
#   tests.log       the GPU tests of the what-if and of the timeline's
#                   substitution, under KREPLAY_REQUIRE_GPU=1;
#   rmsnorm.txt     kreplay whatif's report, rmsnorm.json its result;
#   summary.txt     the acceptance numbers.
# Set BENCH=FILE.bench (kreplay predict's output for the same trace on the
# same GPU) for the predicted totals; ROUNDS (default 5) for the timeline's
# alternating rounds; ENERGY=0 to skip the energies. At the cap the
# prediction compared is, with the energies, the one from the plain and
# removed timelines (-removed, whatif/removed.go); REMOVED=0 drops it, and
# AGAIN=1 adds the one from the plain and again timelines (-again,
# whatif/again.go), compared when REMOVED=0; without either, the one
# calibrated on the plain timeline alone (whatif/cap.go, with BENCH).
# TICKS for the energy windows' NVML ticks (default: kreplay's); SETTLE for
# the warm-up before each timing (default: kreplay's, whatif.DefaultSettle).
# On a machine without Go: KREPLAY=PATH, a built CLI, and either
# WHATIF_TEST=PATH and REPLAY_TEST=PATH (`go test -c` of ./whatif and
# ./replay) or TESTS=0 to skip the GPU tests.
#
# Acceptance (issue 20): the kernel's output matches the chain's within
# f16 tolerance, and the predicted saving is within 5% of the saving the
# timeline replay measures with the kernel substituted: the rounds' median
# and, when the baseline runs at the power limit, the sustained one (the
# rounds' means) too. The script exits 1 when either fails, after
# printing everything.
set -uo pipefail
OUT=${OUT:-out}/whatif
ROUNDS=${ROUNDS:-5}
ENERGY=${ENERGY:-1}
AGAIN=${AGAIN:-0}
REMOVED=${REMOVED:-1}
TESTS=${TESTS:-1}
mkdir -p "$OUT"
K=${KREPLAY:-}
if [ -z "$K" ]; then
  go build -o "$OUT/kreplay" ./cmd/kreplay || exit 1
  K=$OUT/kreplay
fi

# gputest PKG BINARY PATTERN: the package's tests matching PATTERN, from
# BINARY where given (run in the package's folder, as go test does).
gputest() {
  if [ -n "$2" ]; then
    (b=$(realpath "$2") && cd "$1" && KREPLAY_REQUIRE_GPU=1 "$b" -test.count 1 -test.v -test.run "$3")
  else
    KREPLAY_REQUIRE_GPU=1 go test -count 1 -v -run "$3" "./$1"
  fi
}
tests=0
if [ "$TESTS" != 0 ]; then
  echo "== GPU tests" | tee "$OUT/tests.log"
  gputest whatif "${WHATIF_TEST:-}" 'TestGPUWhatIfLlamaRMSNorm|TestExampleKernel' 2>&1 | tee -a "$OUT/tests.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || tests=1
  gputest replay "${REPLAY_TEST:-}" 'TestGPUTimelineSubstitute|TestGPUTimelineAgain|TestGPUTimelinePrefill' 2>&1 | tee -a "$OUT/tests.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || tests=1
fi

echo "== kreplay whatif"
args=(-kernel examples/whatif/rmsnorm/rmsnorm_fused.cu -name rmsnorm_fused -replace llama-rmsnorm -rounds "$ROUNDS" -o "$OUT/rmsnorm.json")
[ "$ENERGY" = 0 ] || args+=(-energy)
[ "$ENERGY" = 0 ] || [ "$AGAIN" = 0 ] || args+=(-again)
[ "$ENERGY" = 0 ] || [ "$REMOVED" = 0 ] || args+=(-removed)
[ -z "${BENCH:-}" ] || args+=(-bench "$BENCH")
[ -z "${TICKS:-}" ] || args+=(-ticks "$TICKS")
[ -z "${SETTLE:-}" ] || args+=(-settle "$SETTLE")
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > "$OUT/gpu.csv" 2>&1
"$K" whatif "${args[@]}" embedded:h100_llama-7b_prefill 2> "$OUT/rmsnorm.progress" | tee "$OUT/rmsnorm.txt"
run=${PIPESTATUS[0]}
[ -s "$OUT/rmsnorm.json" ] || { echo "whatif-check: no result (exit $run): see $OUT/rmsnorm.progress" >&2; exit 1; }

python3 - "$OUT/rmsnorm.json" <<'PY' | tee "$OUT/summary.txt"
import json, sys
r = json.load(open(sys.argv[1]))
ok = True
print(f"GPU: {r['gpu']}; workload {r['workload']}; {len(r['match']['runs'])} runs replaced")
for v in r["variants"]:
    c = v.get("check")
    if not c:
        ok = False
        print(f"output check, variant {v['index']}: NOT DONE: {v.get('check_error')}")
        continue
    good = c["chain"]["beyond"] == 0 and c["host"]["beyond"] == 0
    ok &= good
    print(f"output check, variant {v['index']}: {'OK' if good else 'FAILED'}: against the chain max |err| {c['chain']['max_abs_err']:.3g}"
          f" of max |y| {c['chain']['scale']:.3g} ({c['chain']['rel_err']:.2e} relative, tolerance {c['chain']['tolerance']:g});"
          f" against the host reference {c['host']['rel_err']:.2e}")
    print(f"kernel alone: {v['times']['ns']/1e3:.2f} us per launch")
p = r["prediction"]
print(f"predicted: replaced {p['replaced_ns']/1e3:.1f} us, kernel {p['fused_ns']/1e3:.1f} us, saving {p['saving_ns']/1e3:.1f} us per inference")
if p.get("power_limit_w"):
    at = "at" if p.get("at_limit") else "under"
    print(f"power limit {p['power_limit_w']:.0f} W ({p.get('power_limit_from')}): the baseline {p['base_j']:.3f} J in {p['base_ns']/1e6:.3f} ms, {at} the limit; "
          f"saving at the limit {p['limit_saving_ns']/1e3:.1f} us (the prediction when at it)")
if p.get("base_ns"):
    print(f"predicted GPU time {p['base_ns']/1e6:.3f} -> {p['new_ns']/1e6:.3f} ms")
cap, again, removed = p.get("cap"), p.get("again"), p.get("removed")
if cap:
    compared = "" if again or removed else " (the prediction compared)"
    print(f"at the cap, calibrated on {cap['from']}: {cap['base_ns']/1e6:.3f} -> {cap['new_ns']/1e6:.3f} ms at {cap['new_mhz']:.0f} MHz, "
          f"saving {cap['saving_ns']/1e3:.1f} us, {cap['saving_j']:.3f} J{compared}")
    if cap.get("warning"):
        print("warning:", cap["warning"])
elif p.get("cap_error"):
    print("at the cap, calibrated: not done:", p["cap_error"])
if again:
    compared = "" if removed else " (the prediction compared)"
    print(f"at the cap, from the plain and again timelines: {again['plain_ns']/1e6:.3f} -> {again['new_ns']/1e6:.3f} ms at {again['new_mhz']:.0f} MHz "
          f"(the replaced runs twice: {again['again_ns']/1e6:.3f} ms at {again['again_mhz']:.0f} MHz), saving {again['saving_ns']/1e3:.1f} us{compared}")
elif p.get("again_error"):
    print("at the cap, from the plain and again timelines: not done:", p["again_error"])
if removed:
    print(f"at the cap, from the plain and removed timelines: {removed['plain_ns']/1e6:.3f} -> {removed['new_ns']/1e6:.3f} ms at {removed['new_mhz']:.0f} MHz "
          f"(the replaced runs removed: {removed['removed_ns']/1e6:.3f} ms at {removed['removed_mhz']:.0f} MHz), saving {removed['saving_ns']/1e3:.1f} us (the prediction compared)")
elif p.get("removed_error"):
    print("at the cap, from the plain and removed timelines: not done:", p["removed_error"])
t = r.get("timeline")
if not t:
    print("timeline check: not done:", r.get("timeline_error"))
    ok = False
else:
    rounds = ", ".join(f"{(x['plain_ns']-x['subst_ns'])/1e3:.1f}" for x in t["rounds"])
    dev = t["ratio"] - 1
    within = abs(dev) <= 0.05
    ok &= within
    print(f"timeline: plain {t['plain_ns']/1e6:.3f} ms, substituted {t['subst_ns']/1e6:.3f} ms; savings per round (us): {rounds}")
    print(f"measured saving {t['saving_ns']/1e3:.1f} us; predicted/measured {t['ratio']:.4f} ({100*dev:+.2f}%): "
          f"{'within' if within else 'NOT within'} 5%")
    if (p.get("at_limit") or cap or again or removed) and t.get("mean_ratio"):
        # At the cap the sustained saving (the rounds' means) counts too.
        mdev = t["mean_ratio"] - 1
        mwithin = abs(mdev) <= 0.05
        ok &= mwithin
        print(f"sustained saving {t['mean_saving_ns']/1e3:.1f} us; predicted/sustained {t['mean_ratio']:.4f} ({100*mdev:+.2f}%): "
              f"{'within' if mwithin else 'NOT within'} 5%")
    g = [(t.get(k) or {}).get("gpu") or {} for k in ("plain", "subst")]
    if g[0].get("MeanSMClockMHz") and g[1].get("MeanSMClockMHz"):
        print(f"NVML: plain mean SM {g[0]['MeanSMClockMHz']:.0f} MHz, {g[0]['MeanPowerW']:.0f} W; substituted {g[1]['MeanSMClockMHz']:.0f} MHz, {g[1]['MeanPowerW']:.0f} W")
    if t.get("kernel_saving_ns"):
        print(f"in context (CUPTI kernel times, no gaps): saving {t['kernel_saving_ns']/1e3:.1f} us; predicted/in-context {t['kernel_ratio']:.4f}")
    if t.get("saving_j"):
        er = f"; predicted/measured {t['energy_ratio']:.4f}" if t.get("energy_ratio") else ""
        print(f"energy: timeline {t['plain_j']:.3f} -> {t['subst_j']:.3f} J per launch, saving {t['saving_j']:.3f} J{er}")
    elif t.get("energy_error"):
        print("energy: not measured:", t["energy_error"])
print("ACCEPTED" if ok else "NOT ACCEPTED")
sys.exit(0 if ok else 1)
PY
accepted=${PIPESTATUS[0]}
echo "tests exit $tests, whatif exit $run, acceptance exit $accepted"
[ "$tests" -eq 0 ] && [ "$run" -eq 0 ] && [ "$accepted" -eq 0 ]
