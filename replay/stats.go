package replay

import "slices"

// Stats are the statistics of a measurement's samples: times per
// invocation (or per call, or per timeline), in nanoseconds.
type Stats struct {
	// MedianNS, MeanNS, MinNS and MaxNS are of the samples.
	MedianNS float64 `json:"median_ns"`
	MeanNS   float64 `json:"mean_ns"`
	MinNS    float64 `json:"min_ns"`
	MaxNS    float64 `json:"max_ns"`
	// LoNS and HiNS bound the median with the measurement's confidence.
	LoNS float64 `json:"lo_ns"`
	HiNS float64 `json:"hi_ns"`
	// RelCI is the larger half-width of the median's interval over the
	// median (+Inf when too few samples bound it). A Result's is of the
	// value it reports (Result.ReportedNS).
	RelCI float64 `json:"rel_ci"`
}

// statsOf summarizes values with an interval of the median at the given
// confidence; the zero Stats for none.
func statsOf(values []float64, confidence float64) Stats {
	if len(values) == 0 {
		return Stats{}
	}
	sum := summarize(values, confidence)
	var tot float64
	for _, v := range values {
		tot += v
	}
	return Stats{MedianNS: sum.Center, LoNS: sum.Lo, HiNS: sum.Hi, RelCI: relCI(sum),
		MinNS: slices.Min(values), MaxNS: slices.Max(values), MeanNS: tot / float64(len(values))}
}
