package predict

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/schedule"
	"github.com/kreplay/kreplay/signatures"
)

func TestParseSignatureEnergy(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want SignatureEnergy
		err  bool
	}{
		{in: "auto", want: SignatureEnergyAuto},
		{in: "on", want: SignatureEnergyOn},
		{in: "off", want: SignatureEnergyOff},
		{in: "", err: true},
		{in: "On", err: true},
		{in: "true", err: true},
		{in: " off", err: true},
	} {
		got, err := ParseSignatureEnergy(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseSignatureEnergy(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.err)
		}
		if err != nil && (!strings.Contains(err.Error(), fmt.Sprintf("%q", tc.in)) || !strings.Contains(err.Error(), "want auto, on, off")) {
			t.Errorf("ParseSignatureEnergy(%q): error %q names neither the value nor the modes", tc.in, err)
		}
	}
}

// A mode read back is one of the modes, and writes as what was read.
func FuzzParseSignatureEnergy(f *testing.F) {
	for _, s := range []string{"auto", "on", "off", "", "OFF", "on\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseSignatureEnergy(s)
		if err != nil {
			if m != "" {
				t.Errorf("%q: mode %q beside the error", s, m)
			}
			return
		}
		if string(m) != s {
			t.Errorf("%q read as %q", s, m)
		}
	})
}

// Each signature's own energy window is measured where the mode says on,
// skipped where it says off, and under auto skipped exactly where the
// inference's energy can be in place: energy measured, a recorded host
// schedule, the timeline run. Without energy none is measured anywhere.
// The suite's energy follows the choice; the host probe's power follows
// the energy flag alone; the power limit is not applied without the
// signatures' windows.
func TestSignatureWindows(t *testing.T) {
	recorded := &schedule.Schedule{Source: schedule.SourceRecorder}
	traced := &schedule.Schedule{Source: schedule.SourceTrace}
	for _, tc := range []struct {
		name       string
		energy     bool
		sched      *schedule.Schedule
		noTimeline bool
		mode       SignatureEnergy
		want       bool
		line       string // a part of the progress line; "" for none
	}{
		{name: "auto in place", energy: true, sched: recorded, mode: SignatureEnergyAuto, want: false, line: "skipped: the inference's energy is measured in place"},
		{name: "zero mode is auto", energy: true, sched: recorded, want: false, line: "-signature-energy on measures them"},
		{name: "auto no schedule", energy: true, mode: SignatureEnergyAuto, want: true, line: "measured: the inference's energy cannot be in place (the whole inference is not predicted"},
		{name: "auto traced schedule", energy: true, sched: traced, mode: SignatureEnergyAuto, want: true, line: "(no recorded host schedule to pace a timeline with)"},
		{name: "auto no timeline", energy: true, sched: recorded, noTimeline: true, mode: SignatureEnergyAuto, want: true, line: "(-no-timeline); -signature-energy off skips them"},
		{name: "auto no timeline no schedule", energy: true, noTimeline: true, mode: SignatureEnergyAuto, want: true, line: "cannot be in place"},
		{name: "on in place", energy: true, sched: recorded, mode: SignatureEnergyOn, want: true, line: "measured (-signature-energy on)"},
		{name: "on no schedule", energy: true, mode: SignatureEnergyOn, want: true, line: "measured (-signature-energy on)"},
		{name: "off in place", energy: true, sched: recorded, mode: SignatureEnergyOff, want: false, line: "skipped (-signature-energy off)"},
		{name: "off no timeline", energy: true, sched: recorded, noTimeline: true, mode: SignatureEnergyOff, want: false, line: "skipped (-signature-energy off)"},
		{name: "off no schedule", energy: true, mode: SignatureEnergyOff, want: false, line: "skipped (-signature-energy off)"},
		{name: "no energy auto", sched: recorded, mode: SignatureEnergyAuto},
		{name: "no energy on", sched: recorded, mode: SignatureEnergyOn},
		{name: "no energy off", mode: SignatureEnergyOff},
		{name: "no energy no timeline", noTimeline: true, mode: SignatureEnergyAuto},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := FlowOptions{Measure: replay.Options{Energy: tc.energy, EnergyTicks: 31, EnergyWarmup: BoundEnergyWarmup},
				Schedule: tc.sched, NoTimeline: tc.noTimeline, SignatureEnergy: tc.mode}
			got, line := o.signatureWindows()
			if got != tc.want || (tc.line == "") != (line == "") || !strings.Contains(line, tc.line) {
				t.Errorf("windows %v, line %q; want %v, a line holding %q", got, line, tc.want, tc.line)
			}
			if e := o.suiteOptions(nil).Measure.Energy; e != tc.want {
				t.Errorf("the suite measures energy %v, want %v", e, tc.want)
			}
			if np := o.hostProbe().NoPower; np != !tc.energy {
				t.Errorf("the host probe's NoPower %v with energy %v", np, tc.energy)
			}
			short := o.shortEnergyWindows()
			if wantShort := tc.energy && !tc.want; (short != "") != wantShort || (wantShort && !strings.Contains(short, "no signature's own energy window was measured")) {
				t.Errorf("short windows %q; want one saying none was measured: %v", short, wantShort)
			}
		})
	}
}

// sigEnergyInput is the recorded decode's input (testdata/inference)
// with the signatures' own windows left out; keep says whether its
// entries keep the energies they measured (not to be taken).
func sigEnergyInput(t *testing.T, keep bool) InferenceInput {
	t.Helper()
	in, _, _ := recordedInput(t, filepath.Join("testdata", "inference", "inf-gpt2m-eager-decode-b1"))
	in.GraphLaunch = func(int) int64 { return 5000 }
	in.NoSignatureEnergy = true
	if !keep {
		for i := range in.Entries {
			in.Entries[i].Result.Energy = nil
		}
	}
	return in
}

// Without the signatures' own windows, an inference with a paced energy
// takes it in place: EnergyJ as PacedEnergy's formula, no isolated sum
// (IsolatedJ, KernelJ, WaitJ 0, not in its benchmark values), what-ifs
// without an energy, and the report, read back from the bench output,
// prints the in-place energy against the measured run and the isolated
// sum as not measured. Energies the entries carry are not taken.
func TestPredictInferenceSignatureEnergyOff(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("entries keep energy %v", keep), func(t *testing.T) {
			in := sigEnergyInput(t, keep)
			in.PowerLimitW = 1 // binds on any energy: not applied without the signatures' windows
			inf, err := PredictInference(in)
			if err != nil {
				t.Fatal(err)
			}
			if inf.PowerCapped {
				t.Error("the wall raised by the power limit without the signatures' energies")
			}
			if len(inf.WhatIfs) < 2 || inf.Tokens == 0 || !(inf.Constants.WaitPowerW > 0) {
				t.Fatalf("what-ifs %+v, %g tokens, %g W waiting: want the faster host and CUDA graphs, a decode, a waiting power", inf.WhatIfs, inf.Tokens, inf.Constants.WaitPowerW)
			}
			wantNone := "no paced timeline measured; " + NoSignatureWindows
			if inf.NoIsolated != NoSignatureWindows || inf.NoEnergy != wantNone || inf.EnergyDesign != EnergyNone || inf.EnergyJ != 0 || inf.KernelJ != 0 {
				t.Errorf("before the paced timeline: no isolated %q, no energy %q (want %q), design %q, %g J, kernels %g J",
					inf.NoIsolated, inf.NoEnergy, wantNone, inf.EnergyDesign, inf.EnergyJ, inf.KernelJ)
			}
			r := pacedWindow(9, 2, 20)
			if !PacedEnergy(inf, r) {
				t.Fatalf("the paced energy not taken: %q", inf.NoEnergy)
			}
			wantJ := 9 + inf.Constants.WaitPowerW*(inf.WallNS-100e6)/1e9
			if inf.EnergyDesign != EnergyInPlace || inf.NoEnergy != "" || inf.NotInPlace != "" || math.Abs(inf.EnergyJ-wantJ) > 1e-9 ||
				math.Abs(inf.JPerToken-wantJ/inf.Tokens) > 1e-12 || inf.PacedJ != 9 || inf.PacedWallNS != 100e6 {
				t.Errorf("design %q (no energy %q, %q): %g J (want %g), %g J/token, paced %g J over %g ns",
					inf.EnergyDesign, inf.NoEnergy, inf.NotInPlace, inf.EnergyJ, wantJ, inf.JPerToken, inf.PacedJ, inf.PacedWallNS)
			}
			if inf.IsolatedJ != 0 || inf.KernelJ != 0 || inf.WaitJ != 0 {
				t.Errorf("isolated %g J (kernels %g, waiting %g), want none", inf.IsolatedJ, inf.KernelJ, inf.WaitJ)
			}
			units := metricUnits(inf)
			for _, u := range []string{UnitIsolatedJ, UnitKernelJ, UnitWaitJ} {
				if _, ok := units[u]; ok {
					t.Errorf("metrics hold %s without the isolated design", u)
				}
			}
			for u, want := range map[string]float64{"J/op": inf.EnergyJ, UnitPacedJ: 9, UnitPacedWallNS: 100e6, UnitJPerToken: inf.JPerToken} {
				if got, ok := units[u]; !ok || got != want {
					t.Errorf("metrics: %s %g (present %v), want %g", u, got, ok, want)
				}
			}
			if s := inf.EnergyText(); !strings.HasSuffix(s, "; "+IsolatedNotMeasured) || strings.Contains(s, "not judged") ||
				!strings.HasPrefix(s, fmt.Sprintf("%.4g J in place", inf.EnergyJ)) {
				t.Errorf("energy text %q", s)
			}
			for _, w := range inf.WhatIfs {
				if s := inf.whatIfText(w); w.EnergyJ != 0 || !strings.HasSuffix(s, ", energy not measured") {
					t.Errorf("what-if %s: %g J, line %q", w.Name, w.EnergyJ, s)
				}
			}
			reportInPlaceNoIsolated(t, in.Set, inf)
		})
	}
}

// reportInPlaceNoIsolated writes inf's benchmark beside a model run of
// twice its energy, reads it back through Report and holds the report to
// the in-place energy judged against the run, the isolated sum not
// measured.
func reportInPlaceNoIsolated(t *testing.T, set *signatures.Set, inf *Inference) {
	t.Helper()
	written, ir := inferenceRoundTrip(t, set, inf, fmt.Sprintf("BenchmarkModel/workload=%s/model 1 %g ns/op %g J/op 16 tokens %g tpot-ns\n",
		bench.Workload(set.Source), inf.WallNS, 2*inf.EnergyJ, inf.TPOTNS))
	if strings.Contains(written, noEnergyTag) || strings.Contains(written, notInPlaceTag) {
		t.Errorf("an in-place inference written with a no-energy or isolated line:\n%s", written)
	}
	if ir.EnergyDesign != EnergyInPlace || ir.NoEnergy != "" || math.Abs(ir.EnergyJ-inf.EnergyJ) > 1e-6*inf.EnergyJ || ir.PassJ != 9 ||
		ir.IsolatedJ != 0 || ir.KernelJ != 0 || ir.ErrIsolated != nil || ir.ErrEnergy == nil || math.Abs(*ir.ErrEnergy+0.5) > 1e-6 {
		t.Errorf("read back: design %q (%q), %g J (want %g), pass %g J, isolated %g J (%v), kernels %g J, error %v",
			ir.EnergyDesign, ir.NoEnergy, ir.EnergyJ, inf.EnergyJ, ir.PassJ, ir.IsolatedJ, ir.ErrIsolated, ir.KernelJ, ir.ErrEnergy)
	}
	var text bytes.Buffer
	ir.writeText(&text)
	s := text.String()
	want := fmt.Sprintf("inference energy (predicted)\t%.4g J\tin place: the paced timeline's 9 J per pass", ir.EnergyJ)
	if !strings.Contains(s, want) || !strings.Contains(s, "; -50.0% vs the model; "+IsolatedNotMeasured+"\n") ||
		!strings.Contains(s, "energy per output token") || !strings.Contains(ir.Verdict, "energy MISSED") {
		t.Errorf("verdict %q, text:\n%s\nwant it to hold %q and the isolated sum not measured", ir.Verdict, s, want)
	}
}

// Without the signatures' own windows and without a paced energy, the
// inference has none, its reason naming both; the bench output's
// no-energy line carries it to the report.
func TestPredictInferenceSignatureEnergyNone(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(inf *Inference, progress *bytes.Buffer)
		why  string
	}{
		{name: "no paced timeline", set: func(inf *Inference, _ *bytes.Buffer) { PacedEnergy(inf, nil) }, why: "no paced timeline"},
		{name: "paced energy failed", set: func(inf *Inference, _ *bytes.Buffer) {
			PacedEnergy(inf, &replay.PacedResult{EnergyErr: "window too short"})
		}, why: "the paced timeline's energy: window too short"},
		{name: "no energy window", set: func(inf *Inference, _ *bytes.Buffer) { PacedEnergy(inf, &replay.PacedResult{}) },
			why: "the paced timeline measured no energy window"},
		{name: "in place not positive", set: func(inf *Inference, _ *bytes.Buffer) {
			PacedEnergy(inf, pacedWindow(1e-6, 1e3, 1))
		}, why: "is not positive"},
		{name: "the flow's fallback", set: func(inf *Inference, progress *bytes.Buffer) {
			(&FlowResult{Inference: inf}).energyNotInPlace("paced timeline: pacing: no such inference", progress)
		}, why: "paced timeline: pacing: no such inference"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := sigEnergyInput(t, false)
			inf, err := PredictInference(in)
			if err != nil {
				t.Fatal(err)
			}
			var progress bytes.Buffer
			tc.set(inf, &progress)
			if inf.EnergyDesign != EnergyNone || !strings.Contains(inf.NoEnergy, tc.why) || !strings.HasSuffix(inf.NoEnergy, "; "+NoSignatureWindows) ||
				inf.EnergyJ != 0 || inf.JPerToken != 0 || inf.IsolatedJ != 0 || inf.PacedJ != 0 || inf.NotInPlace != "" {
				t.Errorf("design %q, no energy %q (want %q and %q), %g J, %g J/token, isolated %g, paced %g, why %q",
					inf.EnergyDesign, inf.NoEnergy, tc.why, NoSignatureWindows, inf.EnergyJ, inf.JPerToken, inf.IsolatedJ, inf.PacedJ, inf.NotInPlace)
			}
			if progress.Len() > 0 && progress.String() != "inference energy: not measured: "+inf.NoEnergy+"\n" {
				t.Errorf("progress %q", progress.String())
			}
			units := metricUnits(inf)
			for _, u := range []string{"J/op", UnitKernelJ, UnitWaitJ, UnitJPerToken, UnitIsolatedJ, UnitPacedJ} {
				if _, ok := units[u]; ok {
					t.Errorf("metrics hold %s without an energy", u)
				}
			}
			if _, ir := inferenceRoundTrip(t, in.Set, inf, ""); ir.NoEnergy != inf.NoEnergy || ir.EnergyDesign != EnergyNone {
				t.Errorf("read back: %+v, want no energy %q", ir, inf.NoEnergy)
			}
		})
	}
}

// An inference whose signatures' windows were measured keeps the isolated
// sum beside the in-place energy, as before the mode existed.
func TestPredictInferenceSignatureEnergyOn(t *testing.T) {
	in := sigEnergyInput(t, true)
	in.NoSignatureEnergy = false
	inf, err := PredictInference(in)
	if err != nil {
		t.Fatal(err)
	}
	if !PacedEnergy(inf, pacedWindow(9, 2, 20)) || inf.NoIsolated != "" || !(inf.IsolatedJ > 0) || inf.IsolatedJ != inf.KernelJ+inf.WaitJ {
		t.Fatalf("design %q, no isolated %q, isolated %g J = kernels %g + waiting %g", inf.EnergyDesign, inf.NoIsolated, inf.IsolatedJ, inf.KernelJ, inf.WaitJ)
	}
	if _, ok := metricUnits(inf)[UnitIsolatedJ]; !ok || !strings.HasSuffix(inf.EnergyText(), "not judged") {
		t.Errorf("isolated-J/op present %v, energy text %q", ok, inf.EnergyText())
	}
}

// Without energies, no signature takes its replay's energy; with them,
// those measured do. Times are the replays' either way.
func TestReplayedOpsEnergies(t *testing.T) {
	in := sigEnergyInput(t, true)
	with, without := replayedOps(in.Set, in.Entries, true), replayedOps(in.Set, in.Entries, false)
	var joules float64
	for i := range with {
		joules += with[i].joules
		if without[i].joules != 0 || without[i].ns != with[i].ns || without[i].traced != with[i].traced {
			t.Errorf("signature %d: without energies %+v, with %+v", i, without[i], with[i])
		}
	}
	if !(joules > 0) {
		t.Errorf("with energies: %g J in all, want some", joules)
	}
}
