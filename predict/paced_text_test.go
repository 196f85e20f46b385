package predict

import (
	"strings"
	"testing"

	"github.com/kreplay/kreplay/energy"
	"github.com/kreplay/kreplay/replay"
)

// TestPacedText says the paced pass in one line: its wall, its energy and,
// where the sampler read it, the GPU's highest temperature in the window.
func TestPacedText(t *testing.T) {
	wall := replay.Spread{N: 5, MedianNS: 26.91e6, P10NS: 26.9e6, P90NS: 26.92e6}
	for _, tc := range []struct {
		name string
		r    *replay.PacedResult
		want []string
		not  string
	}{
		{"energy and temperature", &replay.PacedResult{Passes: 5, Wall: wall,
			Energy: &replay.Energy{JoulesPerOp: 16.27, GPU: energy.Summary{MaxTemperatureC: 47}}},
			[]string{"wall 26.91 ms (10-90% 26.9-26.92) over 5 passes", ", 16.27 J (GPU up to 47 C)"}, ""},
		{"energy, no temperature", &replay.PacedResult{Passes: 5, Wall: wall, Energy: &replay.Energy{JoulesPerOp: 16.27}},
			[]string{", 16.27 J"}, "GPU up to"},
		{"no energy", &replay.PacedResult{Passes: 5, Wall: wall, EnergyErr: "no meter"},
			[]string{"; no energy: no meter"}, " J"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := (&FlowResult{Paced: tc.r, PacedInference: 45}).pacedText()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("pacedText() = %q, want it to hold %q", got, w)
				}
			}
			if tc.not != "" && strings.Contains(got, tc.not) {
				t.Errorf("pacedText() = %q, want no %q", got, tc.not)
			}
		})
	}
}
