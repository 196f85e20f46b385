package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// inspect of a bundle with host schedules adds the host model's check
// with the trace's own kernel times against the measured run.
func TestInspectTracedCheck(t *testing.T) {
	code, out, errOut := runCmd(t, "inspect", "-top", "0", filepath.Join("..", "..", "predict", "testdata", "inference", "inf-gpt2m-eager-decode-b1", "bundle"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "with the trace's own kernel times and no host probe: wall median 94.42 ms, mean 94.20 ms against the measured median 94.37 ms (median +0.0%, mean -0.2%) and the measured mean 94.95 ms (mean -0.8%); a check of the host model, not a prediction") {
		t.Errorf("stdout:\n%s", out)
	}
}
