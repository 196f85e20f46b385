package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var (
	exampleKernel = filepath.Join("..", "..", "examples", "whatif", "rmsnorm", "rmsnorm_fused.cu")
	llamaBundle   = "embedded:h100_llama-7b_prefill"
)

// Without a usable GPU (a device index no machine has), whatif finds the
// runs, binds the kernel, says why it stops, writes no output file and
// exits with status 3.
func TestWhatIfCPUOnly(t *testing.T) {
	out := filepath.Join(t.TempDir(), "w.json")
	code, stdout, errOut := runCmd(t, "whatif", "-device", "999", "-kernel", exampleKernel, "-name", "rmsnorm_fused",
		"-replace", "llama-rmsnorm", "-o", out, llamaBundle)
	if code != exitNoMeasurement || !strings.Contains(errOut, "nothing was measured") {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s written with nothing measured", out)
	}
	for _, want := range []string{"(recipe llama-rmsnorm) in llama-7b_prefill", "65 runs on 1 stream(s)",
		"variant 0: 65 runs, recipe llama-rmsnorm", "no usable GPU", "CPU-only part ends here"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

// Without -kernel, whatif prints the runs and stops.
func TestWhatIfMatchOnly(t *testing.T) {
	code, stdout, errOut := runCmd(t, "whatif", "-device", "999", "-replace", "copy_,pow,mean,add,rsqrt,mul,copy_,mul", llamaBundle)
	if code != exitOK || !strings.Contains(stdout, "65 runs") || strings.Contains(stdout, "kernel ") {
		t.Errorf("exit %d: %s %s", code, stdout, errOut)
	}
}

func TestWhatIfErrors(t *testing.T) {
	bloomBench := filepath.Join("..", "..", "predict", "testdata", "h100-bloom-560m_prefill.bench")
	k := []string{"whatif", "-device", "999", "-kernel", exampleKernel, "-name", "rmsnorm_fused", "-replace", "llama-rmsnorm"}
	with := func(args ...string) []string { return append(append(append([]string{}, k...), args...), llamaBundle) }
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"whatif", llamaBundle}, 2, "give -replace"},
		{[]string{"whatif", "-replace", "llama-rmsnorm", "-kernel", exampleKernel, llamaBundle}, 2, "give -replace, and -kernel with -name"},
		{[]string{"whatif", "-replace", "llama-rmsnorm"}, 2, "kreplay whatif: want 1 argument, got 0"},
		// A misspelt recipe is not taken for an op name.
		{[]string{"whatif", "-replace", "llama-rmsnrom", llamaBundle}, 2, "no such recipe (recipes: llama-rmsnorm, llama-rmsnorm-f32)"},
		{[]string{"whatif", "-replace", "pow,me an", llamaBundle}, 2, `"me an" is neither an op name nor a signature ID`},
		// The launch shape is checked without -kernel too.
		{[]string{"whatif", "-replace", "llama-rmsnorm", "-grid", "foo", llamaBundle}, 2, `-grid "foo": want N, rows or rows/N`},
		{[]string{"whatif", "-replace", "llama-rmsnorm-f32", llamaBundle}, 1, "no run of aten::pow"},
		{[]string{"whatif", "-replace", "pow,,mean", llamaBundle}, 2, "an empty op"},
		{with("-grid", "rows/0"), 2, "want N, rows or rows/N"},
		{with("-block", "2048"), 2, "from 1 to 1024"},
		{with("-shared", "1000000"), 2, "227 KiB"},
		{with("-ticks", "1"), 2, "want 2 or more"},
		{with("-again"), 2, "give -energy too"},
		{with("-again", "-energy", "-no-timeline"), 2, "drop -no-timeline"},
		{with("-removed"), 2, "give -energy too"},
		{with("-removed", "-energy", "-no-timeline"), 2, "drop -no-timeline"},
		{with("-probe-modes", "hot"), 2, "-probe-modes: unknown cache mode"},
		{with("-settle", "0s"), 2, "-settle 0s: want a positive duration"},
		{with("-bench", bloomBench), 1, "no results for workload llama-7b_prefill"},
		{[]string{"whatif", "-device", "999", "-kernel", exampleKernel, "-name", "other", "-replace", "llama-rmsnorm", llamaBundle}, 1, `no extern "C" kernel other`},
		{[]string{"whatif", "-device", "999", "-kernel", "missing.cu", "-name", "k", "-replace", "llama-rmsnorm", llamaBundle}, 1, "missing.cu"},
		{[]string{"whatif", "-device", "999", "-kernel", exampleKernel, "-name", "rmsnorm_fused", "-replace", "mm,silu", llamaBundle}, 1, "are no recipe's"},
	} {
		code, _, e := runCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(e, tc.want) {
			t.Errorf("kreplay %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, e, tc.code, tc.want)
		}
	}
}

// The timeline design's measured run: the bundle's, or why there is none.
func TestWhatIfModelRun(t *testing.T) {
	set, b, err := load(llamaBundle)
	if err != nil {
		t.Fatal(err)
	}
	run, why := whatifModelRun(llamaBundle, b, set)
	if run == nil || why != "" || run.WallS <= 0 || run.EnergyJ <= 0 || !strings.Contains(run.From, "measured.json") {
		t.Errorf("bundle: %+v, %q", run, why)
	}
	if run, why := whatifModelRun("t.json", nil, set); run != nil || !strings.Contains(why, "t.json is a trace") {
		t.Errorf("trace: %+v, %q", run, why)
	}
	other := *set
	other.Source.Workload = "other_prefill"
	if run, why := whatifModelRun(llamaBundle, b, &other); run != nil || !strings.Contains(why, `no run of workload "other_prefill"`) {
		t.Errorf("another workload: %+v, %q", run, why)
	}
}
