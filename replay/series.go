package replay

import (
	"time"

	"github.com/kreplay/kreplay/energy"
)

// LaunchSample is one timed launch of a timeline, in the order taken: when
// it began (AtMS, milliseconds after the first timed launch began), its
// time (CUDA events), and NVML's SM clock and board power averaged over
// the states sampled while it ran (0 where none fell within it, or
// without NVML). At the power cap the series shows the limiter's clock
// settling after a switch from another workload, and its swings.
type LaunchSample struct {
	AtMS float64 `json:"at_ms"`
	NS   float64 `json:"ns"`
	MHz  float64 `json:"mhz,omitempty"`
	W    float64 `json:"w,omitempty"`
}

// launchSeries pairs the samples' times with their spans and the NVML
// states taken during them. values and spans are index-aligned; states
// are in time order.
func launchSeries(values []float64, spans []span, states []energy.State) []LaunchSample {
	if len(values) == 0 || len(spans) != len(values) {
		return nil
	}
	out := make([]LaunchSample, len(values))
	t0 := spans[0].start
	j := 0
	for i, sp := range spans {
		out[i] = LaunchSample{AtMS: float64(sp.start.Sub(t0)) / float64(time.Millisecond), NS: values[i]}
		for j < len(states) && states[j].Time.Before(sp.start) {
			j++
		}
		var mhz, w float64
		var nc, nw int
		for k := j; k < len(states) && !states[k].Time.After(sp.end); k++ {
			if c := states[k].SMClockMHz; c > 0 {
				mhz += float64(c)
				nc++
			}
			if p := states[k].PowerW; p > 0 {
				w += p
				nw++
			}
		}
		if nc > 0 {
			out[i].MHz = mhz / float64(nc)
		}
		if nw > 0 {
			out[i].W = w / float64(nw)
		}
	}
	return out
}
