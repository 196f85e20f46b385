package predict

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/kreplay/kreplay/internal/kname"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/schedule"
)

// The pacing of a recorded decode's median inference: a gap before every
// launch of the timeline and a sync where the host waited; the gaps hold
// the host's time between calls, so that with the launches' and the
// waits' own time they make up the inference's span, less the recorder's
// cost per call.
func TestPacingRecorded(t *testing.T) {
	in, inf, invs, p := recordedPacing(t)
	s := in.Schedule
	if len(p.Gap) != len(invs) || len(p.Sync) != len(invs) {
		t.Fatalf("%d gaps, %d syncs for %d launches", len(p.Gap), len(p.Sync), len(invs))
	}
	calls := s.Inferences[inf].Calls
	var gaps, gpuOwn, waits time.Duration
	syncs, wantSyncs := 0, 0
	for _, g := range p.Gap {
		if g < 0 {
			t.Fatalf("a negative gap %v", g)
		}
		gaps += g
	}
	for _, y := range p.Sync {
		if y {
			syncs++
		}
	}
	for k := range calls {
		c := &calls[k]
		own := time.Duration(c.Exit - c.Enter)
		switch {
		case c.Kind.GPU():
			gpuOwn += own
		case c.IsWait():
			waits += own
		}
		if c.IsWait() && (c.Kind.GPU() || k > 0) {
			wantSyncs++
		}
	}
	span := time.Duration(s.Inferences[inf].End)
	perCall := time.Duration(s.Process.CallOverheadNS) * time.Duration(len(calls))
	t.Logf("inference %d: %d launches, %d syncs; gaps %v + launches %v + waits %v against the span %v (the recorder's cost %v)",
		inf, len(invs), syncs, gaps, gpuOwn, waits, span, perCall)
	if syncs == 0 || syncs > wantSyncs {
		t.Errorf("%d syncs, want 1 to %d", syncs, wantSyncs)
	}
	if total := gaps + gpuOwn + waits; total > span || total < span-perCall-span/100 {
		t.Errorf("gaps, launches and waits %v against the span %v", total, span)
	}
	// A timeline that does not launch some invocation gives its time to
	// the next launch.
	short, err := Pacing(s, inf, in.Set, in.Runtime, invs[1:])
	if err != nil {
		t.Fatal(err)
	}
	if short.Gap[0] < p.Gap[1] {
		t.Errorf("without the first launch, the next's gap %v, under its own %v", short.Gap[0], p.Gap[1])
	}
	if _, err := Pacing(s, len(s.Inferences), in.Set, in.Runtime, invs); err == nil {
		t.Error("an inference past the schedule's: no error")
	}
	if PacedInference(&schedule.Schedule{}) != -1 {
		t.Error("no inference, yet one is paced")
	}
}

// The absolute pacing of the same inference: each launch's time since the
// host's last wait (or the start) is the previous launch's, plus its
// recorded call, plus the gap after it that the older pacing spins; at
// each sync the host's wait starts at its recorded time, and what follows
// counts from the wait's return.
func TestPacingAt(t *testing.T) {
	in, inf, invs, p := recordedPacing(t)
	s := in.Schedule
	if len(p.At) != len(invs) || len(p.WaitAt) != len(invs) {
		t.Fatalf("%d launch times, %d wait times for %d launches", len(p.At), len(p.WaitAt), len(invs))
	}
	// own[k] is the recorded call time of the GPU op launch k replays.
	bound, err := schedule.Bind(s, inf, in.Set, in.Runtime, schedule.Memo(kname.SameKernel))
	if err != nil {
		t.Fatal(err)
	}
	calls := s.Inferences[inf].Calls
	own := make([]time.Duration, len(invs))
	for _, b := range bound {
		c := &calls[b.Call]
		own[b.Timeline[0]] = time.Duration(c.Exit - c.Enter)
	}
	// Exact where no recorded gap was shorter than the recorder's cost per
	// call (the older pacing clamps those at 0).
	const tol = time.Nanosecond
	checked, off := 0, 0
	for k := 1; k < len(invs); k++ {
		if p.At[k] < 0 || p.WaitAt[k] < 0 {
			t.Fatalf("launch %d: a negative time %v, %v", k, p.At[k], p.WaitAt[k])
		}
		if p.Sync[k-1] || p.Gap[k] == 0 {
			continue // a new segment, or a clamped gap
		}
		checked++
		if d := p.At[k] - p.At[k-1] - own[k-1] - p.Gap[k]; d < -tol || d > tol {
			off++
			if off <= 3 {
				t.Logf("launch %d at %v after %v: %v more than the call %v and the gap %v", k, p.At[k], p.At[k-1], d, own[k-1], p.Gap[k])
			}
		}
	}
	syncs := 0
	for k, y := range p.Sync {
		if y {
			syncs++
			if p.WaitAt[k] < p.At[k] {
				t.Errorf("launch %d: its wait at %v, before its launch at %v", k, p.WaitAt[k], p.At[k])
			}
		}
	}
	t.Logf("%d launches, %d syncs; %d launch-to-launch steps checked, %d off", len(invs), syncs, checked, off)
	if off > checked/100 {
		t.Errorf("%d of %d steps off", off, checked)
	}
	if checked < len(invs)/2 {
		t.Errorf("only %d of %d steps checked", checked, len(invs))
	}
}

// recordedPacing is the pacing of a recorded decode's paced inference
// (PacedInference, a steady one) for a timeline launching every
// invocation in order: the input, the inference, the invocations and the
// pacing.
func recordedPacing(t *testing.T) (InferenceInput, int, []int, replay.Pacing) {
	t.Helper()
	in, _, _ := recordedInput(t, filepath.Join("testdata", "inference", "inf-gpt2m-eager-decode-b1"))
	inf := PacedInference(in.Schedule)
	if inf < 1 || in.Schedule.Inferences[inf].Fresh {
		t.Fatalf("paced inference %d", inf)
	}
	invs := make([]int, len(in.Set.Timeline))
	for i := range invs {
		invs[i] = i
	}
	p, err := Pacing(in.Schedule, inf, in.Set, in.Runtime, invs)
	if err != nil {
		t.Fatal(err)
	}
	return in, inf, invs, p
}
