package replay

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/kreplay/kreplay/captured"
)

func TestPhaseLine(t *testing.T) {
	ms := int64(1e6)
	measured := func(prep, meas, cl, energy int64) Entry {
		return Entry{Phases: &Phases{PrepareNS: prep * ms, MeasureNS: meas * ms, CloseNS: cl * ms}, Result: &Result{EnergyHostNS: energy * ms}}
	}
	// capturedOne is a captured binary's entry: 300 ms preparing, of which
	// files, modules, memory and first launches took these, over kernels.
	capturedOne := func(files, modules, memory, launches int64, kernels int) Entry {
		e := measured(300, 100, 10, 50)
		e.Phases.PrepareFilesNS, e.Phases.PrepareModulesNS = files*ms, modules*ms
		e.Phases.PrepareMemoryNS, e.Phases.PrepareLaunchesNS, e.Phases.PrepareKernels = memory*ms, launches*ms, kernels
		return e
	}
	// timedOne is a measurement of 200 ms whose timed side took these
	// parts (ms), over 40 samples timed 10 ms on the GPU and 9 flushes.
	timedOne := func(pause, warmup, graphs, sampling, cupti, nvml int64) Entry {
		e := measured(20, 200, 1, 0)
		p := e.Phases
		p.MeasurePauseNS, p.MeasureWarmupNS, p.MeasureGraphsNS = pause*ms, warmup*ms, graphs*ms
		p.MeasureSamplingNS, p.MeasureCUPTINS, p.MeasureNVMLNS = sampling*ms, cupti*ms, nvml*ms
		p.MeasureSamples, p.MeasureTimedNS, p.MeasureFlushes = 40, 10*ms, 9
		return e
	}
	paused := func(e Entry) Entry {
		e.Phases.MeasurePauses = 1
		return e
	}
	withSwitch := func(e Entry, switchMS int64) Entry {
		e.Phases.MeasureCUPTISwitchNS = switchMS * ms
		return e
	}
	waited := func(e Entry, waitMS int64) Entry {
		e.Phases.MeasureCUPTIWaitNS = waitMS * ms
		return e
	}
	// energyOne is timedOne(50, 20, 0, 60, 10, 0) measured 1 s more for
	// its energy: graphs 20 ms, one window of warm-up 300 ms, first tick
	// 50, 600 between its ticks and 10 after.
	energyOne := func() Entry {
		e := timedOne(50, 20, 0, 60, 10, 0)
		e.Phases.MeasureNS += 1000 * ms
		e.Result.EnergyHostNS = 1000 * ms
		p := e.Phases
		p.EnergyGraphsNS, p.EnergyWarmupNS, p.EnergyFirstTickNS, p.EnergyWindowNS, p.EnergyAfterNS = 20*ms, 300*ms, 50*ms, 600*ms, 10*ms
		p.EnergyWindows = 1
		return e
	}
	dutyOne := func() Entry {
		e := energyOne()
		e.Phases.MeasureNS += 3000 * ms
		e.Result.EnergyHostNS += 3000 * ms
		e.Phases.EnergyDutyNS, e.Phases.EnergyDutyWindows = 2990*ms, 3
		return e
	}
	for _, c := range []struct {
		name string
		out  []Entry
		want string
	}{
		{"none measured", []Entry{{Err: "left out"}, {Result: &Result{EnergyHostNS: 5 * ms}}}, ""},
		{"two measured, one reused", []Entry{measured(300, 100, 20, 0), measured(100, 500, 0, 400), {Result: &Result{EnergyHostNS: 9 * ms}}},
			"time over the signatures replayed here (2): 510ms each; preparing 400ms, measuring 600ms (400ms of it energy), releasing 20ms"},
		{"failed in measure", []Entry{{Err: "measure: x", Phases: &Phases{PrepareNS: 30 * ms, MeasureNS: 10 * ms}}},
			"time over the signatures replayed here (1): 40ms each; preparing 30ms, measuring 10ms (0s of it energy), releasing 0s"},
		{"captured binaries, parts add up", []Entry{capturedOne(120, 20, 100, 30, 9), capturedOne(80, 0, 150, 40, 18)},
			"time over the signatures replayed here (2): 410ms each; preparing 600ms (files 200ms, modules 20ms, memory 250ms, first launches 70ms, other 60ms; captured kernels built 27), measuring 200ms (100ms of it energy), releasing 20ms"},
		{"captured beside a tier's, whose preparing is other", []Entry{capturedOne(100, 50, 100, 40, 1), measured(200, 0, 0, 0)},
			"time over the signatures replayed here (2): 310ms each; preparing 500ms (files 100ms, modules 50ms, memory 100ms, first launches 40ms, other 210ms; captured kernels built 1), measuring 100ms (50ms of it energy), releasing 10ms"},
		{"parts over the total (clock skew) leave no negative other", []Entry{capturedOne(200, 0, 150, 0, 2)},
			"time over the signatures replayed here (1): 410ms each; preparing 300ms (files 200ms, modules 0s, memory 150ms, first launches 0s, other 0s; captured kernels built 2), measuring 100ms (50ms of it energy), releasing 10ms"},
		{"timed parts add up, the rest is other", []Entry{withSwitch(timedOne(50, 20, 10, 100, 20, 0), 10), timedOne(50, 30, 0, 90, 10, 0)},
			"time over the signatures replayed here (2): 220ms each; preparing 40ms, measuring 400ms (pause 100ms, warm-up 50ms, graphs 10ms, sampling 190ms (20ms timed on the GPU over 80 samples), CUPTI flushes 30ms (18), CUPTI on and off 10ms, NVML sampler 0s, clock probe 0s, other 10ms; 0s of it energy), releasing 0s"},
		{"a GPU of a group waited for another's CUPTI recording", []Entry{waited(timedOne(50, 20, 10, 100, 20, 0), 40)},
			"time over the signatures replayed here (1): 220ms each; preparing 20ms, measuring 200ms (pause 50ms, warm-up 20ms, graphs 10ms, sampling 100ms (10ms timed on the GPU over 40 samples), CUPTI flushes 20ms (9), CUPTI on and off 0s, waiting for another GPU's CUPTI recording 40ms, NVML sampler 0s, clock probe 0s, other 0s; 0s of it energy), releasing 0s"},
		{"the parts are rounded to 10 ms, the other left from the unrounded", []Entry{timedOne(50, 20, 4, 100, 16, 4)},
			"time over the signatures replayed here (1): 220ms each; preparing 20ms, measuring 200ms (pause 50ms, warm-up 20ms, graphs 0s, sampling 100ms (10ms timed on the GPU over 40 samples), CUPTI flushes 20ms (9), CUPTI on and off 0s, NVML sampler 0s, clock probe 0s, other 10ms; 0s of it energy), releasing 0s"},
		{"timed parts over the total leave no negative other", []Entry{timedOne(50, 50, 0, 100, 30, 0)},
			"time over the signatures replayed here (1): 220ms each; preparing 20ms, measuring 200ms (pause 50ms, warm-up 50ms, graphs 0s, sampling 100ms (10ms timed on the GPU over 40 samples), CUPTI flushes 30ms (9), CUPTI on and off 0s, NVML sampler 0s, clock probe 0s, other 0s; 0s of it energy), releasing 0s"},
		{"pauses counted: those taken of the signatures", []Entry{paused(timedOne(50, 20, 0, 100, 20, 0)), timedOne(0, 20, 0, 110, 10, 0), paused(timedOne(50, 20, 0, 100, 20, 0))},
			"time over the signatures replayed here (3): 220ms each; preparing 60ms, measuring 600ms (pause 100ms (2 of 3), warm-up 60ms, graphs 0s, sampling 310ms (30ms timed on the GPU over 120 samples), CUPTI flushes 50ms (27), CUPTI on and off 0s, NVML sampler 0s, clock probe 0s, other 80ms; 0s of it energy), releasing 0s"},
		{"energy windows beside a timed-only one", []Entry{energyOne(), timedOne(50, 20, 0, 60, 10, 0)},
			"time over the signatures replayed here (2): 720ms each; preparing 40ms, measuring 1.4s (pause 100ms, warm-up 40ms, graphs 0s, sampling 120ms (20ms timed on the GPU over 80 samples), CUPTI flushes 20ms (18), CUPTI on and off 0s, NVML sampler 0s, clock probe 0s, other 120ms; " +
				"1s of it energy: graphs 20ms, windows 960ms (1: warm-up 300ms, first tick 50ms, between ticks 600ms, after the last tick 10ms), duty-cycled again 0s (0 windows), other 20ms), releasing 0s"},
		{"a capped window measured again duty-cycled", []Entry{dutyOne()},
			"time over the signatures replayed here (1): 4.22s each; preparing 20ms, measuring 4.2s (pause 50ms, warm-up 20ms, graphs 0s, sampling 60ms (10ms timed on the GPU over 40 samples), CUPTI flushes 10ms (9), CUPTI on and off 0s, NVML sampler 0s, clock probe 0s, other 60ms; " +
				"4s of it energy: graphs 20ms, windows 960ms (1: warm-up 300ms, first tick 50ms, between ticks 600ms, after the last tick 10ms), duty-cycled again 2.99s (3 windows), other 30ms), releasing 0s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := phaseLine(c.out); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

// setPrepare takes the parts from a captured.Timing; the JSON leaves them
// out for a signature that has none.
func TestPhasesSetPrepare(t *testing.T) {
	var p Phases
	p.setPrepare(time.Second, &captured.Timing{Files: 1, Modules: 2, Memory: 3, Launches: 4, Kernels: 5})
	want := Phases{PrepareNS: 1e9, PrepareFilesNS: 1, PrepareModulesNS: 2, PrepareMemoryNS: 3, PrepareLaunchesNS: 4, PrepareKernels: 5}
	if p != want {
		t.Errorf("got %+v, want %+v", p, want)
	}
	var plain Phases
	plain.setPrepare(time.Millisecond, &captured.Timing{})
	b, err := json.Marshal(plain)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"prepare_ns":1000000,"measure_ns":0,"close_ns":0}`; got != want {
		t.Errorf("JSON %s, want %s", got, want)
	}
}

// setMeasure takes the parts from a measureTiming; the JSON leaves them
// out for a measurement that has none.
func TestPhasesSetMeasure(t *testing.T) {
	m := measureTiming{pause: 1, warmup: 2, graphs: 3, sampling: 4, cupti: 5, nvml: 6, probe: 7, samples: 8, flushes: 9, timed: 10, cuptiSwitch: 19, pauses: 1,
		energy: energyTiming{graphs: 11, warmup: 12, firstTick: 13, window: 14, after: 15, duty: 16, windows: 17, dutyWindows: 18}}
	var p Phases
	p.setMeasure(time.Second, &m)
	want := Phases{MeasureNS: 1e9, MeasurePauseNS: 1, MeasureWarmupNS: 2, MeasureGraphsNS: 3, MeasureSamplingNS: 4, MeasureCUPTINS: 5,
		MeasureNVMLNS: 6, MeasureProbeNS: 7, MeasureSamples: 8, MeasureFlushes: 9, MeasureTimedNS: 10, MeasureCUPTISwitchNS: 19, MeasurePauses: 1,
		EnergyGraphsNS: 11, EnergyWarmupNS: 12, EnergyFirstTickNS: 13, EnergyWindowNS: 14, EnergyAfterNS: 15, EnergyDutyNS: 16,
		EnergyWindows: 17, EnergyDutyWindows: 18}
	if p != want {
		t.Errorf("got %+v, want %+v", p, want)
	}
	var sum Phases
	sum.add(&p)
	sum.add(&p)
	if sum.MeasureNS != 2e9 || sum.MeasureFlushes != 18 || sum.MeasurePauses != 2 || sum.MeasureCUPTISwitchNS != 38 || sum.EnergyDutyWindows != 36 || sum.EnergyAfterNS != 30 {
		t.Errorf("add twice: %+v", sum)
	}
	var plain Phases
	plain.setMeasure(time.Millisecond, &measureTiming{})
	b, err := json.Marshal(plain)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"prepare_ns":0,"measure_ns":1000000,"close_ns":0}`; got != want {
		t.Errorf("JSON %s, want %s", got, want)
	}
}
