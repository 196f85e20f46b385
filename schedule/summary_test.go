package schedule

import (
	"strings"
	"testing"
)

// A schedule's summary: inferences, spans, and per kind the calls per
// inference, their own time and the gap before them.
func TestSummarize(t *testing.T) {
	s := parse(t, "inference 0 fresh\n"+launches(3, 10000, 2000)+"W 30000 34000 s 0x0\n"+
		"inference 100000\n"+launches(3, 10000, 4000)+"W 30000 31000 s 0x0")
	u := Summarize(s)
	if u.Inferences != 2 || u.Fresh != 1 || len(u.Kinds) != 2 || u.Kinds[0].Kind != Launch || u.Kinds[1].Kind != Wait {
		t.Fatalf("summary %+v", u)
	}
	l, w := u.Kinds[0], u.Kinds[1]
	// Launches own 2 or 4 µs (three each), gaps 8 or 6 µs before the
	// second and third; the waits own 4 and 1 µs, 8 and 6 µs after the
	// last launch's exit at 22 or 24 µs.
	if l.PerInference != 3 || l.OwnNS.Median != 3000 || l.OwnNS.P90 != 4000 || l.GapNS.Median != 7000 {
		t.Errorf("launches %+v", l)
	}
	if w.PerInference != 1 || w.OwnNS.Median != 2500 || w.GapNS.Median != 7000 || u.SpanNS.Median != 32500 {
		t.Errorf("waits %+v, spans %+v", w, u.SpanNS)
	}
	var b strings.Builder
	if err := u.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2 inferences (1 after a synchronize), span median 0.0325 ms", "  L      3.0 a inference  own     3.00 µs"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}

// The summary's line says what the process's two walls are: the
// interleaved recorder's recorded and measured blocks, the hook
// recorder's armed and disarmed single inferences.
func TestSummaryRecorder(t *testing.T) {
	p := &Process{ArmedWallNS: 344e6, MeasuredWallNS: 334e6, CallOverheadNS: 493}
	tests := []struct {
		recorder, want, not string
	}{
		{"", "recorded 344 ms against 334 ms measured per inference, the recorder's probe 493 ns a call", "interposed"},
		{RecorderCUPTI, "recorded 344 ms against 334 ms measured", "interposed"},
		{RecorderHook, "(driver entry points interposed: the measured inferences themselves); the recorder's cost: single inferences 344 ms armed against 334 ms disarmed (medians), the recorder's probe 493 ns a call", "measured per inference"},
	}
	for _, tt := range tests {
		var b strings.Builder
		if err := (Summary{Source: SourceRecorder, Recorder: tt.recorder, Process: p}).WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tt.want) || strings.Contains(b.String(), tt.not) {
			t.Errorf("recorder %q: %q, want %q and not %q", tt.recorder, b.String(), tt.want, tt.not)
		}
	}
}
