package whatif

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/replay"
)

// A recorded what-if (results/h100/roofline-whatif/session10/, H100,
// 700 W): the baseline's replays at 1980 MHz sum to 57.430 ms and
// 46.964 J, the RMSNorm what-if's to 49.316 ms and 42.967 J; the plain
// timeline ran 62.244 ms, 43.981 J at 1665 MHz.
func recordedCap() (*Prediction, CapRun) {
	p := &Prediction{Energy: true, BaseNS: 57.430e6, BaseJ: 46.964, NewNS: 49.316e6, NewJ: 42.967, AtLimit: true}
	return p, CapRun{NS: 62.244e6, J: 43.981, MHz: 1665, From: "the plain timeline"}
}

func TestPredictAtCap(t *testing.T) {
	p, run := recordedCap()
	cp, err := PredictAtCap(p, 1980, run)
	if err != nil {
		t.Fatal(err)
	}
	s1 := run.MHz / 1980
	tf := func(s float64) float64 { return 1 + cp.ClockShare*(1/s-1) }
	ef := func(s float64) float64 { return 1 - cp.EnergySlope*(1-s) }
	// The fitted curve passes through the calibrating run.
	if got := p.BaseNS * tf(s1); math.Abs(got-run.NS) > 1 {
		t.Errorf("curve's time at %0.f MHz %g ns, want the run's %g", run.MHz, got, run.NS)
	}
	if got := p.BaseJ * ef(s1); math.Abs(got-run.J) > 1e-9 {
		t.Errorf("curve's energy at %0.f MHz %g J, want the run's %g", run.MHz, got, run.J)
	}
	// The what-if's run draws what the baseline drew.
	if got, want := cp.NewJ/cp.NewNS, run.J/run.NS; math.Abs(got/want-1) > 1e-6 {
		t.Errorf("the what-if draws %g W, want the baseline's %g", got*1e9, want*1e9)
	}
	// Its replays draw more than the baseline's (871 W against 818), so
	// it runs at a lower clock, and its run's energy per operation falls
	// below its replays': the energy saving exceeds the replays' own.
	if cp.NewMHz >= run.MHz {
		t.Errorf("the what-if runs at %.0f MHz, not below the baseline's %.0f", cp.NewMHz, run.MHz)
	}
	if own := p.BaseJ - p.NewJ; cp.SavingJ <= own {
		t.Errorf("energy saving %g J, not above the replays' own %g J", cp.SavingJ, own)
	}
	if cp.SavingNS != run.NS-cp.NewNS || cp.SavingJ != run.J-cp.NewJ {
		t.Errorf("savings %g ns, %g J against %g -> %g ns, %g -> %g J", cp.SavingNS, cp.SavingJ, run.NS, cp.NewNS, run.J, cp.NewJ)
	}
	p.Cap = cp
	if p.Saving() != cp.SavingNS {
		t.Errorf("Saving() %g, want the calibrated %g", p.Saving(), cp.SavingNS)
	}
	t.Logf("c %.3f, k %.3f; %0.f MHz, %.3f ms -> %.3f ms, saving %.3f ms, %.3f J (measured in that run: 6.499 ms, 5.001 J)",
		cp.ClockShare, cp.EnergySlope, cp.NewMHz, run.NS/1e6, cp.NewNS/1e6, cp.SavingNS/1e6, cp.SavingJ)
}

// A what-if that changes nothing runs where the baseline ran.
func TestPredictAtCapNoChange(t *testing.T) {
	p, run := recordedCap()
	p.NewNS, p.NewJ = p.BaseNS, p.BaseJ
	cp, err := PredictAtCap(p, 1980, run)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(cp.NewMHz-run.MHz) > 1e-3 || math.Abs(cp.SavingNS) > 1 || math.Abs(cp.SavingJ) > 1e-6 {
		t.Errorf("%0.4f MHz, saving %g ns, %g J; want %0.f MHz, none", cp.NewMHz, cp.SavingNS, cp.SavingJ, run.MHz)
	}
}

// A what-if whose replays draw less than the baseline ran at runs at the
// replays' clock.
func TestPredictAtCapUnder(t *testing.T) {
	p, run := recordedCap()
	p.NewJ = 0.5 * run.J / run.NS * p.NewNS
	cp, err := PredictAtCap(p, 1980, run)
	if err != nil {
		t.Fatal(err)
	}
	if cp.NewMHz != 1980 || cp.NewNS != p.NewNS {
		t.Errorf("%0.f MHz, %g ns; want 1980 MHz, the replays' %g ns", cp.NewMHz, cp.NewNS, p.NewNS)
	}
}

func TestPredictAtCapErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Prediction, *float64, *CapRun)
		want string
	}{
		{"no energy", func(p *Prediction, _ *float64, _ *CapRun) { p.Energy = false }, "no predicted totals"},
		{"no replay clock", func(_ *Prediction, mhz *float64, _ *CapRun) { *mhz = 0 }, "replays' SM clock"},
		{"no run clock", func(_ *Prediction, _ *float64, r *CapRun) { r.MHz = 0 }, "the plain timeline: no time, energy or SM clock"},
		{"no run energy", func(_ *Prediction, _ *float64, r *CapRun) { r.J = 0 }, "no time, energy or SM clock"},
		{"run at full clock", func(_ *Prediction, _ *float64, r *CapRun) { r.MHz = 1980 }, "not slowed by a cap"},
		{"run not slower", func(p *Prediction, _ *float64, r *CapRun) { r.NS = p.BaseNS }, "not slowed by a cap"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, run := recordedCap()
			mhz := 1980.0
			c.edit(p, &mhz, &run)
			_, err := PredictAtCap(p, mhz, run)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// The baseline reads its replays' clock from their sm-MHz (a recorded
// kreplay predict output, H100), and has none in an output without sm-MHz
// or peak lines (an older recorded energy output).
func TestBaselineReplayMHz(t *testing.T) {
	set := llamaSet(t)
	m, err := Find(set, RecipeByName("llama-rmsnorm").Ops)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path     string
		min, max float64
		from     string
	}{
		{filepath.Join("testdata", "h100-llama-7b_prefill.s10.bench"), 1900, 1980, "sm-MHz"},
		{filepath.Join("..", "predict", "testdata", "h100-llama-7b_prefill.energy.bench"), 0, 0, ""},
	} {
		b, err := BaselineFromBench(c.path, set, m)
		if err != nil {
			t.Fatal(err)
		}
		if b.ReplayMHz < c.min || b.ReplayMHz > c.max || !strings.Contains(b.ReplayMHzFrom, c.from) {
			t.Errorf("%s: replays' clock %g MHz (%s), want %g-%g (%s)", c.path, b.ReplayMHz, b.ReplayMHzFrom, c.min, c.max, c.from)
		}
	}
}

// atCap calibrates on the check's plain timeline alone, and the report
// prints the calibrated prediction the check compares.
func TestAtCapFromCheck(t *testing.T) {
	p, run := recordedCap()
	p.PowerLimitW, p.PowerLimitFrom, p.SavingNS, p.SavingJ = 700, "test", 8.114e6, 3.997
	p.atLimit(700, "test")
	watts := run.J / run.NS * 1e9
	tc := &TimelineCheck{Rounds: make([]Round, 11), PlainNS: 61e6, PlainMeanNS: run.NS, PlainMHz: run.MHz, PlainJ: 44.1,
		SubstNS: 55e6, SubstMeanNS: 56e6, SubstJ: 38.981, SavingNS: 6.499e6, MeanSavingNS: run.NS - 56e6, SavingJ: 5.001,
		Plain: &replay.TimelineResult{Energy: &replay.Energy{Watts: watts}},
		Subst: &replay.TimelineResult{Energy: &replay.Energy{Watts: 1}}}
	atCap(p, &Baseline{ReplayMHz: 1980, GPUUUID: "GPU-a"}, tc, "GPU-a")
	if p.Cap == nil {
		t.Fatalf("no calibrated prediction: %s", p.CapErr)
	}
	// The sustained time (the rounds' means), the energy window's power
	// and the rounds' clock; not the medians, not the window's J/op.
	want, err := PredictAtCap(p, 1980, run)
	if err != nil {
		t.Fatal(err)
	}
	if p.Cap.SavingNS != want.SavingNS || p.Cap.NewMHz != want.NewMHz || p.Cap.Warning != "" {
		t.Errorf("calibrated on the check: saving %g ns at %g MHz (warning %q), want %g at %g (the plain timeline's), no warning",
			p.Cap.SavingNS, p.Cap.NewMHz, p.Cap.Warning, want.SavingNS, want.NewMHz)
	}
	tc.compare(p)
	if tc.Ratio != p.Cap.SavingNS/tc.SavingNS || tc.MeanRatio != p.Cap.SavingNS/tc.MeanSavingNS || tc.EnergyRatio != p.Cap.SavingJ/tc.SavingJ {
		t.Errorf("ratios %g, %g; want the calibrated prediction's", tc.Ratio, tc.EnergyRatio)
	}
	ew := &errWriter{w: &bytes.Buffer{}}
	p.write(ew)
	out := ew.w.(*bytes.Buffer).String()
	for _, s := range []string{"at the cap, calibrated on the plain timeline timed here (62.244ms, 43.98 J, 1665 MHz; the replays ran at 1980 MHz)",
		"the what-if runs at", "(the prediction the check compares)"} {
		if !strings.Contains(out, s) {
			t.Errorf("missing %q in\n%s", s, out)
		}
	}
	// Without the plain timeline's clock, no calibration, and the reason.
	p.Cap, p.CapErr = nil, ""
	tc.PlainMHz = 0
	atCap(p, &Baseline{ReplayMHz: 1980}, tc, "")
	if p.Cap != nil || !strings.Contains(p.CapErr, "no time, energy or SM clock") {
		t.Errorf("cap %v, error %q; want none, for want of the clock", p.Cap, p.CapErr)
	}
}

// The rounds' means and clocks are averaged; a round without a clock
// leaves none.
func TestSummarize(t *testing.T) {
	tc := &TimelineCheck{Rounds: []Round{
		{PlainNS: 62e6, SubstNS: 55e6, PlainMeanNS: 63e6, SubstMeanNS: 55.5e6, PlainMHz: 1600, SubstMHz: 1500},
		{PlainNS: 61e6, SubstNS: 56e6, PlainMeanNS: 62e6, SubstMeanNS: 56.5e6, PlainMHz: 1700, SubstMHz: 1600},
		{PlainNS: 63e6, SubstNS: 57e6, PlainMeanNS: 64e6, SubstMeanNS: 57.5e6, PlainMHz: 1650, SubstMHz: 1550},
	}}
	tc.summarize()
	want := TimelineCheck{PlainNS: 62e6, SubstNS: 56e6, SavingNS: 6e6, PlainMeanNS: 63e6, SubstMeanNS: 56.5e6, MeanSavingNS: 6.5e6,
		PlainMHz: 1650, SubstMHz: 1550}
	if tc.PlainNS != want.PlainNS || tc.SubstNS != want.SubstNS || tc.SavingNS != want.SavingNS || tc.PlainMeanNS != want.PlainMeanNS ||
		tc.SubstMeanNS != want.SubstMeanNS || tc.MeanSavingNS != want.MeanSavingNS || tc.PlainMHz != want.PlainMHz || tc.SubstMHz != want.SubstMHz {
		t.Errorf("got %+v\nwant %+v", *tc, want)
	}
	tc.Rounds[1].SubstMHz = 0
	tc.summarize()
	if tc.PlainMHz != 0 || tc.SubstMHz != 0 {
		t.Errorf("clocks %g, %g MHz with a round missing one; want none", tc.PlainMHz, tc.SubstMHz)
	}
	// The again timeline's likewise.
	tc.Again = &replay.TimelineResult{}
	for i, mhz := range []float64{1700, 1800, 1750} {
		tc.Rounds[i].AgainNS, tc.Rounds[i].AgainMeanNS, tc.Rounds[i].AgainMHz = 70e6+float64(i)*1e6, 71e6, mhz
	}
	tc.summarizeAgain()
	if tc.AgainNS != 71e6 || tc.AgainMeanNS != 71e6 || tc.AgainMHz != 1750 {
		t.Errorf("again: %g ns, mean %g ns, %g MHz; want 71e6, 71e6, 1750", tc.AgainNS, tc.AgainMeanNS, tc.AgainMHz)
	}
	tc.Rounds[2].AgainMHz = 0
	if tc.summarizeAgain(); tc.AgainMHz != 0 {
		t.Errorf("again: %g MHz with a round missing its clock; want none", tc.AgainMHz)
	}
}

func TestGPUWarning(t *testing.T) {
	for _, c := range []struct{ baseline, here, want string }{
		{"GPU-a", "GPU-a", ""},
		{"GPU-a", "", ""},
		{"", "", ""},
		{"GPU-a", "GPU-b", "the baseline was measured on GPU-a, this is GPU-b; "},
		{"", "GPU-b", "no gpu-uuid line"},
	} {
		got := gpuWarning(c.baseline, c.here)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("gpuWarning(%q, %q) = %q, want %q", c.baseline, c.here, got, c.want)
		}
	}
}
