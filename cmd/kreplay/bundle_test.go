package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/traces"
)

// copyBundle writes an embedded bundle into a directory.
func copyBundle(t *testing.T, name, dir string) {
	t.Helper()
	fsys, err := traces.Bundle(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dir, fsys); err != nil {
		t.Fatal(err)
	}
}

// Bundles go wherever traces go: inspect, gen (with the bundle's spec),
// report's sets, predict.
func TestBundleArguments(t *testing.T) {
	tmp := t.TempDir()
	bundle := filepath.Join(tmp, "tp2")
	copyBundle(t, "2xh200_llama-7b-tp2_prefill", bundle)
	for _, arg := range []string{bundle, "embedded:2xh200_llama-7b-tp2_prefill"} {
		code, out, e := runCmd(t, "inspect", "-json", "-top", "1", arg)
		if code != 0 {
			t.Fatalf("inspect %s: exit %d: %s", arg, code, e)
		}
		if strings.Count(out, `"workload": "llama-7b-tp2_prefill"`) != 2 || strings.Count(out, `"communication"`) != 2 {
			t.Errorf("inspect %s: not both ranks:\n%.1500s", arg, out)
		}
	}
	// gen of two ranks writes one package of both (bench.GenerateGroup)
	// over a package of one set, whose set.json it removes.
	tpPkg := filepath.Join(tmp, "x")
	os.MkdirAll(tpPkg, 0o755)
	os.WriteFile(filepath.Join(tpPkg, bench.SetFile), []byte("{}"), 0o644)
	if code, _, e := runCmd(t, "gen", "-o", tpPkg, bundle); code != 0 || !strings.Contains(e, "94 signatures of the 2 ranks of workload llama-7b-tp2_prefill") {
		t.Errorf("gen of two ranks: exit %d: %s", code, e)
	}
	for _, f := range []string{bench.SetRankFile(0), bench.SetRankFile(1), bench.SpecFile} {
		if _, err := os.Stat(filepath.Join(tpPkg, f)); err != nil {
			t.Errorf("gen of two ranks: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(tpPkg, bench.SetFile)); err == nil {
		t.Errorf("gen of two ranks left set.json")
	}
	if doc, _ := os.ReadFile(filepath.Join(tpPkg, bench.DocFile)); !bytes.Contains(doc, []byte("gen -o . ../tp2\n")) {
		t.Errorf("doc.go of two ranks:\n%s", doc)
	}
	// A command that takes one trace says what to do with two.
	if code, _, e := runCmd(t, "import", bundle); code != 1 || !strings.Contains(e, "the bundle holds 2 traces, one per rank (rank0.trace.json.gz, rank1.trace.json.gz)") {
		t.Errorf("import of two ranks: exit %d: %s", code, e)
	}

	prefill := filepath.Join(tmp, "prefill")
	copyBundle(t, "h100_bloom-560m_prefill", prefill)
	pkg := filepath.Join(tmp, "pkg")
	if code, _, e := runCmd(t, "gen", "-o", pkg, prefill); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, e)
	}
	spec, _ := os.ReadFile(filepath.Join(pkg, bench.SpecFile))
	want, _ := os.ReadFile(filepath.Join(prefill, "spec.json"))
	if len(spec) == 0 || !bytes.Equal(spec, want) {
		t.Errorf("gen did not embed the bundle's spec: %q", spec)
	}
	if doc, _ := os.ReadFile(filepath.Join(pkg, bench.DocFile)); !bytes.Contains(doc, []byte("gen -o . ../prefill\n")) {
		t.Errorf("doc.go:\n%s", doc)
	}
	set, _ := os.ReadFile(filepath.Join(pkg, bench.SetFile))
	if !bytes.Contains(set, []byte(`"file": "prefill/trace.json.gz"`)) || !bytes.Contains(set, []byte(`"workload": "bloom-560m_prefill"`)) {
		t.Errorf("set source:\n%.600s", set)
	}
	// Generated again from a plain trace, the package loses its spec.
	plain := filepath.Join(tmp, "h100_bloom-560m_prefill.trace.json.gz")
	data, _ := traces.ReadFile(traces.Default)
	os.WriteFile(plain, data, 0o644)
	code, _, e := runCmd(t, "gen", "-o", pkg, plain)
	if _, err := os.Stat(filepath.Join(pkg, bench.SpecFile)); code != 0 || err == nil || !strings.Contains(e, "is a trace, not a bundle: BenchmarkModel runs the built-in model") {
		t.Errorf("gen from a trace: exit %d, spec.json %v: %s", code, err, e)
	}
	code, out, e := runCmd(t, "report", "-sets", prefill, syntheticFile(t))
	if code != 0 || !strings.Contains(out, "workload bloom-560m_prefill (prefill/trace.json.gz") {
		t.Errorf("report -sets BUNDLE: exit %d: %s\n%s", code, e, out)
	}
}

// syntheticFile is SYNTHETIC benchmark output for the prefill set.
func syntheticFile(t *testing.T) string {
	t.Helper()
	path, _ := syntheticBench(t, 1, 1)
	return path
}

// predict's full-model reference: a bundle's measured run by default,
// with errors for what cannot be.
func TestPredictModelReference(t *testing.T) {
	code, out, e := runCmd(t, "predict", "-device", "999")
	if code != exitNoMeasurement || !strings.Contains(out, "h100_bloom-560m_prefill/trace.json.gz") {
		t.Errorf("default predict: exit %d: %s\n%s", code, e, out)
	}
	plain := filepath.Join(t.TempDir(), "w_prefill.trace.json.gz")
	data, _ := traces.ReadFile(traces.Default)
	os.WriteFile(plain, data, 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", "-model", "measured", plain}, "has no measured run"},
	} {
		code, _, e := runCmd(t, tc.args...)
		if code != 1 || !strings.Contains(e, tc.want) {
			t.Errorf("kreplay %v: exit %d, stderr %q; want %q", tc.args, code, e, tc.want)
		}
	}
}

// A package generated from a trace without a spec still has its
// BenchmarkModel, which says why it does not run in a line go test
// prints without -v.
func TestGeneratedNoModelLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a generated package")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	// Inside the module, so that it builds; under testdata and "_", so
	// that ./... leaves it out.
	dir, err := os.MkdirTemp("testdata", "_gen-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if code, _, e := runCmd(t, "gen", "-o", dir, "embedded:2xh200_llama-7b-tp2_prefill.rank0.trace.json.gz"); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, e)
	}
	cmd := exec.Command(goCmd, "test", "-run", "^$", "-bench", "Model", "-benchtime", "1x", "./"+filepath.ToSlash(dir))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test: %v\n%s", err, out)
	}
	want := "kreplay BenchmarkModel/workload=llama-7b-tp2_prefill_rank0/model: no model run: "
	if !bytes.Contains(out, []byte(want)) || !bytes.Contains(out, []byte("runs a model on one GPU")) {
		t.Errorf("go test -bench output lacks %q:\n%s", want, out)
	}
	// Without a GPU, the replay and timeline benchmarks skip, and say so
	// once in a line go test prints without -v.
	if cuda.Init() == nil {
		return // a GPU machine: they replay
	}
	cmd = exec.Command(goCmd, "test", "-run", "^$", "-bench", "Replay|Timeline", "-benchtime", "1x", "./"+filepath.ToSlash(dir))
	if out, err = cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test: %v\n%s", err, out)
	}
	line := strings.SplitN(bench.NoGPULine("x"), ",", 2)[0]
	if n := bytes.Count(out, []byte(line)); n != 1 {
		t.Errorf("go test -bench output has %d lines %q, want 1:\n%s", n, line, out)
	}
}

// standInGPU lets capture run on a machine without a GPU, for tests whose
// runner stands in for one.
func standInGPU(t *testing.T) {
	old := probeGPU
	probeGPU = func() error { return nil }
	t.Cleanup(func() { probeGPU = old })
}

// plainTraceFile writes the embedded prefill trace, gunzipped.
func plainTraceFile(t *testing.T) string {
	t.Helper()
	path, err := traces.WriteGunzipped(traces.Default, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// kreplay capture on a stand-in GPU (internal/runner/testdata: a user's
// command under stand-in torch and pynvml whose profiler exports the
// embedded prefill trace), then the bundle in inspect, gen and predict.
func TestCaptureCommand(t *testing.T) {
	testdata := fakeRunner(t)
	tmp := t.TempDir()
	spec := filepath.Join(tmp, "spec.json")
	os.WriteFile(spec, []byte(`{"version": 1, "name": "mine_prefill", "command": {"argv": ["python3", "fake_command.py"], "dir": "`+testdata+`"},
		"workload": {"kind": "prefill", "batch": 4, "seq": 512}}`), 0o644)
	out := filepath.Join(tmp, "bundle")
	code, stdout, e := runCmd(t, "capture", spec, "-o", out, "-ticks", "5", "-no-binaries")
	if code != 0 {
		t.Fatalf("capture: exit %d: %s", code, e)
	}
	for _, want := range []string{"the kernels' binaries are not recorded", "capture: loading",
		"capture: warming up (at least 3 inferences and 50ms)", "capture: profiling one inference", "capture: bundle " + out + " written"} {
		if !strings.Contains(e, want) {
			t.Errorf("progress lacks %q:\n%s", want, e)
		}
	}
	if !strings.Contains(stdout, "bundle of workload mine_prefill") {
		t.Errorf("stdout %q", stdout)
	}
	if code, out, e := runCmd(t, "inspect", "-top", "1", out); code != 0 || !strings.Contains(out, "bundle/trace.json.gz: workload mine_prefill") {
		t.Errorf("inspect: exit %d: %s\n%s", code, e, out)
	}
	code, stdout, e = runCmd(t, "predict", "-device", "999", out)
	if code != exitNoMeasurement || !strings.Contains(stdout, "no usable GPU") {
		t.Errorf("predict: exit %d: %s\n%s", code, e, stdout)
	}
	pkg := filepath.Join(tmp, "pkg")
	if code, _, e := runCmd(t, "gen", "-o", pkg, out); code != 0 {
		t.Errorf("gen: exit %d: %s", code, e)
	}
	if a, b := readFile(t, filepath.Join(pkg, "spec.json")), readFile(t, filepath.Join(out, "spec.json")); a != b {
		t.Errorf("gen's spec.json differs from the bundle's")
	}
	if code, _, e := runCmd(t, "capture", spec, "-o", out); code != 1 || !strings.Contains(e, out+" exists (-force replaces a bundle)") {
		t.Errorf("capture over a bundle: exit %d: %s", code, e)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Bad input to capture: clear errors, exit status non-zero, nothing
// written.
func TestCaptureErrors(t *testing.T) {
	tmp := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(tmp, name)
		os.WriteFile(p, []byte(data), 0o644)
		return p
	}
	const w = `"workload": {"kind": "prefill", "seq": 8}`
	unknown := write("unknown.json", `{"version": 1, "model": {"builtin": "llama-7b"}, `+w+`, "batchsize": 4}`)
	dtype := write("dtype.json", `{"version": 1, "model": {"builtin": "llama-7b"}, `+w+`, "dtype": "float16"}`)
	noConfig := write("noconfig.json", `{"version": 1, "model": {"config": "models/x/config.json"}, `+w+`}`)
	two := write("two.json", `{"version": 1, "model": {"builtin": "llama-7b"}, `+w+`, "devices": [0, 1]}`)
	out := filepath.Join(tmp, "out")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"capture", unknown}, 2, "kreplay capture: -o DIR is required"},
		{[]string{"capture", "-o", out}, 2, "kreplay capture: want 1 argument, got 0"},
		{[]string{"capture", unknown, "-o", out}, 1, unknown + `: unknown field "batchsize"`},
		{[]string{"capture", dtype, "-o", out}, 1, dtype + `: dtype: "float16" is not one of f16, bf16, f32`},
		{[]string{"capture", noConfig, "-o", out}, 1, "config file " + filepath.Join(tmp, "models/x/config.json") + " does not exist"},
		{[]string{"capture", filepath.Join(tmp, "none.json"), "-o", out}, 1, "none.json: no such file"},
		{[]string{"capture", two, "-o", out}, 1, "devices [0 1]: kreplay's runner runs a model on one GPU"},
		{[]string{"capture", two, "-o", out, "-ticks", "1"}, 2, "-ticks 1: want 2 or more"},
		{[]string{"capture", two, "-o", out, "-profile-warmup", "-1"}, 2, "-profile-warmup -1: want 0 or more"},
	} {
		code, _, e := runCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(e, tc.want) {
			t.Errorf("kreplay %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, e, tc.code, tc.want)
		}
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 4 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("capture left files: %v", names)
	}
}

// fakeRunner sets up kreplay's runner on stand-in torch and pynvml
// (internal/runner/testdata) whose profiler exports the embedded prefill
// trace, on a stand-in GPU, and returns that testdata directory; it skips
// without python3.
func fakeRunner(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	testdata, err := filepath.Abs(filepath.Join("..", "..", "internal", "runner", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	standInGPU(t)
	// The fake inferences need no seconds of warm-up (workload's tests
	// check that the warm-up takes its least time).
	old := captureWarmupTime
	captureWarmupTime = 50 * time.Millisecond
	t.Cleanup(func() { captureWarmupTime = old })
	t.Setenv("PYTHONPATH", filepath.Join(testdata, "fakemods"))
	t.Setenv("FAKE_TRACE", plainTraceFile(t))
	return testdata
}

// inspect summarises a bundle's recorded host schedules after its
// signatures: inferences, calls per kind, own times and gaps; and adds
// the host model's check with the trace's own kernel times against the
// measured run.
func TestInspectSchedules(t *testing.T) {
	code, stdout, stderr := runCmd(t, "inspect", "-top", "0", filepath.Join("..", "..", "predict", "testdata", "inference", "inf-gpt2m-eager-decode-b1", "bundle"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"\nhost schedule schedule.p0.txt.gz: 10 inferences (0 after a synchronize), span median ",
		"the recorder's probe 447 ns a call\n", "\n  L   5072.0 a inference  own ",
		"with the trace's own kernel times and no host probe: wall median 94.42 ms, mean 94.20 ms against the measured median 94.37 ms (median +0.0%, mean -0.2%) and the measured mean 94.95 ms (mean -0.8%); a check of the host model, not a prediction"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("inspect lacks %q:\n%s", want, stdout)
		}
	}
}
