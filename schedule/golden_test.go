package schedule

import (
	"os"
	"testing"
)

// TestReadRecorderGolden reads the schedule recorder's own output
// (internal/inject's golden file, written by kr_sched.c's flush from a
// fake CUPTI): the recorder and the reader agree on the format.
func TestReadRecorderGolden(t *testing.T) {
	f, err := os.Open("../internal/inject/testdata/schedule_calls.golden")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	if s.Source != SourceRecorder || s.Recorder != RecorderCUPTI || s.Process == nil || s.Process.OverheadNSPerInference != 1000 {
		t.Errorf("header: source %q, recorder %q, process %+v", s.Source, s.Recorder, s.Process)
	}
	if len(s.Inferences) != 2 {
		t.Fatalf("%d inferences, want 2", len(s.Inferences))
	}
	count := map[Kind]int{}
	for _, c := range s.Inferences[0].Calls {
		count[c.Kind]++
	}
	want := map[Kind]int{Launch: 3, Copy: 5, Memset: 2, Graph: 1, Record: 1, StreamWait: 1, Query: 2, Wait: 3, Mark: 3}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("inference 0: %d %s records, want %d", count[k], k, n)
		}
	}
	if got := s.Inferences[0].GPUOps(); got != 11 {
		t.Errorf("inference 0: %d GPU ops, want 11", got)
	}
	if got := s.Inferences[1].GPUOps(); got != 2 {
		t.Errorf("inference 1: %d GPU ops, want 2", got)
	}
}
