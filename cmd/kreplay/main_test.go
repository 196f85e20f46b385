package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// The default inspect output on the embedded BLOOM-560M prefill trace is
// checked against a golden file, so report changes are seen in review.
func TestInspectDefaultGolden(t *testing.T) {
	code, out, errOut := runCmd(t, "inspect")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden := filepath.Join("testdata", "inspect_default.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), out); diff != "" {
		t.Errorf("inspect output differs from %s (-want +got; rerun with -update if intended):\n%s", golden, diff)
	}
}

// Importing to a file and inspecting the file prints what inspecting the
// trace prints; the file has the mode a plain create gives.
func TestImportThenInspect(t *testing.T) {
	set := filepath.Join(t.TempDir(), "set.json")
	old := syscall.Umask(0o022)
	code, _, e := runCmd(t, "import", "embedded:h100_llama-7b_prefill.trace.json.gz", "-o", set)
	syscall.Umask(old)
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, e)
	}
	if st, err := os.Stat(set); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("set file mode %v (%v), want 0644 under umask 022", st.Mode().Perm(), err)
	}
	_, fromSet, _ := runCmd(t, "inspect", "-top", "5", set)
	_, fromTrace, _ := runCmd(t, "inspect", "-top", "5", "embedded:h100_llama-7b_prefill.trace.json.gz")
	if fromSet != fromTrace || !strings.Contains(fromSet, "llama-7b_prefill") {
		t.Errorf("inspect of the set:\n%s\ninspect of the trace:\n%s", fromSet, fromTrace)
	}
}

func TestInspectJSONSeveralFiles(t *testing.T) {
	code, out, e := runCmd(t, "inspect", "-json", "-top", "2",
		"embedded:2xh200_llama-7b-tp2_prefill.rank0.trace.json.gz", "embedded:2xh200_llama-7b-tp2_prefill.rank1.trace.json.gz")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	if strings.Count(out, `"workload": "llama-7b-tp2_prefill"`) != 2 || !strings.Contains(out, `"rank": 1`) ||
		strings.Count(out, `"communication"`) != 2 {
		t.Errorf("JSON does not hold both ranks:\n%.2000s", out)
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"traceEvents":[{"cat":"kernel","name":"k","ts":1,"dur":1,"args":{"grid":[1,1,1]}}`), 0o644)
	garbage := filepath.Join(dir, "garbage.txt")
	os.WriteFile(garbage, []byte("garbage\nnot benchmark output\n"), 0o644)
	missing := filepath.Join(dir, "missing", "set.json")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"import", "/no/such/file"}, 1, "/no/such/file"},
		{[]string{"inspect", "embedded:nope"}, 1, "no such embedded bundle or trace"},
		// A bad file is reported and the good one is still inspected.
		{[]string{"inspect", bad, "embedded:h100_bloom-560m_prefill.trace.json.gz"}, 1, "bad.json: event 0"},
		// Output into a directory that does not exist names the path given.
		{[]string{"import", "embedded:h100_bloom-560m_prefill", "-o", missing}, 1, "open " + missing + ": no such file or directory"},
		// Input that is not benchmark output is an error, not an empty report.
		{[]string{"diff", garbage, garbage}, 1, garbage + ": no benchmark lines"},
		{[]string{"report", garbage}, 1, garbage + ": no benchmark lines"},
	} {
		code, out, e := runCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(e, tc.want) {
			t.Errorf("kreplay %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, e, tc.code, tc.want)
		}
		if len(tc.args) == 3 && tc.args[0] == "inspect" && !strings.Contains(out, "bloom-560m_prefill") {
			t.Errorf("kreplay %v: the good file was not inspected", tc.args)
		}
	}
}

func TestReadProgress(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run.jsonl")
	if got, err := readProgress(p); err != nil || len(got) != 0 {
		t.Fatalf("missing file: %v, %v", got, err)
	}
	good := `{"file":"a.json.gz","workload":"w","entry":{"id":"s1","result":{"median_ns":5}}}`
	// A torn last line, as a killed run leaves, is ignored.
	os.WriteFile(p, []byte(good+"\n"+`{"file":"a.json.gz","wor`), 0o644)
	got, err := readProgress(p)
	if err != nil || got["a.json.gz"]["s1"].Result.MedianNS != 5 {
		t.Fatalf("got %+v, %v", got, err)
	}
	// A bad line in the middle is an error naming it.
	os.WriteFile(p, []byte("garbage\n"+good+"\n"), 0o644)
	if _, err := readProgress(p); err == nil || !strings.Contains(err.Error(), ":1:") {
		t.Fatalf("error %v", err)
	}
}

// timeline exports the embedded prefill with the recorded replay times
// beside it; without benchmark lines it is an error.
func TestTimelineCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "t.json")
	code, stdout, e := runCmd(t, "timeline", "-bench", filepath.Join("..", "..", "predict", "testdata", "h100-bloom-560m_prefill.bench"), "-o", out)
	if code != 0 || !strings.Contains(stdout, "703 invocations of bloom-560m_prefill, 45 signatures with a replayed time") {
		t.Fatalf("exit %d: %s %s", code, stdout, e)
	}
	b, err := os.ReadFile(out)
	if err != nil || !bytes.Contains(b, []byte(`"cat":"kreplay_replay"`)) || !bytes.Contains(b, []byte(`"path":"own kernel: add"`)) {
		t.Errorf("export (%v): %.300s", err, b)
	}
	if code, _, e := runCmd(t, "timeline", "-bench", filepath.Join("testdata", "inspect_default.golden"), "-o", out); code != 1 || !strings.Contains(e, "no benchmark lines") {
		t.Errorf("timeline with a non-benchmark file: exit %d: %s", code, e)
	}
}

// inspect shows the causal-scores heuristic where it applies (the BLOOM
// prefill's softmax over f16[4,16,512,512] scores), and -causal-scores=false
// switches it off.
func TestInspectCausalScores(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{{[]string{"inspect", "-top", "5"}, true}, {[]string{"inspect", "-top", "5", "-causal-scores=false"}, false}} {
		code, stdout, stderr := runCmd(t, tc.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
		}
		if got := strings.Contains(stdout, "inputs: causal scores"); got != tc.want {
			t.Errorf("%v: shows causal scores %v; want %v", tc.args, got, tc.want)
		}
	}
}

// -causal-scores sets tier3.Config.UniformScores for the command that
// parsed it, and nothing else.
func TestTier3Config(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		flag    bool
		uniform bool
	}{
		{nil, true, false},
		{[]string{"-causal-scores=false"}, true, true},
		{[]string{"-causal-scores=true"}, true, false},
		{nil, false, false},
	} {
		fs := newFlags("test")
		if tc.flag {
			causalScoresFlag(fs)
		}
		if _, err := parseInterspersed(fs, tc.args); err != nil {
			t.Fatal(err)
		}
		if got := tier3Config(fs); got.UniformScores != tc.uniform || got.NoFaithful {
			t.Errorf("%v (flag %v): %+v, want UniformScores %v", tc.args, tc.flag, got, tc.uniform)
		}
	}
}
