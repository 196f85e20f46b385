package main

import (
	"strings"
	"testing"
)

// -families is off unless given (familiesDefault), and run's and
// predict's help say it is opt-in until validated on a GPU.
func TestFamiliesFlag(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want bool
	}{{nil, false}, {[]string{"-families"}, true}, {[]string{"-families=false"}, false}} {
		f, _, err := parseRunFlags(tt.args, &strings.Builder{})
		if err != nil {
			t.Fatal(err)
		}
		if f.families != tt.want {
			t.Errorf("%q: families %v, want %v", tt.args, f.families, tt.want)
		}
	}
	for _, cmd := range []string{"run", "predict"} {
		code, stdout, _ := runCmd(t, cmd, "-h")
		if code != exitOK || !strings.Contains(stdout, "  -families") || !strings.Contains(stdout, "opt-in until validated on a GPU") {
			t.Errorf("kreplay %s -h: exit %d, help lacks -families or its opt-in note:\n%s", cmd, code, stdout)
		}
	}
}
