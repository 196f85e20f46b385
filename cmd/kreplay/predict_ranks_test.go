package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A bundle of several ranks is predicted as kreplay run -devices predicts
// it, with predict's energy defaults and the flags both take; the flags
// only predict has are named as unused. Without those GPUs (here: indices
// no machine has) the run ends as run ends without a GPU.
func TestPredictRanks(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "p.jsonl")
	for _, tc := range []struct {
		args        []string
		want, notIn []string
	}{
		{[]string{"-devices", "998,999", "-budget", "50ms", "-model", "none", "-top", "3"},
			[]string{"holds 2 ranks: kreplay run -devices 998,999 -energy=true -ticks 31 -out llama-7b-tp2_prefill.progress.jsonl -budget=50ms",
				"-model, -top: not used for a bundle of 2 ranks"}, nil},
		{[]string{"-devices", "998,999", "-energy=false", "-ticks", "5", "-progress", prog, "-cache", "warm", "-families", "-pause-above", "0.7"},
			[]string{"kreplay run -devices 998,999 -energy=false -ticks 5 -out " + prog + " -cache=warm -families=true -pause-above=0.7"}, []string{"not used"}},
		// The ranks' runs have no paced timeline: each signature's energy
		// window is measured there, -signature-energy named as unused.
		{[]string{"-devices", "998,999", "-signature-energy", "off"},
			[]string{"kreplay run -devices 998,999 -energy=true -ticks 31", "-signature-energy: not used for a bundle of 2 ranks"}, []string{"-signature-energy=off"}},
	} {
		args := append([]string{"predict"}, tc.args...)
		code, _, errOut := runCmd(t, append(args, "embedded:2xh200_llama-7b-tp2_prefill")...)
		if code != 3 && code != 1 {
			t.Errorf("%v: exit %d, want the run's no-GPU exit: %s", tc.args, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", tc.args, w, errOut)
			}
		}
		for _, w := range tc.notIn {
			if strings.Contains(errOut, w) {
				t.Errorf("%v: stderr has %q:\n%s", tc.args, w, errOut)
			}
		}
	}
}
