#!/usr/bin/env bash
# GPU check of workload specs, kreplay capture and bundles (issue 13):
# the runner's GPU test, captures of the built-in workloads and of spec
# variants (bf16, attention implementations, torch.compile, FP8 linear
# layers, generate), a user's own command through kreplay_runner, an
# out-of-memory spec, then predict, gen and BenchmarkModel on a captured
# bundle. Run from the project root after `source .gpu/env.sh`; writes
# under ${OUT:-out}/ (summary.txt, the bundles, each step's output).
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT/specs" "$OUT/logs"
S="$OUT/summary.txt"
: > "$S"
export KREPLAY_REQUIRE_GPU=1
go build -o /tmp/kreplay ./cmd/kreplay || exit 1
say() { echo "$*" | tee -a "$S"; }

say "== runner GPU test (bloom-560m prefill: load, warm-up, run, capture, env)"
go test -count=1 -run GPU -v ./internal/runner > "$OUT/logs/runner-test.txt" 2>&1
say "exit $?"; grep -E '^(---|ok|FAIL)|env map|attention' "$OUT/logs/runner-test.txt" | head -8 | tee -a "$S"

spec() { cat > "$OUT/specs/$1.json"; }
SMALL='"config": {"model_type": "llama", "vocab_size": 32000, "hidden_size": 2048, "intermediate_size": 5632,
  "num_hidden_layers": 8, "num_attention_heads": 16, "num_key_value_heads": 16, "max_position_embeddings": 4096}'
W='"workload": {"kind": "prefill", "batch": 4, "seq": 512}'
spec bloom <<<'{"version": 1, "model": {"builtin": "bloom-560m"}, "workload": {"kind": "prefill", "batch": 4, "seq": 512}}'
spec bloom-gen <<<'{"version": 1, "model": {"builtin": "bloom-560m"}, "workload": {"kind": "generate", "prompt": 32, "new_tokens": 16}}'
spec llama7b <<<'{"version": 1, "model": {"builtin": "llama-7b"}, "workload": {"kind": "prefill", "batch": 4, "seq": 512}}'
spec small-bf16 <<<"{\"version\": 1, \"model\": {$SMALL}, \"dtype\": \"bf16\", $W}"
spec small-eager <<<"{\"version\": 1, \"model\": {$SMALL}, \"attention\": \"eager\", $W}"
spec small-flex <<<"{\"version\": 1, \"model\": {$SMALL}, \"attention\": \"flex_attention\", \"dtype\": \"bf16\", $W}"
spec small-f32 <<<"{\"version\": 1, \"model\": {$SMALL}, \"dtype\": \"f32\", $W}"
spec small-compile <<<"{\"version\": 1, \"model\": {$SMALL}, \"compile\": {\"mode\": \"default\"}, $W}"
spec small-compile-ro <<<"{\"version\": 1, \"model\": {$SMALL}, \"compile\": {\"mode\": \"reduce-overhead\"}, $W}"
spec small-fp8 <<<"{\"version\": 1, \"model\": {$SMALL}, \"linear\": \"fp8\", \"dtype\": \"bf16\", $W}"
spec small-fp8-f16 <<<"{\"version\": 1, \"model\": {$SMALL}, \"linear\": \"fp8\", $W}"
spec small-gen-compile <<<"{\"version\": 1, \"model\": {$SMALL}, \"compile\": {\"mode\": \"default\"}, \"workload\": {\"kind\": \"generate\", \"batch\": 2, \"prompt\": 64, \"new_tokens\": 16}}"
spec oom <<<'{"version": 1, "name": "oom_prefill", "model": {"builtin": "llama-7b"}, "workload": {"kind": "prefill", "batch": 512, "seq": 2048}}'
cat > "$OUT/specs/my_infer.py" <<'PY'
import torch
import kreplay_runner

def build(spec):
    dev = torch.device("cuda", spec["devices"][0])
    n = int(spec["command"]["args"].get("n", 4096))
    print("my_infer: building", n)  # goes to stderr
    a = torch.randn(n, n, device=dev, dtype=torch.float16)
    b = torch.randn(n, n, device=dev, dtype=torch.float16)
    def run_one_inference():
        for _ in range(8):
            torch.relu(a @ b)
    return run_one_inference, {"n": n}

kreplay_runner.serve(build)
PY
spec mine <<<'{"version": 1, "command": {"argv": ["python3", "my_infer.py"], "args": {"n": 4096}}, "workload": {"kind": "prefill", "batch": 1, "seq": 1}}'

for s in bloom bloom-gen llama7b small-bf16 small-eager small-flex small-f32 small-compile small-compile-ro small-fp8 small-fp8-f16 small-gen-compile mine oom; do
  say "== capture $s"
  t0=$(date +%s)
  timeout ${CAPTURE_TIMEOUT:-900} /tmp/kreplay capture "$OUT/specs/$s.json" -o "$OUT/bundles/$s" -force > "$OUT/logs/capture-$s.out" 2> "$OUT/logs/capture-$s.err"
  rc=$?
  say "exit $rc in $(( $(date +%s) - t0 )) s; $(tail -1 "$OUT/logs/capture-$s.err")"
  if [ $rc -eq 0 ]; then
    grep -E 'capture: [0-9.]+ ms|warm-up|trace:' "$OUT/logs/capture-$s.err" | tee -a "$S"
    python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); print("env:", {k: e.get(k) for k in ("gpu","sm_count","driver","cuda_runtime","cublas","cublaslt","cudnn","nccl","torch","triton","transformers")})' "$OUT/bundles/$s/env.json" | tee -a "$S"
    grep -o '"attention": "[a-z_0-9]*"' "$OUT/bundles/$s/spec.json" | tee -a "$S"
  fi
done
say "== leftovers beside the bundles (want none): $(ls -A "$OUT/bundles" | grep '^\.' | tr '\n' ' ')"

say "== the captured BLOOM-560M prefill against the shipped one"
/tmp/kreplay inspect -top 5 "$OUT/bundles/bloom" > "$OUT/logs/inspect-bloom.txt" 2>&1
/tmp/kreplay inspect -top 5 embedded:h100_bloom-560m_prefill > "$OUT/logs/inspect-shipped.txt" 2>&1
head -12 "$OUT/logs/inspect-bloom.txt" | tee -a "$S"
head -3 "$OUT/logs/inspect-shipped.txt" | tee -a "$S"

say "== predict on the captured bundle (its measured run), no energy, no timeline"
timeout ${PREDICT_TIMEOUT:-600} /tmp/kreplay predict -energy=false -no-timeline -o "$OUT/logs/bloom.bench" -progress "$OUT/logs/bloom.progress.jsonl" "$OUT/bundles/bloom" > "$OUT/logs/predict-bloom.txt" 2> "$OUT/logs/predict-bloom.err"
say "exit $?"; grep -E 'model|predicted GPU time|trace GPU busy' "$OUT/logs/predict-bloom.txt" | head -8 | tee -a "$S"

say "== gen from the captured bundle, BenchmarkModel without -v"
rm -rf bench/_capture_check
/tmp/kreplay gen -o bench/_capture_check "$OUT/bundles/bloom" > "$OUT/logs/gen.txt" 2>&1
timeout 600 go test -run '^$' -bench Model -benchtime 1x ./bench/_capture_check > "$OUT/logs/gen-model.txt" 2>&1
say "exit $?"; grep -E '^BenchmarkModel|kreplay Benchmark|FAIL' "$OUT/logs/gen-model.txt" | tee -a "$S"
rm -rf bench/_capture_check
say "== default predict (embedded bundle, its measured run), CPU part and model line"
timeout 900 /tmp/kreplay predict -o "$OUT/logs/default.bench" -progress "$OUT/logs/default.progress.jsonl" > "$OUT/logs/predict-default.txt" 2> "$OUT/logs/predict-default.err"
say "exit $?"; grep -E 'model|predicted' "$OUT/logs/predict-default.txt" | head -8 | tee -a "$S"
tar -C "$OUT" -czf "$OUT/bundles.tgz" bundles && rm -rf "$OUT/bundles"
