package bench

import (
	"fmt"
	"testing"

	"github.com/kreplay/kreplay/internal/textfmt"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// UnitSkippedNS is the traced time per timeline that Timeline could not
// replay (its skipped invocations' durations).
const UnitSkippedNS = "skipped-ns"

// UnitGapNS is the idle gap after each launch of the timeline
// (replay.TimelineOptions.Gap), when it had one.
const UnitGapNS = "gap-ns"

// Where a timeline launch's time goes, as CUPTI recorded the graph's
// activities (replay.TimelineGaps): the time some activity ran, the idle
// gaps the graph left between them, how many, and their median length.
const (
	UnitGraphBusyNS      = "graph-busy-ns"
	UnitGraphGapNS       = "graph-gap-ns"
	UnitGraphGaps        = "graph-gaps"
	UnitGraphGapMedianNS = "graph-gap-median-ns"
)

// TimelineBenchName is the sub-benchmark name of the timeline replay.
func TimelineBenchName(workload string) string {
	return WorkloadKey + "=" + workload + "/timeline"
}

// Timeline is the body of the timeline benchmark: it replays the set's
// whole timeline in order on the test binary's shared GPU
// (replay.Device.PrepareTimeline: every replayable signature prepared
// once, all invocations in one CUDA graph) and measures it once per call
// of the benchmark function (replay.Timeline.Measure, with o's
// Measure and Tier3 and the environment's overrides). It reports the median time of one timeline as ns/op and the
// traced time of the invocations it could not replay as skipped-ns.
// Without a usable GPU it is skipped, and fails instead when
// KREPLAY_REQUIRE_GPU=1; so does an error preparing or measuring.
func Timeline(b *testing.B, set *signatures.Set, o Options) {
	b.Helper()
	runTimeline(b, b.N, set, o, func() (timelineReplayer, error) {
		r, err := sharedReplayer()
		if err != nil {
			return nil, err
		}
		tr, ok := r.(timelineReplayer)
		if !ok {
			return nil, fmt.Errorf("the shared replayer cannot replay timelines")
		}
		return tr, nil
	})
}

// timelineReplayer prepares and measures a whole timeline; a
// replay.Device does it on a GPU, tests use a fake.
type timelineReplayer interface {
	ReplayTimeline(set *signatures.Set, o Options) (*replay.TimelineResult, error)
}

func (r deviceReplayer) ReplayTimeline(set *signatures.Set, o Options) (*replay.TimelineResult, error) {
	r.d.Tier3 = o.Tier3
	return r.d.MeasureTimeline(set, replay.TimelineOptions{}, o.Measure)
}

func runTimeline(tb benchTB, n int, set *signatures.Set, o Options, open func() (timelineReplayer, error)) {
	tb.Helper()
	if reportAgain(tb, n, reportTimeline) {
		return
	}
	r, o := openReplayer(tb, o, open)
	res, err := r.ReplayTimeline(set, o)
	if err != nil {
		replayFailed(tb, err)
		return
	}
	reported.Store(tb.Name(), res)
	tb.Logf("%s", res)
	for _, sk := range res.Skips {
		tb.Logf("skipped %s (%s): %dx, %s traced: %s", sk.ID, sk.Label, sk.Invocations, textfmt.NS(float64(sk.TracedNS)), sk.Reason)
	}
	reportTimeline(tb, res)
}

func reportTimeline(tb benchTB, r *replay.TimelineResult) { reportMetrics(tb, TimelineMetrics(r)) }
