package signatures

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
)

// Invocation is one GPU activity of the trace, in start order.
type Invocation struct {
	Sig    int   // index into Set.Signatures
	Device int64 // -1 when the trace does not say
	Stream int64 // -1 when the trace does not say
	Start  int64 // ns on the trace's clock
	Dur    int64 // ns
}

// Timeline is the ordered invocation sequence of a trace. It is encoded in
// JSON as parallel arrays, which keeps large traces' sets small.
type Timeline []Invocation

type timelineJSON struct {
	Sig     []int   `json:"sig"`
	Device  []int64 `json:"device"`
	Stream  []int64 `json:"stream"`
	StartNS []int64 `json:"start_ns"`
	DurNS   []int64 `json:"dur_ns"`
}

// MarshalJSON encodes the timeline as parallel arrays.
func (t Timeline) MarshalJSON() ([]byte, error) {
	j := timelineJSON{
		Sig: make([]int, len(t)), Device: make([]int64, len(t)), Stream: make([]int64, len(t)),
		StartNS: make([]int64, len(t)), DurNS: make([]int64, len(t)),
	}
	for i, v := range t {
		j.Sig[i], j.Device[i], j.Stream[i], j.StartNS[i], j.DurNS[i] = v.Sig, v.Device, v.Stream, v.Start, v.Dur
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes the parallel-array form.
func (t *Timeline) UnmarshalJSON(b []byte) error {
	var j timelineJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	n := len(j.Sig)
	if len(j.Device) != n || len(j.Stream) != n || len(j.StartNS) != n || len(j.DurNS) != n {
		return fmt.Errorf("timeline arrays differ in length")
	}
	*t = make(Timeline, n)
	for i := range *t {
		(*t)[i] = Invocation{Sig: j.Sig[i], Device: j.Device[i], Stream: j.Stream[i], Start: j.StartNS[i], Dur: j.DurNS[i]}
	}
	return nil
}

// DeviceSummary is the busy and idle time of one GPU over a trace.
type DeviceSummary struct {
	Device int64 `json:"device"`
	// Activities is the number of GPU activities on the device.
	Activities int `json:"activities"`
	// WallNS is the span from the first activity's start to the last end.
	WallNS int64 `json:"wall_ns"`
	// BusyNS is the union of the activities' intervals.
	BusyNS int64 `json:"busy_ns"`
	// IdleNS is WallNS - BusyNS.
	IdleNS int64 `json:"idle_ns"`
	// BusyFraction is BusyNS / WallNS.
	BusyFraction float64 `json:"busy_fraction"`
	// KernelNS is the sum of activity durations (larger than BusyNS when
	// streams overlap).
	KernelNS int64 `json:"kernel_ns"`
}

// Summarize computes the per-device busy and idle time of a timeline.
func Summarize(t Timeline) []DeviceSummary {
	byDev := map[int64][][2]int64{}
	for _, v := range t {
		byDev[v.Device] = append(byDev[v.Device], [2]int64{v.Start, v.Start + v.Dur})
	}
	devs := make([]int64, 0, len(byDev))
	for d := range byDev {
		devs = append(devs, d)
	}
	slices.Sort(devs)
	out := make([]DeviceSummary, 0, len(devs))
	for _, d := range devs {
		iv := byDev[d]
		sort.Slice(iv, func(i, j int) bool { return iv[i][0] < iv[j][0] })
		s := DeviceSummary{Device: d, Activities: len(iv)}
		first, last := iv[0][0], iv[0][1]
		curS, curE := iv[0][0], iv[0][1]
		for _, x := range iv {
			s.KernelNS += x[1] - x[0]
			last = max(last, x[1])
			if x[0] > curE {
				s.BusyNS += curE - curS
				curS, curE = x[0], x[1]
			} else {
				curE = max(curE, x[1])
			}
		}
		s.BusyNS += curE - curS
		s.WallNS = last - first
		s.IdleNS = s.WallNS - s.BusyNS
		if s.WallNS > 0 {
			s.BusyFraction = float64(s.BusyNS) / float64(s.WallNS)
		}
		out = append(out, s)
	}
	return out
}
