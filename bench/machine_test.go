package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"

	"github.com/kreplay/kreplay/replay"
)

// WriteConfig writes the lines of the one machine as machine lines, which
// benchfmt passes over; MachineLinesAsConfig reads them back as
// configuration, and leaves output written before them as it is.
func TestMachineLines(t *testing.T) {
	var b bytes.Buffer
	WriteConfig(&b, []replay.ConfigItem{{Key: "gpu", Value: "NVIDIA H100"}, {Key: replay.KeyGPUUUID, Value: "GPU-1"},
		{Key: "peak-copy-gbps", Value: "3000.6"}, {Key: "peaks-measured", Value: "2026-11-25T03:23:23Z"}, {Key: "trace-gpu", Value: "NVIDIA H100"}})
	want := "gpu: NVIDIA H100\n# gpu-uuid: GPU-1\n# peak-copy-gbps: 3000.6\n# peaks-measured: 2026-11-25T03:23:23Z\ntrace-gpu: NVIDIA H100\n"
	if b.String() != want {
		t.Fatalf("WriteConfig wrote\n%s\nwant\n%s", b.String(), want)
	}
	out := b.String() + "# peak-note: a comment of another kind\n# other: kept as a comment\nBenchmarkX-4\t1\t5 ns/op\n"
	if got := configKeys(t, []byte(out)); got != "gpu trace-gpu" {
		t.Errorf("benchfmt reads the configuration %q, want gpu and trace-gpu only", got)
	}
	if got := configKeys(t, MachineLinesAsConfig([]byte(out))); got != "gpu gpu-uuid peak-copy-gbps peaks-measured trace-gpu peak-note" {
		t.Errorf("read back, the configuration is %q", got)
	}
	old := "gpu-uuid: GPU-1\npeak-copy-gbps: 1\nBenchmarkX-4\t1\t5 ns/op\n"
	if got := string(MachineLinesAsConfig([]byte(old))); got != old {
		t.Errorf("output without machine lines changed:\n%s", got)
	}
}

// configKeys lists the file configuration keys of the first result benchfmt
// reads from out.
func configKeys(t *testing.T, out []byte) string {
	t.Helper()
	r := benchfmt.NewReader(bytes.NewReader(out), "out")
	for r.Scan() {
		if res, ok := r.Result().(*benchfmt.Result); ok {
			var keys []string
			for _, c := range res.Config {
				if c.File {
					keys = append(keys, c.Key)
				}
			}
			return strings.Join(keys, " ")
		}
	}
	t.Fatalf("no result in %q", out)
	return ""
}

// Two outputs recorded on two H100s (their peaks cached under two GPU
// UUIDs), compared as `benchstat -col .file A B` compares them: with its
// default -table .config and -row .fullname, every result of both falls
// in one table, and the rows have both files' columns. Written as
// kreplay writes output now (the recorded outputs' configuration lines
// rewritten through WriteConfig, with a GPU UUID each, as today's have);
// as they were recorded, their peaks split them into two tables.
func TestTwoGPUsCompareInBenchstat(t *testing.T) {
	var recorded, rewritten [2][]byte
	for i, name := range []string{"h100-bloom-560m_prefill.bench", "h100-bloom-560m_prefill.energy.bench"} {
		b, err := os.ReadFile(filepath.Join("..", "predict", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		recorded[i] = b
		rewritten[i] = rewriteConfig(b, "GPU-"+name)
	}
	tables, _ := benchstatLayout(t, recorded)
	if tables < 2 {
		t.Fatalf("as recorded: %d table(s); the test no longer shows the split it guards against", tables)
	}
	tables, cols := benchstatLayout(t, rewritten)
	if tables != 1 || cols == 0 {
		t.Errorf("as written now: %d tables, %d rows with both files; want 1 table whose rows compare the two", tables, cols)
	}
}

// configLine matches a benchfmt configuration line.
var configLine = regexp.MustCompile(`^([a-z][^\sA-Z:]*): (.*)$`)

// rewriteConfig rewrites out's configuration lines through WriteConfig,
// with a gpu-uuid line of uuid after its gpu line.
func rewriteConfig(out []byte, uuid string) []byte {
	var b bytes.Buffer
	for _, l := range strings.SplitAfter(string(out), "\n") {
		m := configLine.FindStringSubmatch(strings.TrimSuffix(l, "\n"))
		if m == nil {
			b.WriteString(l)
			continue
		}
		items := []replay.ConfigItem{{Key: m[1], Value: m[2]}}
		if m[1] == "gpu" {
			items = append(items, replay.ConfigItem{Key: replay.KeyGPUUUID, Value: uuid})
		}
		WriteConfig(&b, items)
	}
	return b.Bytes()
}

// benchstatLayout projects the results of two outputs as benchstat does
// with -col .file and its defaults (-table .config -row .fullname), and
// returns the number of tables and the number of rows with a value from
// each output.
func benchstatLayout(t *testing.T, outs [2][]byte) (tables, both int) {
	t.Helper()
	var p benchproc.ProjectionParser
	tableBy, err := p.Parse(".config", nil)
	if err != nil {
		t.Fatal(err)
	}
	rowBy, err := p.Parse(".fullname", nil)
	if err != nil {
		t.Fatal(err)
	}
	colBy, err := p.Parse(".file", nil)
	if err != nil {
		t.Fatal(err)
	}
	tableSet := map[benchproc.Key]bool{}
	cells := map[benchproc.Key]map[benchproc.Key]bool{}
	dir := t.TempDir()
	paths := []string{filepath.Join(dir, "a.bench"), filepath.Join(dir, "b.bench")}
	for i, out := range outs {
		if err := os.WriteFile(paths[i], out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := benchfmt.Files{Paths: paths} // as benchstat reads its arguments, with their .file
	for files.Scan() {
		res, ok := files.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		tableSet[tableBy.Project(res)] = true
		row := rowBy.Project(res)
		if cells[row] == nil {
			cells[row] = map[benchproc.Key]bool{}
		}
		cells[row][colBy.Project(res)] = true
	}
	if err := files.Err(); err != nil {
		t.Fatal(err)
	}
	for _, cols := range cells {
		if len(cols) == 2 {
			both++
		}
	}
	return len(tableSet), both
}

// MachineLinesAsConfig changes only machine lines, each into the line
// after its prefix, and reading its output again changes nothing.
func FuzzMachineLinesAsConfig(f *testing.F) {
	f.Add([]byte("gpu: H100\n# gpu-uuid: GPU-1\n# peak-copy-gbps: 3000\n# other: x\nBenchmarkX 1 5 ns/op\n"))
	f.Add([]byte("# peaks-measured: 2026-11-25T03:23:23Z"))
	f.Add([]byte("# # peak-x: 1\n#peak-y: 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out := MachineLinesAsConfig(data)
		in, got := bytes.SplitAfter(data, []byte("\n")), bytes.SplitAfter(out, []byte("\n"))
		if len(in) != len(got) {
			t.Fatalf("%d lines became %d", len(in), len(got))
		}
		for i := range in {
			if !bytes.Equal(in[i], got[i]) && !bytes.Equal(in[i], append([]byte(MachinePrefix), got[i]...)) {
				t.Fatalf("line %q became %q", in[i], got[i])
			}
		}
		if again := MachineLinesAsConfig(out); !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q then %q", out, again)
		}
	})
}
