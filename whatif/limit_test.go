package whatif

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// The power limit's view: time is max(T, E / P) before and after.
func TestAtLimit(t *testing.T) {
	for _, c := range []struct {
		name                   string
		p                      Prediction
		limit                  float64
		atLimit                bool
		base, new, saving, got float64 // ms; got is Saving()
	}{
		// 60 ms, 48 J: 800 W, over 700 W; after: 52 ms, 44 J, still over.
		{"both over", Prediction{Energy: true, SavingNS: 8e6, BaseNS: 60e6, NewNS: 52e6, BaseJ: 48, NewJ: 44}, 700,
			true, 48 / 0.7, 44 / 0.7, 4 / 0.7, 4 / 0.7},
		// 60 ms, 36 J: 600 W, under; after 52 ms, 33 J, under.
		{"both under", Prediction{Energy: true, SavingNS: 8e6, BaseNS: 60e6, NewNS: 52e6, BaseJ: 36, NewJ: 33}, 700,
			false, 60, 52, 8, 8},
		// 60 ms, 45 J: 750 W, over; after 52 ms, 35 J: 673 W, under.
		{"over, then under", Prediction{Energy: true, SavingNS: 8e6, BaseNS: 60e6, NewNS: 52e6, BaseJ: 45, NewJ: 35}, 700,
			true, 45 / 0.7, 52, 45/0.7 - 52, 45/0.7 - 52},
		{"no limit", Prediction{Energy: true, SavingNS: 8e6, BaseNS: 60e6, NewNS: 52e6, BaseJ: 48, NewJ: 44}, 0,
			false, 0, 0, 0, 8},
		{"no energy", Prediction{SavingNS: 8e6, BaseNS: 60e6, NewNS: 52e6}, 700, false, 0, 0, 0, 8},
		{"no totals", Prediction{Energy: true, SavingNS: 8e6, SavingJ: 4}, 700, false, 0, 0, 0, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := c.p
			p.atLimit(c.limit, "test")
			near := func(got, want float64) bool { return math.Abs(got-want*1e6) < 1 }
			if p.AtLimit != c.atLimit || !near(p.BaseLimitNS, c.base) || !near(p.NewLimitNS, c.new) ||
				!near(p.LimitSavingNS, c.saving) || !near(p.Saving(), c.got) {
				t.Errorf("at limit %v, %g -> %g ns, saving %g ns, Saving() %g ns; want %v, %g -> %g ms, %g ms, %g ms",
					p.AtLimit, p.BaseLimitNS, p.NewLimitNS, p.LimitSavingNS, p.Saving(), c.atLimit, c.base, c.new, c.saving, c.got)
			}
		})
	}
}

// On the recorded H100 energy output of the Llama-7B prefill, whose
// signatures draw more than the 700 W limit back to back, the RMSNorm
// what-if's saving is the saved energy over the limit.
func TestAtLimitRecordedLlama(t *testing.T) {
	set := llamaSet(t)
	m, err := Find(set, RecipeByName("llama-rmsnorm").Ops)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "predict", "testdata", "h100-llama-7b_prefill.energy.bench")
	b, err := BaselineFromBench(path, set, m)
	if err != nil {
		t.Fatal(err)
	}
	if b.PowerLimitW != 700 || !strings.Contains(b.PowerLimitFrom, "power-limit line") || b.TotalJ <= 0 {
		t.Fatalf("baseline power limit %g W (%s), %g J", b.PowerLimitW, b.PowerLimitFrom, b.TotalJ)
	}
	fused := make([]Times, len(m.Variants))
	for i := range fused {
		fused[i] = Times{NS: 8.5e3, J: 8.5e-6 * 500} // a guess for the test: 8.5 µs at 500 W
	}
	p, err := Predict(m, b, fused)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Energy || !p.AtLimit {
		t.Fatalf("energy %v (%s), at limit %v: %.4g J in %.4g ms", p.Energy, p.NoEnergy, p.AtLimit, p.BaseJ, p.BaseNS/1e6)
	}
	want := p.SavingJ / 700 * 1e9
	if math.Abs(p.Saving()-want) > 1e-6*want || p.Saving() >= p.SavingNS {
		t.Errorf("saving %g ns, want %g (energy %g J over 700 W), below the kernels' own %g ns", p.Saving(), want, p.SavingJ, p.SavingNS)
	}
	t.Logf("%.4g J in %.4g ms (%.0f W); kernels' saving %.3f ms, at the limit %.3f ms",
		p.BaseJ, p.BaseNS/1e6, p.BaseJ/p.BaseNS*1e9, p.SavingNS/1e6, p.Saving()/1e6)
}
