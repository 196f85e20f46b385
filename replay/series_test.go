package replay

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kreplay/kreplay/energy"
)

func TestLaunchSeries(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC)
	ms := func(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Millisecond))) }
	st := func(at float64, w float64, mhz uint32) energy.State {
		return energy.State{Time: ms(at), PowerW: w, SMClockMHz: mhz}
	}
	spans := []span{{ms(0), ms(25)}, {ms(30), ms(55)}, {ms(60), ms(62)}}
	values := []float64{24e6, 25e6, 2e6}
	for _, tc := range []struct {
		name   string
		values []float64
		spans  []span
		states []energy.State
		want   []LaunchSample
	}{
		{name: "no samples"},
		{name: "misaligned", values: values, spans: spans[:2]},
		{name: "no NVML", values: values, spans: spans, want: []LaunchSample{{0, 24e6, 0, 0}, {30, 25e6, 0, 0}, {60, 2e6, 0, 0}}},
		{
			// States before the first span and in the gaps between
			// spans count for none; one on a span's end counts; the
			// last span holds none.
			name: "states", values: values, spans: spans,
			states: []energy.State{st(-5, 100, 1980), st(5, 690, 1600), st(15, 700, 1700), st(28, 300, 1980), st(55, 680, 1500)},
			want:   []LaunchSample{{0, 24e6, 1650, 695}, {30, 25e6, 1500, 680}, {60, 2e6, 0, 0}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := launchSeries(tc.values, tc.spans, tc.states)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("launchSeries (-want +got):\n%s", diff)
			}
		})
	}
}
