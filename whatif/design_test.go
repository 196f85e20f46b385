package whatif

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/errtest"
	"github.com/kreplay/kreplay/internal/traces"
	"github.com/kreplay/kreplay/workload"
)

// The timeline design's rule: the timeline check's time saving; the
// energy the measured run's mean power times it at the limit, else the
// timeline check's energy saving; a reason where it cannot be given.
func TestPredictTimelineDesign(t *testing.T) {
	// A timeline check: 3 ms saved, 2 J saved (17 J -> 15 J per launch).
	check := func(plainJ, substJ float64) *TimelineCheck {
		return &TimelineCheck{Rounds: make([]Round, 3), SavingNS: 3e6, PlainJ: plainJ, SubstJ: substJ, SavingJ: plainJ - substJ}
	}
	// 17.5 J in 25 ms: 700 W; 12.5 J in 25 ms: 500 W.
	atLimit, under := &ModelRun{WallS: 0.025, EnergyJ: 17.5, From: "u"}, &ModelRun{WallS: 0.025, EnergyJ: 12.5, From: "u"}
	for _, c := range []struct {
		name     string
		in       DesignInput
		err      string  // PredictTimelineDesign's error
		limited  bool    // PowerLimited
		rule     string  // EnergyRule, "" for no energy
		j        float64 // SavingJ
		noEnergy string  // in NoEnergy
	}{
		{name: "at the limit", in: DesignInput{Check: check(17, 15), Run: atLimit, PowerLimitW: 700},
			limited: true, rule: RulePowerLimited, j: 700 * 3e-3},
		// 665.2 W, just over 95% of 700 W (665 W): at the limit.
		{name: "just over 95% of it", in: DesignInput{Check: check(17, 15), Run: &ModelRun{WallS: 0.025, EnergyJ: 16.63}, PowerLimitW: 700},
			limited: true, rule: RulePowerLimited, j: 665.2 * 3e-3},
		// 664 W: just under.
		{name: "just under 95%", in: DesignInput{Check: check(17, 15), Run: &ModelRun{WallS: 0.025, EnergyJ: 16.6}, PowerLimitW: 700},
			rule: RuleTimelineEnergy, j: 2},
		{name: "at the limit, the timeline without energy", in: DesignInput{Check: check(0, 0), Run: atLimit, PowerLimitW: 700},
			limited: true, rule: RulePowerLimited, j: 2.1},
		{name: "under the limit", in: DesignInput{Check: check(17, 15), Run: under, PowerLimitW: 700},
			rule: RuleTimelineEnergy, j: 2},
		{name: "under the limit, the timeline without energy", in: DesignInput{Check: &TimelineCheck{Rounds: make([]Round, 3), SavingNS: 3e6,
			EnergyErr: "no NVML"}, Run: under, PowerLimitW: 700},
			noEnergy: "draws 500 W, under 95% of the 700 W limit, and the timeline check has no energy: no NVML"},
		{name: "no measured run", in: DesignInput{Check: check(17, 15), NoRun: "a trace, not a bundle", PowerLimitW: 700},
			noEnergy: "cannot tell whether the measured run is at the power limit: no measured run: a trace, not a bundle"},
		{name: "a measured run without energy", in: DesignInput{Check: check(17, 15), Run: &ModelRun{WallS: 0.025, From: "m.json"}, PowerLimitW: 700},
			noEnergy: "the measured run (m.json) has 0.025 s, 0 J per inference"},
		{name: "no limit", in: DesignInput{Check: check(17, 15), Run: atLimit},
			noEnergy: "the GPU's power limit is unknown"},
		{name: "no timeline", in: DesignInput{NoCheck: "skipped (-no-timeline)", Run: atLimit, PowerLimitW: 700},
			err: "the timeline check did not run: skipped (-no-timeline)"},
		{name: "no timeline, no reason", in: DesignInput{Run: atLimit, PowerLimitW: 700},
			err: "the timeline check did not run: none given"},
		{name: "no rounds", in: DesignInput{Check: &TimelineCheck{}, Run: atLimit, PowerLimitW: 700},
			err: "the timeline check has no rounds"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := PredictTimelineDesign(c.in)
			if !errtest.Check(t, c.name, err, c.err) {
				return
			}
			if d.SavingNS != 3e6 || d.PowerLimited != c.limited || d.EnergyRule != c.rule || d.Energy != (c.rule != "") ||
				math.Abs(d.SavingJ-c.j) > 1e-9 {
				t.Errorf("saving %g ns, %g J by %q (energy %v), power-limited %v; want 3e6 ns, %g J by %q, %v",
					d.SavingNS, d.SavingJ, d.EnergyRule, d.Energy, d.PowerLimited, c.j, c.rule, c.limited)
			}
			if c.noEnergy != "" && !strings.Contains(d.NoEnergy, c.noEnergy) || c.noEnergy == "" && d.NoEnergy != "" {
				t.Errorf("no energy %q, want it to hold %q", d.NoEnergy, c.noEnergy)
			}
			if tj := c.in.Check.PlainJ > 0; tj != (d.TimelineSavingJ == 2) {
				t.Errorf("timeline saving %g J beside, with the timeline's energies %v", d.TimelineSavingJ, tj)
			}
		})
	}
}

// The design on a recorded what-if (the H100 Llama-7B prefill with
// -again: its timeline check measured energies, its baseline has the
// 700 W power-limit line) and the measured run of the embedded bundle it
// was made from: 42.44 J in 62.37 ms, 680 W, at the limit.
func TestTimelineDesignRecorded(t *testing.T) {
	r := readResult(t, "h100-llama-7b_prefill.again.json")
	fsys, err := traces.Bundle("h100_llama-7b_prefill")
	if err != nil {
		t.Fatal(err)
	}
	b, err := workload.OpenBundle(fsys, "embedded:h100_llama-7b_prefill")
	if err != nil {
		t.Fatal(err)
	}
	run, err := ModelRunFromBundle(b, llamaSet(t))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(run.From, "measured.json") || run.WallS <= 0 {
		t.Errorf("measured run %+v", run)
	}
	d, err := PredictTimelineDesign(DesignInput{Check: r.Timeline, Run: run, PowerLimitW: r.Baseline.PowerLimitW, PowerLimitFrom: r.Baseline.PowerLimitFrom})
	if err != nil {
		t.Fatal(err)
	}
	// 42.4397 J / 62.3727 ms = 680.42 W; x the recorded 6.7987 ms saving = 4.6260 J.
	if !d.PowerLimited || d.SavingNS != r.Timeline.SavingNS || math.Abs(d.MeanPowerW-680.42) > 0.01 || math.Abs(d.SavingJ-4.6260) > 1e-3 {
		t.Errorf("power-limited %v at %.2f W, saving %.4f ms, %.4f J; want at 680.42 W, %.4f ms, 4.6260 J",
			d.PowerLimited, d.MeanPowerW, d.SavingNS/1e6, d.SavingJ, r.Timeline.SavingNS/1e6)
	}
	if math.Abs(d.TimelineSavingJ-r.Timeline.SavingJ) > 1e-12 {
		t.Errorf("the timeline's energy saving beside: %g J, recorded %g", d.TimelineSavingJ, r.Timeline.SavingJ)
	}
	p := *r.Prediction
	p.TimelineDesign = d
	var buf bytes.Buffer
	p.writeTimelineDesign(&errWriter{w: &buf})
	want := "timeline design: saving 6.799ms, 4.626 J per inference (time: the timeline check's measured saving; energy: " +
		RulePowerLimited + ", the measured run's 680 W at or above 95% of the 700 W limit (the power-limit line of /root/out/r/llama.bench))"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("report:\n%s\nwant %q", buf.String(), want)
	}
	// Without a bundle's run the rule cannot tell its branch: no energy, said.
	d, err = PredictTimelineDesign(DesignInput{Check: r.Timeline, NoRun: "the input is a trace", PowerLimitW: 700})
	if err != nil || d.Energy || !strings.Contains(d.NoEnergy, "the input is a trace") {
		t.Errorf("without a measured run: %+v, %v", d, err)
	}
}

// The report line where the design gives no energy, and where it gives
// nothing.
func TestWriteTimelineDesign(t *testing.T) {
	for _, c := range []struct {
		p    Prediction
		want string
	}{
		{Prediction{TimelineDesign: &TimelineDesign{SavingNS: 3e6, NoEnergy: "why"}},
			"  timeline design: saving 3.000ms per inference (time: the timeline check's measured saving); energy not given: why\n"},
		{Prediction{TimelineDesignErr: "the timeline check did not run: x"}, "  timeline design: not given: the timeline check did not run: x\n"},
		{Prediction{TimelineDesign: &TimelineDesign{SavingNS: 3e6, Energy: true, SavingJ: 2, EnergyRule: RuleTimelineEnergy, MeanPowerW: 500,
			PowerLimitW: 700, PowerLimitFrom: "the device (NVML)"}},
			"  timeline design: saving 3.000ms, 2.000 J per inference (time: the timeline check's measured saving; energy: timeline energy, " +
				"the measured run's 500 W under 95% of the 700 W limit (the device (NVML)))\n"},
		{Prediction{}, ""},
	} {
		var b bytes.Buffer
		c.p.writeTimelineDesign(&errWriter{w: &b})
		if b.String() != c.want {
			t.Errorf("got %q\nwant %q", b.String(), c.want)
		}
	}
}
