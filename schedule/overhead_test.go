package schedule

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// The process line's recorder cost per call reads and writes back, and an
// older line without it still reads.
func TestProcessCallOverhead(t *testing.T) {
	for _, tc := range []struct {
		line string
		want int64
	}{
		{"process 1 overhead_ns_per_inference 5 armed_wall_ns 10 measured_wall_ns 5 overhead_ns_per_call 700", 700},
		{"process 1 overhead_ns_per_inference 5 armed_wall_ns 10 measured_wall_ns 5", 0},
	} {
		text := "kreplay-schedule 1\n" + tc.line + "\ninference 0 start 0\nM 0 1 1\nend 0 1\n"
		s, err := Read(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		if s.Process.CallOverheadNS != tc.want {
			t.Errorf("%q: %d ns per call, want %d", tc.line, s.Process.CallOverheadNS, tc.want)
		}
		var b bytes.Buffer
		if err := Write(&b, s); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.line+"\n") {
			t.Errorf("written back:\n%s\nwant the line %q", b.String(), tc.line)
		}
	}
	bad := "kreplay-schedule 1\nprocess 1 overhead_ns_per_inference 5 armed_wall_ns 10 measured_wall_ns 5 per_call 700\ninference 0 start 0\nM 0 1 1\nend 0 1\n"
	if _, err := Read(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "overhead_ns_per_call") {
		t.Errorf("a misnamed field: %v", err)
	}
}

// Simulate takes the recorder's cost per call off the gap before each
// recorded call: ten launches 20 µs apart (a 2 µs call, an 18 µs gap) of
// 2 µs kernels, submit 5 µs. Without the cost the last launch enters at
// 9 x 20 = 180 µs and its kernel ends at 180 + 5 + 2 = 187 µs; with 3 µs a
// call the nine gaps before launches 2-10 are 15 µs, the last enters at
// 9 x 17 = 153 µs and ends at 160 µs. The first call's gap (none) stays 0.
func TestSimulateCallOverhead(t *testing.T) {
	var b strings.Builder
	b.WriteString("inference 0\n")
	for i := 0; i < 10; i++ {
		b.WriteString("L " + strconv.FormatInt(int64(i)*20000, 10) + " " + strconv.FormatInt(int64(i)*20000+2000, 10) + " 0x0 1 1,1,1 1,1,1\n")
	}
	for _, tc := range []struct {
		perCall int64
		wall    float64
	}{{0, 187000}, {3000, 160000}} {
		s := parse(t, b.String())
		s.Process = &Process{CallOverheadNS: tc.perCall}
		r, err := Simulate(s, ops(repeat(2000, 10)), Constants{SubmitNS: 5000})
		if err != nil {
			t.Fatal(err)
		}
		if r.WallNS != tc.wall {
			t.Errorf("%d ns a call: wall %.0f ns, want %.0f", tc.perCall, r.WallNS, tc.wall)
		}
	}
}
