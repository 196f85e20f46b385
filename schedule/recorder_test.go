package schedule

import (
	"bytes"
	"strings"
	"testing"
)

// The recorder line says which recorder recorded the schedule; Read
// keeps it, Write writes it back, anything but hook or cupti is refused,
// and a file without it reads with Recorder empty.
func TestRecorderLine(t *testing.T) {
	body := "clock CLOCK_MONOTONIC\n%sinference 0 start 5\nM 0 1 1\nM 2 3 3\nend 0 3\n"
	for _, tc := range []struct{ line, want, err string }{
		{"recorder hook\n", RecorderHook, ""},
		{"recorder cupti\n", RecorderCUPTI, ""},
		{"", "", ""},
		{"recorder ebpf\n", "", `recorder "ebpf"`},
		{"recorder hook\nrecorder hook\n", "", "a second recorder line"},
	} {
		in := "kreplay-schedule 1\n" + strings.Replace(body, "%s", tc.line, 1)
		s, err := Read(strings.NewReader(in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want %q", tc.line, err, tc.err)
			}
			continue
		}
		if err != nil || s.Recorder != tc.want {
			t.Fatalf("%q: recorder %q (%v), want %q", tc.line, s.Recorder, err, tc.want)
		}
		var buf bytes.Buffer
		if err := Write(&buf, s); err != nil || !strings.Contains(buf.String(), "clock CLOCK_MONOTONIC\n"+tc.line+"inference 0") {
			t.Errorf("%q: wrote %v\n%s", tc.line, err, buf.String())
		}
	}
	s := &Schedule{Version: Version, Source: SourceRecorder, Recorder: "ebpf"}
	if err := Write(&bytes.Buffer{}, s); err == nil || !strings.Contains(err.Error(), "recorder") {
		t.Errorf("Write of recorder ebpf: %v", err)
	}
}
