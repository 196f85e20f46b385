package replay

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kreplay/kreplay/internal/cupti"
)

// gapsOf: the union of the activities is busy, what lies between them
// gaps; overlapping and nested activities count once; medians over the
// launches.
func TestTimelineGapsOf(t *testing.T) {
	for _, tc := range []struct {
		name     string
		launches [][]interval
		want     *TimelineGaps
	}{
		{"none", nil, nil},
		{"empty launches", [][]interval{{}, {}}, nil},
		{"back to back", [][]interval{{{0, 10}, {10, 30}}},
			&TimelineGaps{Launches: 1, Activities: 2, SpanNS: 30, BusyNS: 30}},
		{"two gaps", [][]interval{{{100, 110}, {112, 120}, {125, 130}}},
			&TimelineGaps{Launches: 1, Activities: 3, SpanNS: 30, BusyNS: 23, GapNS: 7, Gaps: 2, MedianGapNS: 5}},
		{"overlap and nesting, out of order", [][]interval{{{20, 40}, {0, 10}, {5, 15}, {22, 30}}},
			&TimelineGaps{Launches: 1, Activities: 4, SpanNS: 40, BusyNS: 35, GapNS: 5, Gaps: 1, MedianGapNS: 5}},
		{"the launch of median span", [][]interval{
			{{200, 210}, {212, 220}, {222, 230}}, // span 30, busy 26, 2 gaps of 2
			{{0, 10}, {11, 20}},                  // span 20, busy 19, 1 gap of 1
			{{100, 110}, {113, 121}},             // span 21, busy 18, 1 gap of 3
		}, &TimelineGaps{Launches: 3, Activities: 2, SpanNS: 21, BusyNS: 18, GapNS: 3, Gaps: 1, MedianGapNS: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, gapsOf(tc.launches)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// launchesOf deals the records out evenly, a launch each, and refuses
// records that do not divide into the launches.
func TestTimelineLaunchesOf(t *testing.T) {
	k := func(s, e uint64) cupti.Record {
		return cupti.Record{Kind: cupti.KindConcurrentKernel, Start: s, End: e}
	}
	m := func(s, e uint64) cupti.Record { return cupti.Record{Kind: cupti.KindMemset, Start: s, End: e} }
	recs := []cupti.Record{m(0, 1), k(2, 5), m(10, 11), k(12, 15)}
	if diff := cmp.Diff([][]interval{{{0, 1}, {2, 5}}, {{10, 11}, {12, 15}}}, launchesOf(recs, 2), cmp.AllowUnexported(interval{})); diff != "" {
		t.Errorf("two launches (-want +got):\n%s", diff)
	}
	for _, n := range []int{0, 3, -1} {
		if got := launchesOf(recs, n); got != nil {
			t.Errorf("%d launches: %v, want nil", n, got)
		}
	}
	if got := launchesOf([]cupti.Record{k(5, 3)}, 1); got[0][0] != (interval{5, 5}) {
		t.Errorf("an end before its start: %v", got)
	}
}
