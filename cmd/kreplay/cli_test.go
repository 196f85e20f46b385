package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
)

// Help goes to standard output with exit status 0, in every form it is
// asked for: the general help lists every command and the exit
// statuses; a command's help says what it takes, lists its flags and
// the exit statuses.
func TestHelp(t *testing.T) {
	general := []string{"usage: kreplay COMMAND", "\narguments:\n", "\nexit status:\n", "  2  a usage error"}
	for _, c := range commands {
		general = append(general, "\n  "+c.name)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"help"}, general},
		{[]string{"-h"}, general},
		{[]string{"--help"}, general},
		{[]string{"help", "help"}, general},
		{[]string{"help", "-h"}, general},
		{[]string{"help", "run"}, []string{"usage: kreplay run [-tiers", "\nflags:\n", "  -cache MODE", "\nexit status:\n"}},
		{[]string{"run", "-h"}, []string{"usage: kreplay run [-tiers", "\nflags:\n", "  -cache MODE"}},
		{[]string{"predict", "-help"}, []string{"usage: kreplay predict [-o BENCH] [-energy=false]", "(default true)", "deprecated: the same as -model none"}},
		{[]string{"help", "version"}, []string{"usage: kreplay version\n", "VCS revision"}},
	} {
		code, stdout, stderr := runCmd(t, tc.args...)
		if code != exitOK || stderr != "" {
			t.Errorf("kreplay %v: exit %d, stderr %q; want 0 and none", tc.args, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("kreplay %v: output lacks %q:\n%s", tc.args, w, stdout)
			}
		}
	}
	// kreplay help CMD prints what kreplay CMD -h prints.
	for _, c := range commands {
		if c.run == nil {
			continue
		}
		_, viaHelp, _ := runCmd(t, "help", c.name)
		_, viaFlag, _ := runCmd(t, c.name, "-h")
		first := strings.SplitN(c.args, "\n", 2)[0]
		if viaHelp != viaFlag || !strings.HasPrefix(viaFlag, strings.TrimSpace("usage: kreplay "+c.name+" "+first)) {
			t.Errorf("kreplay help %s:\n%s\nkreplay %s -h:\n%s", c.name, viaHelp, c.name, viaFlag)
		}
	}
}

// Usage errors exit 2 with one line that says what is wrong, then one
// that says where the usage is; nothing on standard output.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		want, see string
	}{
		{nil, "kreplay: no command given", "kreplay help"},
		{[]string{"frobnicate"}, `kreplay: unknown command "frobnicate"`, "kreplay help"},
		{[]string{"help", "frobnicate"}, `kreplay help: unknown command "frobnicate"`, "kreplay help"},
		{[]string{"help", "run", "predict"}, "kreplay help: want at most one COMMAND", "kreplay help"},
		{[]string{"run", "-tiers", "1,4"}, `kreplay run: -tiers "1,4": want numbers 1 to 3`, "kreplay run -h"},
		{[]string{"run", "-nosuchflag"}, "kreplay run: flag provided but not defined: -nosuchflag", "kreplay run -h"},
		{[]string{"run", "-ticks", "1"}, "kreplay run: -ticks 1: want 2 or more", "kreplay run -h"},
		{[]string{"run", "-resume"}, "kreplay run: -resume needs -out FILE", "kreplay run -h"},
		{[]string{"run", "-ci", "0"}, "kreplay run: -ci 0", "kreplay run -h"},
		{[]string{"inspect", "-top", "many"}, `kreplay inspect: invalid value "many" for flag -top`, "kreplay inspect -h"},
		{[]string{"inspect", "-top", "-1"}, "kreplay inspect: -top -1: want 0 or more", "kreplay inspect -h"},
		{[]string{"import"}, "kreplay import: want 1 argument, got 0", "kreplay import -h"},
		{[]string{"import", "a", "b"}, "kreplay import: want 1 argument, got 2", "kreplay import -h"},
		{[]string{"report"}, "kreplay report: want at least 1 argument, got 0", "kreplay report -h"},
		{[]string{"report", "-top", "-2", "x.bench"}, "kreplay report: -top -2", "kreplay report -h"},
		{[]string{"diff", "a.bench"}, "kreplay diff: want 2 arguments, got 1", "kreplay diff -h"},
		{[]string{"diff", "-alpha", "1.5", "a", "b"}, "kreplay diff: -alpha 1.5", "kreplay diff -h"},
		{[]string{"gen", "-pkg", "my-pkg", "x"}, `kreplay gen: -pkg "my-pkg": want a Go identifier`, "kreplay gen -h"},
		{[]string{"timeline", "a", "b"}, "kreplay timeline: want at most 1 argument, got 2", "kreplay timeline -h"},
		{[]string{"version", "extra"}, "kreplay version: want 0 arguments, got 1", "kreplay version -h"},
		{[]string{"predict", "-model", "sometimes"}, `kreplay predict: -model "sometimes"`, "kreplay predict -h"},
		{[]string{"predict", "-no-model", "-model", "run"}, "kreplay predict: -no-model and -model run: give one", "kreplay predict -h"},
		{[]string{"predict", "-device", "-1"}, "kreplay predict: -device -1", "kreplay predict -h"},
		{[]string{"predict", "-devices", "0,0"}, `kreplay predict: -devices "0,0": want device indices, each once`, "kreplay predict -h"},
		{[]string{"run", "-devices", "0,x"}, `kreplay run: -devices "0,x": want device indices, each once`, "kreplay run -h"},
		{[]string{"run", "-pause", "-1s"}, "kreplay run: -pause -1s: want 0 or more", "kreplay run -h"},
		{[]string{"run", "-energy-share", "NaN"}, "kreplay run: -energy-share NaN: want 0 or more", "kreplay run -h"},
		{[]string{"capture", "-processes", "-3", "x.json", "-o", "d"}, "kreplay capture: -processes -3: want 0 or more", "kreplay capture -h"},
		{[]string{"whatif", "-replace", "llama-rmsnorm", "-eps", "0", "x"}, "kreplay whatif: -eps 0", "kreplay whatif -h"},
		{[]string{"whatif", "-replace", "llama-rmsnorm", "-block", "1,2,3,4", "x"}, `kreplay whatif: -block "1,2,3,4": more than 3 dimensions`, "kreplay whatif -h"},
	} {
		code, stdout, stderr := runCmd(t, tc.args...)
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		if code != exitUsage || len(lines) != 2 || !strings.HasPrefix(lines[0], tc.want) || lines[1] != "run '"+tc.see+"' for usage" || stdout != "" {
			t.Errorf("kreplay %v: exit %d, stdout %q, stderr:\n%s\nwant exit 2, a line starting %q and run '%s' for usage", tc.args, code, stdout, stderr, tc.want, tc.see)
		}
	}
}

// Without a GPU, run, predict, whatif and capture exit 3 with the same
// one-line message on standard error (a device index no machine has
// stands for none here; for capture, a driver that does not load).
func TestNoGPU(t *testing.T) {
	old := probeGPU
	probeGPU = func() error { return fmt.Errorf("%w: dlopen libcuda.so.1: not here", cuda.ErrNoDriver) }
	t.Cleanup(func() { probeGPU = old })
	tmp := t.TempDir()
	testdata, err := filepath.Abs(filepath.Join("..", "..", "internal", "runner", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(tmp, "spec.json")
	os.WriteFile(spec, []byte(`{"version": 1, "name": "mine_prefill", "command": {"argv": ["python3", "fake_command.py"], "dir": "`+testdata+`"},
		"workload": {"kind": "prefill", "batch": 4, "seq": 512}}`), 0o644)
	for _, args := range [][]string{
		{"run", "-device", "999", "-ids", "none"},
		{"predict", "-device", "999", "-model", "none", "-o", filepath.Join(tmp, "x.bench")},
		{"whatif", "-device", "999", "-kernel", exampleKernel, "-name", "rmsnorm_fused", "-replace", "llama-rmsnorm", llamaBundle},
		{"capture", "-no-binaries", spec, "-o", filepath.Join(tmp, "bundle")},
	} {
		code, _, stderr := runCmd(t, args...)
		want := "kreplay " + args[0] + ": no usable GPU: "
		if code != exitNoMeasurement || !strings.HasPrefix(stderr, want) ||
			!strings.HasSuffix(stderr, "; nothing was measured (exit status 3)\n") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("kreplay %v: exit %d, stderr %q; want exit 3 and one line %q...", args, code, stderr, want)
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "bundle")); err == nil {
		t.Errorf("capture without a GPU wrote a bundle")
	}
	_, _, e := runCmd(t, "capture", spec, "-o", filepath.Join(tmp, "bundle"))
	if !strings.Contains(e, "no usable GPU: no NVIDIA driver (cuda: driver library not available: dlopen libcuda.so.1: not here)") {
		t.Errorf("capture's message: %s", e)
	}
}

// kreplay version says which build this is.
func TestVersion(t *testing.T) {
	code, stdout, stderr := runCmd(t, "version")
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"module   github.com/kreplay/kreplay\n", "version  ", "go       go1."} {
		if !strings.Contains(stdout, want) {
			t.Errorf("version output lacks %q:\n%s", want, stdout)
		}
	}
}
