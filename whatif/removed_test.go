package whatif

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/replay"
)

// PredictRemoved recovers the what-if's run of a world its model holds in
// (again_test.go's, the kept energy linear in the clock), from the plain
// run (one chain) and the removed one (none, no kernel), with the
// replaced and the kernel's power flat and scaled by the clock.
func TestPredictRemovedRecoversWorld(t *testing.T) {
	for _, alone := range []float64{0, 1980} {
		w := newAgainWorld()
		w.aloneMHz = alone
		w.chains, w.withKernel = 0, true
		wantNS, wantMHz := w.run()
		w.withKernel = false
		dNS, dMHz := w.run()
		w.chains = 1
		aNS, aMHz := w.run()
		got, err := PredictRemoved(RemovedInput{PowerW: w.powerW, PlainNS: aNS, PlainMHz: aMHz, RemovedNS: dNS, RemovedMHz: dMHz,
			ReplacedNS: w.r, ReplacedJ: w.r * w.rw / 1e9, FusedNS: w.f, FusedJ: w.fj, AloneMHz: alone})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got.NewNS-wantNS) > 10 || math.Abs(got.NewMHz-wantMHz) > 1e-3 {
			t.Errorf("alone %v MHz: what-if %.6f ms at %.3f MHz, want %.6f ms at %.3f", alone, got.NewNS/1e6, got.NewMHz, wantNS/1e6, wantMHz)
		}
		if math.Abs(got.SavingNS-(aNS-wantNS)) > 10 || math.Abs(got.SavingJ-w.powerW*(aNS-wantNS)/1e9) > 1e-6 {
			t.Errorf("alone %v MHz: saving %.6f ms, %.4f J; want %.6f ms", alone, got.SavingNS/1e6, got.SavingJ, (aNS-wantNS)/1e6)
		}
		// The kernel adds low-power work: the what-if runs above D's clock.
		if !(got.NewMHz > dMHz && got.NewMHz < aMHz) {
			t.Errorf("alone %v MHz: what-if at %.1f MHz, want between D's %.1f and A's %.1f", alone, got.NewMHz, dMHz, aMHz)
		}
		t.Logf("alone %v MHz: D %.1f MHz, what-if %.1f, A %.1f; saving %.3f ms", alone, dMHz, got.NewMHz, aMHz, got.SavingNS/1e6)
	}
}

func TestPredictRemovedErrors(t *testing.T) {
	ok := RemovedInput{PowerW: 692, PlainNS: 62.3e6, PlainMHz: 1688, RemovedNS: 54.5e6, RemovedMHz: 1580,
		ReplacedNS: 10.26e6, ReplacedJ: 5.0, FusedNS: 0.9e6, FusedJ: 0.5, AloneMHz: 1980}
	checkInputErrors(t, ok, PredictRemoved, []inputCase[RemovedInput]{
		{"no power", func(in *RemovedInput) { in.PowerW = 0 }, "power held"},
		{"no clock", func(in *RemovedInput) { in.RemovedMHz = 0 }, "clocks"},
		{"no replaced", func(in *RemovedInput) { in.ReplacedJ = 0 }, "time in context"},
		{"no kernel", func(in *RemovedInput) { in.FusedNS = 0 }, "kernel's time and energy"},
		{"clock not down", func(in *RemovedInput) { in.RemovedMHz = 1700 }, "not below"},
		{"kept faster lower", func(in *RemovedInput) { in.RemovedNS = 50e6 }, "not faster at the higher clock"},
	})
}

// removedInput takes the removed timeline's summary and the replaced
// signatures in the plain one, and refuses what is not at the cap; the
// check's summary takes the removed timeline's rounds.
func TestRemovedInput(t *testing.T) {
	capped := &replay.Energy{Watts: 692, Throttled: true, JoulesPerOp: 37.7}
	ctx := []replay.SigContext{{ID: "r1", Invocations: 65, MeanNS: 20e3}, {ID: "r2", Invocations: 65, MeanNS: 10e3}, {ID: "k", Invocations: 64, MeanNS: 250e3}}
	tc := &TimelineCheck{
		Rounds: []Round{{PlainMeanNS: 62e6, Removed: &Timing{NS: 54.4e6, MeanNS: 54.6e6, MHz: 1578}},
			{PlainMeanNS: 62.2e6, Removed: &Timing{NS: 54.2e6, MeanNS: 54.4e6, MHz: 1582}}},
		PlainMeanNS: 62.1e6, PlainMHz: 1688,
		Plain:   &replay.TimelineResult{Energy: capped, Context: ctx},
		Removed: &ProbeTimeline{Launches: 759, Last: &replay.TimelineResult{Energy: capped}},
	}
	tc.summarizeRemoved()
	if r := tc.Removed; math.Abs(r.MeanNS-54.5e6) > 1 || math.Abs(r.NS-54.3e6) > 1 || math.Abs(r.MHz-1580) > 1e-9 || r.J != 37.7 {
		t.Fatalf("summary: %+v", *r)
	}
	rot := map[string]Times{"r1": {NS: 18e3, J: 0.009, MHz: 1980}, "r2": {NS: 9e3, J: 0.0036, MHz: 1980}, "f": {NS: 14e3, J: 0.0077, MHz: 1980}}
	in, err := removedInput(tc, []string{"r1", "r2"}, map[string]int{"f": 65}, rot)
	if err != nil {
		t.Fatal(err)
	}
	wantRepNS := 65*20e3 + 65*10e3
	wantRepJ := 65*20e3*0.009/18e3 + 65*10e3*0.0036/9e3
	if in.PowerW != 692 || in.RemovedNS != tc.Removed.MeanNS || in.RemovedMHz != 1580 || math.Abs(in.ReplacedNS-wantRepNS) > 1e-6 ||
		math.Abs(in.ReplacedJ-wantRepJ) > 1e-9 || in.FusedNS != 65*14e3 || math.Abs(in.FusedJ-65*0.0077) > 1e-12 || in.AloneMHz != 1980 {
		t.Errorf("input: %+v", in)
	}
	under := *tc
	under.Removed = &ProbeTimeline{Last: &replay.TimelineResult{Energy: &replay.Energy{Watts: 560}}}
	if _, err := removedInput(&under, []string{"r1"}, nil, rot); err == nil || !strings.Contains(err.Error(), "not at the power cap") {
		t.Errorf("under the cap: %v", err)
	}
	var p Prediction
	p.Removed, err = PredictRemoved(RemovedInput{PowerW: 692, PlainNS: 62.3e6, PlainMHz: 1688, RemovedNS: 54.5e6, RemovedMHz: 1580,
		ReplacedNS: 10.26e6, ReplacedJ: 5.0, FusedNS: 0.9e6, FusedJ: 0.5, AloneMHz: 1980})
	if err != nil {
		t.Fatal(err)
	}
	if p.Saving() != p.Removed.SavingNS {
		t.Errorf("Saving %v, want the removed prediction's %v", p.Saving(), p.Removed.SavingNS)
	}
	var b bytes.Buffer
	p.writeRemoved(&errWriter{w: &b})
	if !strings.Contains(b.String(), "a measured ablation plus the kernel") || !strings.Contains(b.String(), "(the prediction the check compares)") ||
		!strings.Contains(b.String(), "plain - removed - the kernel's runs alone saves 6.900ms") {
		t.Errorf("report:\n%s", b.String())
	}
}

// A recorded run (results/h100/roofline-whatif/session19.tar.xz,
// s19/c215/; H100, the embedded Llama-7B prefill, the series left out): its input gathered again from the recorded timelines
// and Rotating replays gives the recorded prediction, the one compared.
func TestRemovedRecorded(t *testing.T) {
	r := readResult(t, "h100-llama-7b_prefill.removed.json")
	rp, tc := r.Prediction.Removed, r.Timeline
	if rp == nil || tc == nil || tc.Removed == nil {
		t.Fatal("no removed prediction or timeline in the recorded result")
	}
	kernels := map[string]int{}
	for _, v := range r.Variants {
		kernels[v.Sig] += v.Runs
	}
	in, err := removedInput(tc, replacedIDs(r.Match), kernels, r.Rotating)
	if err != nil {
		t.Fatal(err)
	}
	got, err := PredictRemoved(in)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.NewNS-rp.NewNS) > 1 || math.Abs(got.NewMHz-rp.NewMHz) > 1e-6 || math.Abs(got.ReplacedJ-rp.ReplacedJ) > 1e-9 {
		t.Errorf("removed: %.6f ms at %.3f MHz (replaced %.4f J), recorded %.6f ms at %.3f (%.4f J)",
			got.NewNS/1e6, got.NewMHz, got.ReplacedJ, rp.NewNS/1e6, rp.NewMHz, rp.ReplacedJ)
	}
	if tc.Removed.Launches != tc.PlainLaunches-tc.Substituted || !(rp.RemovedMHz < rp.NewMHz && rp.NewMHz < rp.PlainMHz) {
		t.Errorf("removed timeline: %d launches (plain %d, %d replaced); clocks D %.0f, what-if %.0f, A %.0f MHz",
			tc.Removed.Launches, tc.PlainLaunches, tc.Substituted, rp.RemovedMHz, rp.NewMHz, rp.PlainMHz)
	}
	if r.Prediction.Saving() != rp.SavingNS {
		t.Errorf("Saving %v, want the removed prediction's %v", r.Prediction.Saving(), rp.SavingNS)
	}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"a measured ablation plus the kernel", "probe, the replaced runs removed (759 launches)", "predicted/sustained 0.993"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	t.Logf("recorded: plain %.3f ms at %.0f MHz, removed %.3f ms at %.0f MHz, what-if %.3f ms at %.0f MHz; saving %.3f ms against %.3f sustained, %.3f median",
		rp.PlainNS/1e6, rp.PlainMHz, rp.RemovedNS/1e6, rp.RemovedMHz, rp.NewNS/1e6, rp.NewMHz, rp.SavingNS/1e6, tc.MeanSavingNS/1e6, tc.SavingNS/1e6)
}

// At the cap, a report without the removed model says how to get it.
func TestRemovedNote(t *testing.T) {
	capped := &TimelineCheck{Plain: &replay.TimelineResult{Energy: &replay.Energy{Watts: 692, Throttled: true}}, ContextErr: "none"}
	under := &TimelineCheck{Plain: &replay.TimelineResult{Energy: &replay.Energy{Watts: 560}}, ContextErr: "none"}
	withRemoved := &Prediction{Removed: &RemovedPrediction{}}
	for _, c := range []struct {
		name string
		tc   *TimelineCheck
		p    *Prediction
		want bool
	}{
		{"at the cap", capped, &Prediction{}, true},
		{"at the cap, with -removed", capped, withRemoved, false},
		{"at the cap, -removed not done", capped, &Prediction{RemovedErr: "no removed timeline"}, false},
		{"under the cap", under, &Prediction{}, false},
	} {
		var b bytes.Buffer
		c.tc.write(&errWriter{w: &b}, c.p)
		if got := strings.Contains(b.String(), "-removed predicts there"); got != c.want {
			t.Errorf("%s: note %v, want %v:\n%s", c.name, got, c.want, b.String())
		}
	}
}
