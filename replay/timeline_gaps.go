package replay

import (
	"cmp"
	"slices"

	"github.com/kreplay/kreplay/internal/cupti"
)

// TimelineGaps is where a timeline launch's time goes, as CUPTI recorded
// the graph's activities (kernels, copies, memsets) over a few launches:
// the span from the first activity's start to the last one's end, the
// time some activity ran (busy: the union of their intervals), and the
// idle gaps between them, which the graph itself leaves between its nodes
// and which a trace's busy time does not count. The figures are of the
// launch of median span (SpanNS = BusyNS + GapNS), but MedianGapNS, over
// every gap of every launch; CUPTI's own cost is in them.
type TimelineGaps struct {
	Launches int `json:"launches"`
	// Activities is the activities of one launch.
	Activities int     `json:"activities"`
	SpanNS     float64 `json:"span_ns"`
	BusyNS     float64 `json:"busy_ns"`
	// GapNS is SpanNS - BusyNS; Gaps the idle intervals in the launch and
	// MedianGapNS the median of their lengths over every launch.
	GapNS       float64 `json:"gap_ns"`
	Gaps        int     `json:"gaps"`
	MedianGapNS float64 `json:"median_gap_ns"`
}

// interval is one activity's [start, end) on the GPU's clock, in ns.
type interval struct{ start, end uint64 }

// gapsOf summarises the activities of each launch (one slice a launch);
// nil when no launch has any.
func gapsOf(launches [][]interval) *TimelineGaps {
	var each []TimelineGaps
	var all []float64
	for _, l := range launches {
		if len(l) == 0 {
			continue
		}
		g, gaps := launchGaps(l)
		each = append(each, g)
		all = append(all, gaps...)
	}
	if len(each) == 0 {
		return nil
	}
	slices.SortStableFunc(each, func(a, b TimelineGaps) int { return cmp.Compare(a.SpanNS, b.SpanNS) })
	g := each[len(each)/2]
	g.Launches, g.MedianGapNS = len(each), medianOf(all)
	return &g
}

// launchGaps is one launch's split, and the length of each of its gaps.
func launchGaps(l []interval) (TimelineGaps, []float64) {
	l = slices.Clone(l)
	slices.SortFunc(l, func(a, b interval) int { return cmp.Compare(a.start, b.start) })
	var busy uint64
	var gaps []float64
	end := l[0].start
	for _, x := range l {
		if x.start > end {
			gaps = append(gaps, float64(x.start-end))
		}
		if x.end > end {
			busy += x.end - max(x.start, end)
			end = x.end
		}
	}
	span := float64(end - l[0].start)
	return TimelineGaps{Activities: len(l), SpanNS: span, BusyNS: float64(busy), GapNS: span - float64(busy), Gaps: len(gaps)}, gaps
}

// medianOf is the median of v (the upper one of an even count), 0 for
// none.
func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

// launchesOf splits the activities recorded over n timeline launches,
// sorted by start, into one slice a launch: every launch runs the same
// activities, so each takes the next len(recs)/n. It is nil when the
// records do not divide into n launches.
func launchesOf(recs []cupti.Record, n int) [][]interval {
	if n <= 0 || len(recs) == 0 || len(recs)%n != 0 {
		return nil
	}
	per := len(recs) / n
	out := make([][]interval, n)
	for i, r := range recs {
		out[i/per] = append(out[i/per], interval{r.Start, max(r.End, r.Start)})
	}
	return out
}
