package replay

import (
	"math"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/energy"
)

func TestEnergyOf(t *testing.T) {
	tests := []struct {
		name  string
		rd    energy.Reading
		batch int
		want  Energy
	}{
		{"counter", energy.Reading{Method: energy.MethodEnergyCounter, Joules: 100, Seconds: 10, Watts: 10, Ticks: 100, TickEnergyShare: 0.01, Calls: 2000},
			50, Energy{JoulesPerOp: 0.001, Watts: 10, Seconds: 10, Ops: 100000, Ticks: 100, TickShare: 0.01, Method: "energy-counter"}},
		{"no calls", energy.Reading{Method: energy.MethodPowerIntegral, Joules: 5, Seconds: 1, Watts: 5, Ticks: 9},
			10, Energy{Watts: 5, Seconds: 1, Ticks: 9, Method: "power-integral"}},
	}
	for _, tt := range tests {
		if got := energyOf(tt.rd, tt.batch); got != tt.want {
			t.Errorf("%s: energyOf = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestSumEnergy(t *testing.T) {
	a := Energy{JoulesPerOp: 0.002, Watts: 300, Seconds: 1.01, Ops: 500, Ticks: 10, TickShare: 0.1, Method: "energy-counter"}
	b := Energy{JoulesPerOp: 0.003, Watts: 350, Seconds: 1.10, Ops: 480, Ticks: 11, TickShare: 1.0 / 11, Method: "energy-counter", Throttled: true}
	c := b
	c.Method = "power-integral"
	tests := []struct {
		name string
		in   []Energy
		want *Energy
	}{
		{"none", nil, nil},
		{"one", []Energy{a}, &Energy{JoulesPerOp: 0.002, Watts: 300, Seconds: 1.01, Ops: 500, Ticks: 10, TickShare: 0.1, Method: "energy-counter", GPUs: 1}},
		{"two", []Energy{a, b}, &Energy{JoulesPerOp: 0.005, Watts: 650, Seconds: 1.10, Ops: 480, Ticks: 10, TickShare: 0.1, Method: "energy-counter", Throttled: true, GPUs: 2}},
		{"mixed", []Energy{a, c}, &Energy{JoulesPerOp: 0.005, Watts: 650, Seconds: 1.10, Ops: 480, Ticks: 10, TickShare: 0.1, Method: "mixed", Throttled: true, GPUs: 2}},
	}
	for _, tt := range tests {
		got := sumEnergy(tt.in)
		if (got == nil) != (tt.want == nil) {
			t.Errorf("%s: sumEnergy = %+v, want %+v", tt.name, got, tt.want)
			continue
		}
		if got == nil {
			continue
		}
		if math.Abs(got.JoulesPerOp-tt.want.JoulesPerOp) > 1e-12 {
			t.Errorf("%s: JoulesPerOp %v, want %v", tt.name, got.JoulesPerOp, tt.want.JoulesPerOp)
		}
		got.JoulesPerOp = tt.want.JoulesPerOp
		if *got != *tt.want {
			t.Errorf("%s: sumEnergy = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// Unmeasured entries get their class's power times their time; a class
// without a measured entry takes every measured entry's power; an
// interpolated energy is not a measured one.
func TestEstimateEnergy(t *testing.T) {
	measured := func(j, ns float64) *Result {
		return &Result{Stats: Stats{MedianNS: ns}, Energy: &Energy{JoulesPerOp: j, Method: "energy-counter"}}
	}
	entries := []Entry{
		{ID: "a", Class: "gemm", Count: 10, Result: measured(0.7, 1e6)},         // 700 W
		{ID: "b", Class: "elementwise", Count: 30, Result: measured(4e-3, 1e4)}, // 400 W
		{ID: "c", Class: "elementwise", Count: 10, Result: measured(2e-3, 1e4)}, // 200 W
		// Interpolated between a family's members: not a measured power.
		{ID: "i", Class: "elementwise", Count: 50, Result: measured(0.1, 1e4), Interpolated: "from 5 members"}, // 10 kW
		{ID: "d", Class: "elementwise", Count: 5, Result: &Result{Stats: Stats{MedianNS: 2e4}}},
		{ID: "e", Class: "copy", Count: 1, Result: &Result{Stats: Stats{MedianNS: 1e4}}},
		{ID: "f", Class: "copy", Count: 1}, // not measured at all
	}
	if n := EstimateEnergy(entries); n != 2 {
		t.Fatalf("estimated %d, want 2", n)
	}
	// elementwise: (30*4e-3 + 10*2e-3) J over (40*1e4 ns) = 350 W.
	if got := entries[4].Result.Energy; got.Method != EstimatedMethod || math.Abs(got.JoulesPerOp-350*2e-5) > 1e-12 ||
		!strings.Contains(got.Estimated, "class elementwise") {
		t.Errorf("d: %+v", got)
	}
	// every class: (7 + 0.12 + 0.02) J over (1e-2 + 4e-4) s.
	if got, want := entries[5].Result.Energy.Watts, 7.14/1.04e-2; math.Abs(got-want) > 1e-9 {
		t.Errorf("e: %g W, want %g", got, want)
	}
	if entries[6].Result != nil || entries[0].Result.Energy.Method != "energy-counter" {
		t.Errorf("touched what it should not: %+v %+v", entries[6].Result, entries[0].Result.Energy)
	}
	if n := EstimateEnergy([]Entry{{Result: &Result{Stats: Stats{MedianNS: 1}}}}); n != 0 {
		t.Errorf("nothing measured: estimated %d", n)
	}
}
