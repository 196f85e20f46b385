package bench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/signatures"
)

// NoGroupTimelineReason is why a tensor-parallel package's timeline
// benchmark does not run: package replay replays a timeline on one GPU
// only, and a rank's timeline needs its collectives run with the other
// ranks' GPUs.
const NoGroupTimelineReason = "package replay has no multi-GPU timeline: a rank's timeline replays on one GPU " +
	"(replay.Device.PrepareTimeline), where its collectives, which need the other ranks, cannot run; " +
	"kreplay predict of the bundle (kreplay run -devices) replays each rank's signatures on its GPU and the collectives across the GPUs"

// GroupTimeline is the timeline benchmark of a tensor-parallel workload:
// one sub-benchmark per rank, BenchmarkTimeline/workload=W_rankN/timeline
// (Workload of rank N's set), which would replay the rank's timeline on
// its own GPU with the collectives across the GPUs. Package replay has no
// such group timeline (NoGroupTimelineReason): each sub-benchmark prints
// a NoGroupTimelineLine, which go test shows without -v, and skips,
// whether or not a GPU is required (gputest), since no GPU would run it.
func GroupTimeline(b *testing.B, sets []*signatures.Set) {
	b.Helper()
	if err := CheckRanks(sets); err != nil {
		b.Fatal(err)
	}
	for _, set := range sets {
		b.Run(TimelineBenchName(Workload(set.Source)), func(b *testing.B) {
			fmt.Println(NoGroupTimelineLine(b.Name(), NoGroupTimelineReason))
			b.Skip("no group timeline: package replay has no multi-GPU timeline")
		})
	}
}

// NoGroupTimelineLine is the line GroupTimeline prints for the timeline
// benchmark name that does not run: "kreplay
// BenchmarkTimeline/workload=W_rankN/timeline: no group timeline: REASON"
// (ParseNoGroupTimelineLine reads it back). Like a NoModelLine, benchfmt
// and benchstat pass over it.
func NoGroupTimelineLine(name, reason string) string {
	return noModelPrefix + name + ": no group timeline: " + strings.ReplaceAll(reason, "\n", " ")
}

// ParseNoGroupTimelineLine reads a NoGroupTimelineLine: the workload of
// the benchmark it names (a rank's, "W_rankN") and the reason.
func ParseNoGroupTimelineLine(line string) (workload, reason string, ok bool) {
	rest, ok := strings.CutPrefix(line, noModelPrefix+"Benchmark"+TimelineName+"/"+WorkloadKey+"=")
	if !ok {
		return "", "", false
	}
	name, reason, ok := strings.Cut(rest, ": no group timeline: ")
	if !ok {
		return "", "", false
	}
	w, _, _ := strings.Cut(name, "/")
	return w, reason, w != ""
}
