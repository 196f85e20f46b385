package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/predict"
	"github.com/kreplay/kreplay/signatures"
)

// gen writes the same package twice, with the source in its go:generate
// directive: an embedded trace as named, a file relative to the package.
func TestGenCommand(t *testing.T) {
	dir := t.TempDir()
	read := func(d string) map[string][]byte {
		m := map[string][]byte{}
		for _, name := range []string{bench.SetFile, bench.DocFile, bench.ReplayFile, bench.SpecFile} {
			b, err := os.ReadFile(filepath.Join(d, name))
			if errors.Is(err, os.ErrNotExist) && name == bench.SpecFile {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			m[name] = b
		}
		return m
	}
	const src = "embedded:h100_bloom-560m_prefill.trace.json.gz"
	if code, _, e := runCmd(t, "gen", "-o", dir, src); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, e)
	}
	first := read(dir)
	if code, _, e := runCmd(t, "gen", src, "-o", dir); code != 0 {
		t.Fatalf("gen again: exit %d: %s", code, e)
	}
	second := read(dir)
	for name := range first {
		if !bytes.Equal(first[name], second[name]) {
			t.Errorf("%s differs between two gen runs", name)
		}
	}
	if !bytes.Contains(first[bench.DocFile], []byte("gen -o . "+src+"\n")) {
		t.Errorf("doc.go:\n%s", first[bench.DocFile])
	}
	// The committed package is what gen writes.
	committed := read(filepath.Join("..", "..", "bench", "bloom_560m_prefill"))
	for name := range first {
		if !bytes.Equal(first[name], committed[name]) {
			t.Errorf("bench/bloom_560m_prefill/%s is not what kreplay gen writes: run go generate ./bench/...", name)
		}
	}

	// From the set file in another directory, into the default package
	// name.
	sub := filepath.Join(dir, "pkg")
	if code, _, e := runCmd(t, "gen", "-o", sub, "-pkg", "mine", filepath.Join(dir, bench.SetFile)); code != 0 {
		t.Fatalf("gen from the set: exit %d: %s", code, e)
	}
	doc := read(sub)[bench.DocFile]
	if !bytes.Contains(doc, []byte("package mine\n")) || !bytes.Contains(doc, []byte("gen -o . ../set.json\n")) {
		t.Errorf("doc.go:\n%s", doc)
	}
	if !bytes.Equal(read(sub)[bench.SetFile], first[bench.SetFile]) {
		t.Errorf("the set read back and written again differs")
	}
	// From a set file there is no spec: a spec.json left there goes.
	if _, ok := read(sub)[bench.SpecFile]; ok {
		t.Errorf("gen from a set file wrote spec.json")
	}
	if first[bench.SpecFile] == nil {
		t.Errorf("gen from an embedded bundle's trace wrote no spec.json")
	}
	if code, _, _ := runCmd(t, "gen"); code != 2 {
		t.Errorf("gen without a set: exit %d, want 2", code)
	}
}

// syntheticBench writes SYNTHETIC benchmark output for the committed
// prefill set: every signature (parts excepted) at its traced median
// times factor, in runs runs.
func syntheticBench(t *testing.T, factor float64, runs int) (path string, set *signatures.Set) {
	t.Helper()
	setPath := filepath.Join("..", "..", "bench", "bloom_560m_prefill", bench.SetFile)
	sets, err := predict.ReadSetFiles([]string{setPath})
	if err != nil {
		t.Fatal(err)
	}
	set = sets[0]
	var b strings.Builder
	w := bench.Workload(set.Source)
	for _, s := range set.Signatures {
		if s.PartOf != "" {
			continue
		}
		for r := range runs {
			fmt.Fprintf(&b, "BenchmarkReplay/%s-4\t1\t%.3f ns/op\n", bench.SignatureName(w, s.ID), float64(s.TracedNS.Median)*factor*(1+0.01*float64(r)))
		}
	}
	path = filepath.Join(t.TempDir(), fmt.Sprintf("x%g.bench", factor))
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, set
}

func TestReportCommand(t *testing.T) {
	file, _ := syntheticBench(t, 1, 6)
	setPath := filepath.Join("..", "..", "bench", "bloom_560m_prefill", bench.SetFile)
	plots := t.TempDir()
	code, out, e := runCmd(t, "report", "-sets", setPath, "-plots", plots, file)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, e)
	}
	for _, want := range []string{"workload bloom-560m_prefill", "predicted GPU time", "top 15 signatures"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(plots, "*")); len(m) != 4 {
		t.Errorf("plots %v", m)
	}
	// Without -sets: the generated packages' sets, found from here.
	code, out, e = runCmd(t, "report", "-json", file)
	if code != 0 {
		t.Fatalf("report -json: exit %d: %s", code, e)
	}
	var p predict.Prediction
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Workloads) != 1 || p.Workloads[0].Missing != 0 || !slices.Contains(p.NoResults, "bloom-560m_generate") {
		t.Errorf("report -json: %d workloads, no results %v", len(p.Workloads), p.NoResults)
	}
	if code, _, _ := runCmd(t, "report"); code != 2 {
		t.Errorf("report without files: exit %d, want 2", code)
	}
}

func TestDiffCommand(t *testing.T) {
	a, _ := syntheticBench(t, 1, 6)
	b, _ := syntheticBench(t, 1.5, 6)
	code, out, e := runCmd(t, "diff", a, b)
	if code != 0 {
		t.Fatalf("diff: exit %d: %s", code, e)
	}
	if !strings.Contains(out, "+50.00%") || !strings.Contains(out, "predicted GPU time over 45 signatures") {
		t.Errorf("diff:\n%s", out)
	}
	code, out, e = runCmd(t, "diff", "-json", a, a)
	if code != 0 {
		t.Fatalf("diff -json: exit %d: %s", code, e)
	}
	var c predict.Comparison
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Workloads) != 1 || c.Workloads[0].Faster+c.Workloads[0].Slower != 0 || c.Workloads[0].Total.Significant {
		t.Errorf("a file against itself: %+v", c.Workloads)
	}
	if code, _, _ := runCmd(t, "diff", a); code != 2 {
		t.Errorf("diff of one file: exit %d, want 2", code)
	}
}

// Outside a module with generated packages, report and diff take the
// signature sets of the outputs' workloads from the embedded bundles,
// and read gzip'ed outputs as they read plain ones.
func TestReportEmbeddedSetsAndGzip(t *testing.T) {
	plain, _ := syntheticBench(t, 1, 6)
	slower, _ := syntheticBench(t, 1.5, 6)
	dir := t.TempDir()
	gz := filepath.Join(dir, "x1.bench.gz")
	writeGzip(t, gz, readFile(t, plain))
	t.Chdir(dir)
	code, out, e := runCmd(t, "report", gz)
	if code != 0 || !strings.Contains(out, "workload bloom-560m_prefill") || strings.Contains(e, "pass -sets") {
		t.Fatalf("report outside the module: exit %d: %s\n%s", code, e, out)
	}
	if _, plainOut, _ := runCmd(t, "report", plain); plainOut != out {
		t.Errorf("report of the gzip'ed output differs from the plain one's")
	}
	code, out, e = runCmd(t, "diff", gz, slower)
	if code != 0 || !strings.Contains(out, "predicted GPU time over 45 signatures") {
		t.Errorf("diff outside the module: exit %d: %s\n%s", code, e, out)
	}
	// A workload no set has is said, with what to do.
	other := filepath.Join(dir, "other.bench")
	os.WriteFile(other, []byte("BenchmarkReplay/workload=nobody_prefill/sig=0123456789ab-4\t1\t5.0 ns/op\n"), 0o644)
	if _, _, e := runCmd(t, "report", other); !strings.Contains(e, "no signature set of nobody_prefill") || !strings.Contains(e, "pass -sets") {
		t.Errorf("report of an unknown workload: %s", e)
	}
}

// gen writes into ./PKG by default, not into a bench/ directory.
func TestGenDefaultDir(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if code, _, e := runCmd(t, "gen", "embedded:h100_bloom-560m_prefill.trace.json.gz"); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, e)
	}
	if _, err := os.Stat(filepath.Join(dir, "bloom_560m_prefill", bench.SetFile)); err != nil {
		t.Errorf("gen's default directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bench")); err == nil {
		t.Errorf("gen wrote into bench/")
	}
}

func writeGzip(t *testing.T, path, text string) {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(text))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
