package replay

import "testing"

func TestPhaseLine(t *testing.T) {
	ms := int64(1e6)
	measured := func(prep, meas, cl, energy int64) Entry {
		return Entry{Phases: &Phases{PrepareNS: prep * ms, MeasureNS: meas * ms, CloseNS: cl * ms}, Result: &Result{EnergyHostNS: energy * ms}}
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
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := phaseLine(c.out); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}
