package replay

import (
	"math"
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
