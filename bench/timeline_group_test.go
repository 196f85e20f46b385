package bench

import "testing"

// The line a group timeline benchmark prints reads back, and is neither
// a NoModelLine nor a benchmark line.
func TestNoGroupTimelineLine(t *testing.T) {
	line := NoGroupTimelineLine("BenchmarkTimeline/"+TimelineBenchName("w_prefill_rank1"), NoGroupTimelineReason)
	w, reason, ok := ParseNoGroupTimelineLine(line)
	if !ok || w != "w_prefill_rank1" || reason != NoGroupTimelineReason {
		t.Errorf("%q: %q %q %v", line, w, reason, ok)
	}
	if _, _, ok := ParseNoModelLine(line); ok {
		t.Errorf("%q reads as a NoModelLine", line)
	}
	for _, bad := range []string{"", NoModelLine("BenchmarkModel/workload=w/model", "x"), "kreplay BenchmarkTimeline/workload=w/timeline: x", "BenchmarkTimeline/workload=w/timeline 1 5 ns/op"} {
		if _, _, ok := ParseNoGroupTimelineLine(bad); ok {
			t.Errorf("%q reads as a NoGroupTimelineLine", bad)
		}
	}
}
