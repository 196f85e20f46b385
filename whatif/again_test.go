package whatif

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/replay"
)

// againWorld is a run at the cap that follows the model of again.go
// exactly, at the magnitudes of recorded H100 runs (the Llama-7B
// prefill's RMSNorm chain, 700 W; results/h100/roofline-whatif/): the kept work 54 ms at 1625
// MHz, a chain 10.3 ms at 500 W, the fused kernel's runs 0.9 ms.
type againWorld struct {
	a, b       float64 // kept time a + b/MHz, ns
	e0, g      float64 // kept energy e0 + g (MHz - 1625), J
	r, rw      float64 // a chain's time (ns) and power (W)
	f, fj      float64 // the kernel's runs: time (ns), energy (J)
	powerW     float64
	chains     float64
	withKernel bool
	// aloneMHz, when set, scales the chains' and the kernel's power by
	// the clock over it (their power alone at aloneMHz).
	aloneMHz float64
}

// run solves the world for its clock at the cap and returns the run.
func (w againWorld) run() (ns, mhz float64) {
	f, fj := 0.0, 0.0
	if w.withKernel {
		f, fj = w.f, w.fj
	}
	sc := func(m float64) float64 {
		if w.aloneMHz == 0 {
			return 1
		}
		return m / w.aloneMHz
	}
	t := func(m float64) float64 { return w.a + w.b/m + w.chains*w.r + f }
	e := func(m float64) float64 { return w.e0 + w.g*(m-1625) + (w.chains*w.r*w.rw/1e9+fj)*sc(m) }
	mhz = bisect(func(m float64) bool { return w.powerW*t(m)/1e9 < e(m) }, 200, 4000)
	return t(mhz), mhz
}

func newAgainWorld() againWorld {
	return againWorld{a: 18e6, b: 5.85e10, e0: 40.1, g: 0.0153, r: 10.3e6, rw: 500, f: 0.9e6, fj: 0.5, powerW: 695}
}

// PredictAgain recovers the what-if's run of a world its model holds in,
// from the plain run (one chain) and the again run (two).
func TestPredictAgainRecoversWorld(t *testing.T) {
	w := newAgainWorld()
	w.chains = 1
	plainNS, plainMHz := w.run()
	w.chains = 2
	againNS, againMHz := w.run()
	w.chains, w.withKernel = 0, true
	wantNS, wantMHz := w.run()
	in := AgainInput{PowerW: w.powerW, PlainNS: plainNS, PlainMHz: plainMHz, AgainNS: againNS, AgainMHz: againMHz,
		ReplacedNS: w.r, ReplacedJ: w.r * w.rw / 1e9, AgainReplacedNS: 2 * w.r, AgainRepJ: 2 * w.r * w.rw / 1e9, FusedNS: w.f, FusedJ: w.fj}
	p, err := PredictAgain(in)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(p.NewNS-wantNS) > 10 || math.Abs(p.NewMHz-wantMHz) > 1e-3 {
		t.Errorf("what-if %.6f ms at %.3f MHz, want %.6f ms at %.3f", p.NewNS/1e6, p.NewMHz, wantNS/1e6, wantMHz)
	}
	if againMHz <= plainMHz || wantMHz >= plainMHz {
		t.Errorf("clocks: plain %.0f, again %.0f, what-if %.0f MHz: want the chain to raise the clock", plainMHz, againMHz, wantMHz)
	}
	if p.SavingNS != plainNS-p.NewNS || math.Abs(p.SavingJ-w.powerW*p.SavingNS/1e9) > 1e-12 {
		t.Errorf("saving %g ns, %g J", p.SavingNS, p.SavingJ)
	}
	var pr Prediction
	pr.Again = p
	if pr.Saving() != p.SavingNS {
		t.Errorf("Saving() %g, want the again prediction's %g", pr.Saving(), p.SavingNS)
	}
	t.Logf("plain %.3f ms at %.0f MHz, again %.3f ms at %.0f MHz, what-if %.3f ms at %.0f MHz, saving %.3f ms",
		plainNS/1e6, plainMHz, againNS/1e6, againMHz, p.NewNS/1e6, p.NewMHz, p.SavingNS/1e6)
}

// In a world where the chains' and the kernel's power follow the clock,
// the model given the clock of their replays alone recovers the what-if's
// run; priced at their power alone it puts the run too fast.
func TestPredictAgainScaledWorld(t *testing.T) {
	w := newAgainWorld()
	w.aloneMHz = 1980
	var ns, mhz [3]float64
	for n := range 3 {
		w.chains, w.withKernel = float64(n), n == 0
		ns[n], mhz[n] = w.run()
	}
	in := AgainInput{PowerW: w.powerW, PlainNS: ns[1], PlainMHz: mhz[1], AgainNS: ns[2], AgainMHz: mhz[2],
		ReplacedNS: w.r, ReplacedJ: w.r * w.rw / 1e9, AgainReplacedNS: 2 * w.r, AgainRepJ: 2 * w.r * w.rw / 1e9, FusedNS: w.f, FusedJ: w.fj}
	flat, err := PredictAgain(in)
	if err != nil {
		t.Fatal(err)
	}
	in.AloneMHz = w.aloneMHz
	scaled, err := PredictAgain(in)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(scaled.NewNS-ns[0]) > 10 || math.Abs(scaled.NewMHz-mhz[0]) > 1e-3 || scaled.AloneMHz != w.aloneMHz {
		t.Errorf("scaled: what-if %.6f ms at %.3f MHz, want %.6f ms at %.3f", scaled.NewNS/1e6, scaled.NewMHz, ns[0]/1e6, mhz[0])
	}
	if flat.NewMHz <= mhz[0]+1 || flat.SavingNS <= scaled.SavingNS {
		t.Errorf("priced at their power alone: %.1f MHz, saving %.3f ms; want above %.1f MHz and the scaled saving %.3f ms",
			flat.NewMHz, flat.SavingNS/1e6, mhz[0], scaled.SavingNS/1e6)
	}
	t.Logf("what-if %.1f MHz; priced alone %.1f MHz (saving %+.1f%%)", mhz[0], flat.NewMHz, 100*(flat.SavingNS/(ns[1]-ns[0])-1))
}

func TestPredictAgainErrors(t *testing.T) {
	ok := AgainInput{PowerW: 695, PlainNS: 64.3e6, PlainMHz: 1625, AgainNS: 72.6e6, AgainMHz: 1710,
		ReplacedNS: 10.3e6, ReplacedJ: 5.1, AgainReplacedNS: 20.4e6, AgainRepJ: 10.2, FusedNS: 0.9e6, FusedJ: 0.5}
	checkInputErrors(t, ok, PredictAgain, []inputCase[AgainInput]{
		{"no power", func(in *AgainInput) { in.PowerW = 0 }, "power held"},
		{"no clock", func(in *AgainInput) { in.AgainMHz = 0 }, "clocks"},
		{"again not longer", func(in *AgainInput) { in.AgainReplacedNS = in.ReplacedNS }, "times in context"},
		{"no kernel", func(in *AgainInput) { in.FusedJ = 0 }, "kernel's time and energy"},
		{"clock not up", func(in *AgainInput) { in.AgainMHz = 1600 }, "not above"},
		{"kept slower", func(in *AgainInput) { in.AgainNS = 76e6 }, "not faster at the higher clock"},
	})
}

// againInput sums the replaced signatures' times in context in each
// timeline and prices them at their power alone; it refuses timelines
// not at the cap.
func TestAgainInput(t *testing.T) {
	ctx := func(n float64) []replay.SigContext {
		return []replay.SigContext{{ID: "r1", Invocations: 65, MeanNS: 20e3 * n}, {ID: "r2", Invocations: 65, MeanNS: 10e3}, {ID: "k", Invocations: 64, MeanNS: 250e3}}
	}
	capped := &replay.Energy{Watts: 695, Throttled: true}
	tc := &TimelineCheck{PlainMeanNS: 64e6, PlainMHz: 1625, AgainMeanNS: 72e6, AgainMHz: 1710,
		Plain: &replay.TimelineResult{Energy: capped, Context: ctx(1)}, Again: &replay.TimelineResult{Energy: capped, Context: ctx(2)}}
	rot := map[string]Times{"r1": {NS: 18e3, J: 0.009}, "r2": {NS: 9e3, J: 0.0036}, "f": {NS: 14e3, J: 0.0077}}
	in, err := againInput(tc, []string{"r1", "r2"}, map[string]int{"f": 65}, rot)
	if err != nil {
		t.Fatal(err)
	}
	wantNS := 65 * (20e3 + 10e3)
	wantJ := 65 * (20e3*0.009/18e3 + 10e3*0.0036/9e3)
	if math.Abs(in.ReplacedNS-wantNS) > 1e-6 || math.Abs(in.ReplacedJ-wantJ) > 1e-12 || math.Abs(in.AgainReplacedNS-65*(40e3+10e3)) > 1e-6 {
		t.Errorf("replaced %g ns, %g J, again %g ns; want %g ns, %g J", in.ReplacedNS, in.ReplacedJ, in.AgainReplacedNS, wantNS, wantJ)
	}
	if in.FusedNS != 65*14e3 || math.Abs(in.FusedJ-65*0.0077) > 1e-12 || in.PowerW != 695 {
		t.Errorf("kernel %g ns, %g J, power %g W", in.FusedNS, in.FusedJ, in.PowerW)
	}
	// The replays' clock: unknown until every one has one, then their mean.
	if in.AloneMHz != 0 {
		t.Errorf("alone at %g MHz with no clocks recorded, want 0", in.AloneMHz)
	}
	for id, mhz := range map[string]float64{"r1": 1980, "r2": 1970} {
		r := rot[id]
		r.MHz = mhz
		rot[id] = r
	}
	if in, _ = againInput(tc, []string{"r1", "r2"}, map[string]int{"f": 65}, rot); in.AloneMHz != 0 {
		t.Errorf("alone at %g MHz without the kernel's clock, want 0", in.AloneMHz)
	}
	f := rot["f"]
	f.MHz = 1990
	rot["f"] = f
	if in, _ = againInput(tc, []string{"r1", "r2"}, map[string]int{"f": 65}, rot); in.AloneMHz != 1980 {
		t.Errorf("alone at %g MHz, want the mean 1980", in.AloneMHz)
	}
	tc.Again.Energy = &replay.Energy{Watts: 650}
	if _, err := againInput(tc, []string{"r1", "r2"}, map[string]int{"f": 65}, rot); err == nil || !strings.Contains(err.Error(), "not at the power cap") {
		t.Errorf("again timeline under the cap: error %v", err)
	}
	tc.Again.Energy = capped
	delete(rot, "r2")
	if _, err := againInput(tc, []string{"r1", "r2"}, map[string]int{"f": 65}, rot); err == nil || !strings.Contains(err.Error(), "r2") {
		t.Errorf("no rotating replay of r2: error %v", err)
	}
}

// A recorded run of the model (results/h100/roofline-whatif/
// session17.tar.xz, s17/c202/, run 1; H100): its inputs give its prediction again,
// its replaced signatures' times in context sum as the model summed them,
// and the report prints it as the prediction the check compares.
func TestAgainRecorded(t *testing.T) {
	r := readResult(t, "h100-llama-7b_prefill.again.json")
	a, tc := r.Prediction.Again, r.Timeline
	if a == nil || tc == nil || tc.Again == nil {
		t.Fatal("no again prediction or timeline in the recorded result")
	}
	got, err := PredictAgain(AgainInput{PowerW: a.PowerW, PlainNS: a.PlainNS, PlainMHz: a.PlainMHz, AgainNS: a.AgainNS, AgainMHz: a.AgainMHz,
		ReplacedNS: a.ReplacedNS, ReplacedJ: a.ReplacedJ, AgainReplacedNS: a.AgainReplacedNS, AgainRepJ: a.AgainReplacedJ,
		FusedNS: a.FusedNS, FusedJ: a.FusedJ})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.NewNS-a.NewNS) > 1 || math.Abs(got.NewMHz-a.NewMHz) > 1e-6 {
		t.Errorf("again: %.6f ms at %.3f MHz, recorded %.6f ms at %.3f", got.NewNS/1e6, got.NewMHz, a.NewNS/1e6, a.NewMHz)
	}
	// The replaced signatures' times in context, each priced at one
	// power: their sums are the recorded ones.
	ids := replacedIDs(r.Match)
	one := map[string]Times{}
	for _, id := range ids {
		one[id] = Times{NS: 1, J: 1e-9}
	}
	for _, c := range []struct {
		res  *replay.TimelineResult
		want float64
	}{{tc.Plain, a.ReplacedNS}, {tc.Again, a.AgainReplacedNS}} {
		ns, j, err := inContext(c.res, ids, one)
		if err != nil || math.Abs(ns-c.want) > 1e-3 || math.Abs(j-ns*1e-9) > 1e-12 {
			t.Errorf("in context: %v ns, %v J (%v); recorded %v ns", ns, j, err, c.want)
		}
	}
	if tc.AgainMHz <= tc.PlainMHz || tc.AgainLaunches != tc.PlainLaunches+len(ids)*len(r.Match.Runs) {
		t.Errorf("again timeline: %.0f MHz against plain %.0f, %d launches against %d", tc.AgainMHz, tc.PlainMHz, tc.AgainLaunches, tc.PlainLaunches)
	}
	var b bytes.Buffer
	r.Prediction.writeAgain(&errWriter{w: &b})
	if !strings.Contains(b.String(), "saving 7.493ms; saving 5.206 J (the prediction the check compares)") {
		t.Errorf("report:\n%s", b.String())
	}
	// Without the baseline's totals (no -bench: no power limit known) the
	// report still gives the again prediction, which the check compares.
	bare := *r.Prediction
	bare.PowerLimitW, bare.BaseNS, bare.BaseJ, bare.AtLimit, bare.Cap = 0, 0, 0, false, nil
	b.Reset()
	bare.write(&errWriter{w: &b})
	if !strings.Contains(b.String(), "from the plain and again timelines") || !strings.Contains(b.String(), "no predicted total") {
		t.Errorf("report without -bench:\n%s", b.String())
	}
	t.Logf("recorded: plain %.3f ms at %.0f MHz, again %.3f ms at %.0f MHz, what-if %.3f ms at %.0f MHz; sustained saving %.3f ms",
		a.PlainNS/1e6, a.PlainMHz, a.AgainNS/1e6, a.AgainMHz, a.NewNS/1e6, a.NewMHz, tc.MeanSavingNS/1e6)
}
