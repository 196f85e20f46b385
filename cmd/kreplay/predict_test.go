package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Without a usable GPU (here: a device index no machine has), predict does
// the CPU part, inspecting the trace, says why it stops, writes no output
// file, and exits with status 3: nothing measured.
func TestPredictCPUOnly(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.bench")
	code, stdout, errOut := runCmd(t, "predict", "-device", "999", "-no-model", "-o", out)
	if code != exitNoMeasurement || !strings.Contains(errOut, "nothing was measured") {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s written with nothing measured", out)
	}
	out = stdout
	for _, want := range []string{"bloom-560m_prefill", "top 10 signatures", "no usable GPU", "CPU-only part ends here"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestPredictErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"predict", "a", "b"}, 2, "kreplay predict: want at most 1 argument, got 2"},
		{[]string{"predict", "-ticks", "1"}, 2, "want 2 or more"},
		{[]string{"predict", "-cache", "tepid"}, 2, "unknown cache mode"},
		{[]string{"predict", "-budget", "0s"}, 2, "-budget 0s"},
		{[]string{"predict", "-energy-share", "2"}, 2, "want a share from 0 to 1"},
		{[]string{"predict", "-signature-energy", "maybe"}, 2, `kreplay predict: -signature-energy "maybe": want auto, on, off`},
		{[]string{"predict", "-signature-energy", "On"}, 2, `-signature-energy "On": want auto, on, off`},
		{[]string{"predict", "-shared-energy", "1"}, 2, "-shared-energy 1: want 0 (off) or 2 to 16"},
		{[]string{"run", "-shared-energy", "17"}, 2, "-shared-energy 17: want 0 (off) or 2 to 16"},
		{[]string{"run", "-shared-energy", "-1"}, 2, "-shared-energy -1: want 0"},
		{[]string{"predict", "-timeline-dataflow", "-no-timeline"}, 2, "-timeline-dataflow with -no-timeline"},
		{[]string{"predict", "embedded:nope"}, 1, "no such embedded bundle or trace"},
	} {
		code, _, e := runCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(e, tc.want) {
			t.Errorf("kreplay %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, e, tc.code, tc.want)
		}
	}
}
