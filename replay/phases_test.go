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
