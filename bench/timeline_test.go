package bench

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// A BenchmarkTimeline line is read like the model's, and the report shows
// the timeline's time against the predicted sum and the trace's busy time.
func TestReportTimeline(t *testing.T) {
	set := prefillSet(t)
	w := Workload(set.Source)
	out := synth{runs: 6, jitter: jitter6}.output(set)
	// Six runs of the timeline benchmark, as go test prints them.
	tlNS := []float64{9.0e6, 9.1e6, 9.2e6, 9.3e6, 9.4e6, 9.5e6}
	for _, ns := range tlNS {
		out += fmt.Sprintf("Benchmark%s/%s-16\t1\t%.0f ns/op\t12345 %s\n", TimelineName, TimelineBenchName(w), ns, UnitSkippedNS)
	}
	p, err := Report([]Input{input("timeline.bench", out)}, []*signatures.Set{set}, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Workloads) != 1 {
		t.Fatalf("%d workloads", len(p.Workloads))
	}
	for _, warn := range p.Warnings {
		if strings.Contains(warn, "Timeline") {
			t.Errorf("warning %s", warn)
		}
	}
	wp := p.Workloads[0]
	tl := wp.Timeline
	if tl == nil {
		t.Fatal("no timeline in the prediction")
	}
	if tl.NS.Runs != 6 || !near(tl.NS.Center, 9.25e6, 1e-9) || tl.NS.Lo > tl.NS.Center || tl.NS.Hi < tl.NS.Center || tl.SkippedNS != 12345 {
		t.Errorf("timeline %+v", tl)
	}
	if tl.ErrPredicted == nil || !near(*tl.ErrPredicted, tl.NS.Center/wp.PredictedNS.Center-1, 1e-9) {
		t.Errorf("error against the prediction %v", tl.ErrPredicted)
	}
	if tl.ErrBusy == nil || !near(*tl.ErrBusy, tl.NS.Center/float64(wp.BusyNS)-1, 1e-9) {
		t.Errorf("error against the busy time %v", tl.ErrBusy)
	}
	var text bytes.Buffer
	if err := p.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"timeline replay", "vs predicted", "vs busy", "traced skipped", "predicted GPU time", "trace GPU busy"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	// No timeline line: no timeline in the prediction or the text.
	wp = report(t, set, synth{runs: 1}, ReportOptions{})
	if wp.Timeline != nil {
		t.Errorf("timeline %+v without a timeline line", wp.Timeline)
	}
}

type fakeTimeline struct {
	res   *replay.TimelineResult
	err   error
	calls int
}

func (f *fakeTimeline) ReplayTimeline(set *signatures.Set, o replay.Options) (*replay.TimelineResult, error) {
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
		runTimeline(f, n, &signatures.Set{}, func() (timelineReplayer, error) {
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
	res := &replay.TimelineResult{MedianNS: 8e6, SkippedNS: 4000, Invocations: 10, Skipped: 2,
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
