package whatif

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/replay"
)

// llamaPlan is the worked example's plan on the embedded Llama-7B prefill.
func llamaPlan(t *testing.T) *Plan {
	t.Helper()
	set := llamaSet(t)
	m, err := Find(set, RecipeByName("llama-rmsnorm").Ops)
	if err != nil {
		t.Fatal(err)
	}
	k, err := LoadKernel(exampleKernel, "rmsnorm_fused")
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(set, m, k, DefaultEps)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWriteMatchAndPlan(t *testing.T) {
	p := llamaPlan(t)
	var b bytes.Buffer
	if err := p.Match.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"what-if: replace aten::copy_,aten::pow,aten::mean,aten::add,aten::rsqrt,aten::mul,aten::copy_,aten::mul (recipe llama-rmsnorm) in llama-7b_prefill",
		"65 runs on 1 stream(s), 1 variant(s); 520 invocations",
		"a80b159c5b5b  aten::mul    65       65",
		"kernel rmsnorm_fused (../examples/whatif/rmsnorm/rmsnorm_fused.cu: source, compiled with NVRTC",
		"variant 0: 65 runs, recipe llama-rmsnorm: x f16[4 512 4096] as 2048 rows of 4096, w f16[4096], T = f16, eps 1e-06 (given (-eps)",
		"launch: grid [2048 1 1] (rows,1,1), block [256 1 1], 0 B shared",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
	m, _ := Find(p.Set, []string{"aten::layer_norm"})
	b.Reset()
	if err := m.WriteText(&b); err != nil || !strings.Contains(b.String(), "no run matched: no invocation of aten::layer_norm") {
		t.Errorf("%v: %s", err, b.String())
	}
}

// A result, with synthetic numbers, prints its checks, prediction and
// timeline check.
func TestWriteResult(t *testing.T) {
	p := llamaPlan(t)
	base := &Baseline{From: "h100.bench", TotalNS: 60e6, TotalJ: 40, Sigs: map[string]Times{}}
	for _, r := range p.Match.Replaced {
		base.Sigs[r.ID] = Times{NS: 20e3, J: 0.01}
	}
	ok := Agreement{MaxAbsErr: 1e-3, Scale: 2, RelErr: 5e-4, Elements: 8 << 20, Tolerance: 1e-2}
	bad := ok
	bad.Beyond = 3
	fused := []Times{{NS: 12e3, J: 0.008}}
	pred, err := Predict(p.Match, base, fused)
	if err != nil {
		t.Fatal(err)
	}
	tc := &TimelineCheck{Rounds: make([]Round, 3), PlainNS: 62e6, SubstNS: 52e6, SavingNS: 9.6e6, KernelSavingNS: 9.7e6,
		PlainLaunches: 1283, SubstLaunches: 828, Substituted: 520, EnergyErr: "no NVML", Plain: &replay.TimelineResult{}, Subst: &replay.TimelineResult{}}
	tc.compare(pred)
	for _, c := range []struct {
		check Agreement
		want  []string
	}{
		{ok, []string{"output check, variant 0: OK", "kernel alone, variant 0: 12.00µs per launch, 0.008 J",
			"3b90c9320456  20.00µs  0.01 J  65       1.300ms",
			"prediction: the runs' signatures 10.400ms, the kernel 780.00µs (65 runs): saving 9.620ms",
			"predicted GPU time 60.000ms -> 50.380ms (-16.0%)", "energy: saving 4.680 J; the signatures' 40.00 J -> 35.32 J",
			"measured saving 9.600ms, predicted 9.620ms: predicted/measured 1.002 (+0.2%)",
			"energy: not measured: no NVML", "launches: 1283 plain, 828 substituted (520 invocations replaced by 65 launches)"}},
		{bad, []string{"output check, variant 0: FAILED", "3 elements beyond"}},
		{Agreement{}, []string{"output check, variant 0: NOT DONE: step 3: no kernel"}},
	} {
		vr := &VariantResult{Check: &Check{Chain: c.check, Host: ok, ChainHost: ok}, Times: fused[0]}
		if c.check.Elements == 0 {
			vr.Check, vr.CheckErr = nil, "step 3: no kernel"
		}
		r := &Result{GPU: "NVIDIA H100 80GB HBM3", Kernel: p.Kernel, Match: p.Match, Baseline: base, Prediction: pred, Timeline: tc,
			Variants: []*VariantResult{vr}}
		if r.OK() != (vr.Check != nil && c.check.Beyond == 0) {
			t.Errorf("OK() = %v with %d beyond, check error %q", r.OK(), c.check.Beyond, vr.CheckErr)
		}
		var b bytes.Buffer
		if err := r.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if _, err := json.Marshal(r); err != nil {
			t.Errorf("the result does not encode as JSON: %v", err)
		}
		for _, want := range c.want {
			if !strings.Contains(b.String(), want) {
				t.Errorf("missing %q in\n%s", want, b.String())
			}
		}
	}
}
