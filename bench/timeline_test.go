package bench

import (
	"errors"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

type fakeTimeline struct {
	res   *replay.TimelineResult
	err   error
	calls int
}

func (f *fakeTimeline) ReplayTimeline(set *signatures.Set, o Options) (*replay.TimelineResult, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	r := *f.res
	return &r, nil
}

func runFakeTimeline(name string, n int, r *fakeTimeline, openErr error) *fakeB {
	f := &fakeB{name: name, metrics: map[string]float64{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runTimeline(f, n, &signatures.Set{}, Options{}, func() (timelineReplayer, error) {
			if openErr != nil {
				return nil, openErr
			}
			return r, nil
		})
	}()
	<-done
	return f
}

func TestTimelineBenchmark(t *testing.T) {
	t.Setenv("KREPLAY_REQUIRE_GPU", "")
	res := &replay.TimelineResult{Stats: replay.Stats{MedianNS: 8e6}, SkippedNS: 4000, Invocations: 10, Skipped: 2,
		Skips: []replay.TimelineSkip{{ID: "s9", Label: "nccl", Reason: "collective", Invocations: 2, TracedNS: 4000}}}
	r := &fakeTimeline{res: res}
	f := runFakeTimeline("BenchmarkTimeline/workload=w/timeline", 1, r, nil)
	if f.skipped != "" || f.fatal != "" || f.metrics["ns/op"] != 8e6 || f.metrics[UnitSkippedNS] != 4000 {
		t.Errorf("skip %q fatal %q metrics %v", f.skipped, f.fatal, f.metrics)
	}
	if len(f.logs) != 2 || !strings.Contains(f.logs[1], "collective") {
		t.Errorf("logs %q", f.logs)
	}
	// A second call with b.N > 1 reports the first measurement again.
	f = runFakeTimeline("BenchmarkTimeline/workload=w/timeline", 100, r, nil)
	if r.calls != 1 || f.metrics["ns/op"] != 8e6 {
		t.Errorf("%d replays, metrics %v", r.calls, f.metrics)
	}
	// No GPU: skipped; an error: skipped unless a GPU is required.
	f = runFakeTimeline("BenchmarkTimeline/workload=x/timeline", 1, r, errors.New("no driver"))
	if !strings.Contains(f.skipped, "no driver") {
		t.Errorf("skip %q", f.skipped)
	}
	f = runFakeTimeline("BenchmarkTimeline/workload=y/timeline", 1, &fakeTimeline{err: errors.New("boom")}, nil)
	if !strings.Contains(f.skipped, "boom") {
		t.Errorf("skip %q", f.skipped)
	}
	t.Setenv("KREPLAY_REQUIRE_GPU", "1")
	f = runFakeTimeline("BenchmarkTimeline/workload=z/timeline", 1, &fakeTimeline{err: errors.New("boom")}, nil)
	if !strings.Contains(f.errd, "boom") {
		t.Errorf("error %q", f.errd)
	}
}
