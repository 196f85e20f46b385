package whatif

import (
	"math"
	"strings"
	"testing"
)

// The in-context prediction prices every replaced invocation and every
// run's kernel at its Rotating replay alone; under the power limit it is
// the saving the check compares, at the limit the limit's models are.
func TestPredictInContext(t *testing.T) {
	p := llamaPlan(t)
	rot := map[string]Times{}
	invocations := 0
	for _, r := range p.Match.Replaced {
		if r.PartOf == "" {
			rot[r.ID] = Times{NS: 10e3, J: 4e-3}
			invocations += r.Invocations
		}
	}
	if _, err := predictInContext(p, rot); err == nil || !strings.Contains(err.Error(), "Rotating") {
		t.Errorf("without the kernel's replay: error %v", err)
	}
	rot[p.Variants[0].Sig.ID] = Times{NS: 14e3, J: 7e-3}
	c, err := predictInContext(p, rot)
	if err != nil {
		t.Fatal(err)
	}
	runs := float64(len(p.Match.Runs))
	if want := float64(invocations)*10e3 - runs*14e3; math.Abs(c.SavingNS-want) > 1e-6 || !c.Energy ||
		math.Abs(c.SavingJ-(float64(invocations)*4e-3-runs*7e-3)) > 1e-12 {
		t.Errorf("in context: saving %g ns, %g J (energy %v); want %g ns", c.SavingNS, c.SavingJ, c.Energy, want)
	}
	for _, tc := range []struct {
		name string
		p    Prediction
		want float64
	}{
		{"kernels' own", Prediction{SavingNS: 5}, 5},
		{"in context", Prediction{SavingNS: 5, InContext: &Prediction{SavingNS: 7}}, 7},
		{"at the limit", Prediction{SavingNS: 5, AtLimit: true, LimitSavingNS: 3, InContext: &Prediction{SavingNS: 7}}, 3},
		{"again", Prediction{SavingNS: 5, AtLimit: true, Again: &AgainPrediction{CapFit: CapFit{SavingNS: 4}}, InContext: &Prediction{SavingNS: 7}}, 4},
		{"removed before again", Prediction{SavingNS: 5, AtLimit: true, Again: &AgainPrediction{CapFit: CapFit{SavingNS: 4}},
			Removed: &RemovedPrediction{CapFit: CapFit{SavingNS: 6}}, InContext: &Prediction{SavingNS: 7}}, 6},
	} {
		if got := tc.p.Saving(); got != tc.want {
			t.Errorf("%s: Saving() %g, want %g", tc.name, got, tc.want)
		}
	}
	var b strings.Builder
	pr := Prediction{Runs: 65, SavingNS: 5e6, InContext: c}
	pr.writeInContext(&errWriter{w: &b})
	if !strings.Contains(b.String(), "(the prediction the check compares)") {
		t.Errorf("report:\n%s", b.String())
	}
}
