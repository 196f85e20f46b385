package whatif

import (
	"testing"
	"time"

	"github.com/kreplay/kreplay/replay"
)

func TestOptionsDefaults(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        Options
		rounds    int
		warmup    time.Duration
		budget    time.Duration
		tolerance float64
	}{
		{"zero", Options{}, 3, DefaultSettle, 3 * time.Second, DefaultTolerance},
		{"given", Options{Rounds: 9, Tolerance: 0.5}, 9, DefaultSettle, 3 * time.Second, 0.5},
		{"settle given", Options{Timeline: replay.Options{Warmup: 20 * time.Millisecond, Budget: time.Second}}, 3, 20 * time.Millisecond, time.Second, DefaultTolerance},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.in
			o.defaults()
			if o.Rounds != tc.rounds || o.Timeline.Warmup != tc.warmup || o.Timeline.Budget != tc.budget || o.Tolerance != tc.tolerance {
				t.Errorf("defaults: rounds %d, warm-up %v, budget %v, tolerance %g; want %d, %v, %v, %g",
					o.Rounds, o.Timeline.Warmup, o.Timeline.Budget, o.Tolerance, tc.rounds, tc.warmup, tc.budget, tc.tolerance)
			}
			if o.Progress == nil {
				t.Error("defaults left Progress nil")
			}
		})
	}
}
