package replay

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/kreplay/kreplay/signatures"
)

// TestFamiliesOnRecordedRuns runs -families over GPU runs that measured
// every signature one by one (testdata/families): each member's
// "measurement" is its recorded result, so the interpolated members can
// be held to their own measured times. It checks the family code against
// what these runs gave when it was first run on them (results/cpu/families/):
// how many members are interpolated, the predicted GPU time against every
// member measured (the -exact run), and the worst interpolated member.
func TestFamiliesOnRecordedRuns(t *testing.T) {
	for _, tc := range []struct {
		name         string
		set          func(t *testing.T) *signatures.Set
		results      func(t *testing.T) map[string]*Result
		interpolated int
		total        float64 // the predicted GPU time against -exact's, relative
		worst        float64 // the interpolated member farthest from its own time, relative
	}{
		// BLOOM-560M generate (16 new tokens) on an H100: results/h100/bench-all/.
		{"h100 bloom-560m generate", benchSet("../bench/bloom_560m_generate/set.json"),
			benchResults("testdata/families/h100-bench-all.bench.gz", "bloom-560m_generate"), 170, 0.00007, 0.026},
		// The hook recorder's judged decodes (8 new tokens) on an H200: results/h200/inference-hook/.
		{"h200 opt-1.3b decode", traceSet("../predict/testdata/inference/inf-opt13b-eager-decode-b8/bundle/trace.json.gz"),
			jsonResults("testdata/families/h200-inf-opt13b-eager-decode-b8.results.json.gz"), 2, -0.00002, -0.070},
		{"h200 phi-3 decode", traceSet("../predict/testdata/inference/inf-phi3-sdpa-decode-b8/bundle/trace.json.gz"),
			jsonResults("testdata/families/h200-inf-phi3-sdpa-decode-b8.results.json.gz"), 1, 0.00001, 0.101},
		// Issue 45's decode of 32 new tokens on an H200 (results/h200/predict-speed/ raw2.tar.xz:
		// the times-only prediction, every signature measured), its set imported from the bundle's trace.
		{"h200 pythia-1.4b decode, 32 tokens", gzSet("testdata/families/h200-pythia14b-decode-b8-t32.set.json.gz"),
			jsonResults("testdata/families/h200-pythia14b-decode-b8-t32.results.json.gz"), 98, 0, -0.056},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, res := tc.set(t), tc.results(t)
			var progress strings.Builder
			entries := (&Device{}).runSet(set, SuiteOptions{Families: true, Progress: &progress}, recordedMeasure(res))
			n, total, worst := familyErrors(set, entries, res)
			if testing.Verbose() {
				for i, e := range entries {
					if r := res[set.Signatures[i].ID]; e.Interpolated != "" && r != nil {
						t.Logf("interpolated %s %s: %.3f µs, its own %.3f µs (%+.1f%%)", e.ID, e.Label, e.ReplayNS()/1e3, r.ReportedNS()/1e3, 100*(e.ReplayNS()/r.ReportedNS()-1))
					}
				}
			}
			for _, l := range strings.Split(progress.String(), "\n") {
				if strings.HasPrefix(l, "family ") {
					t.Log(l)
				}
			}
			t.Logf("%d of %d interpolated; GPU time %+.4f%% against every member measured; worst member %+.1f%%", n, len(res), 100*total, 100*worst)
			if n != tc.interpolated || math.Abs(total-tc.total) > 0.0001 || math.Abs(worst-tc.worst) > 0.001 {
				t.Errorf("%d interpolated, total %+.5f, worst %+.4f; want %d, %+.5f, %+.4f", n, total, worst, tc.interpolated, tc.total, tc.worst)
			}
		})
	}
}

// recordedMeasure "measures" a signature by its recorded result.
func recordedMeasure(res map[string]*Result) measureFunc {
	return func(s *signatures.Signature, o SuiteOptions, e *Entry) error {
		r, ok := res[s.ID]
		if !ok {
			e.Err = "measure: not in the recorded run"
			return fmt.Errorf("%s: not in the recorded run", s.ID)
		}
		e.Result = r
		return nil
	}
}

// familyErrors returns how many entries were interpolated, the GPU time
// (replay time x count) they give against the recorded results', and the
// interpolated entry farthest from its recorded time.
func familyErrors(set *signatures.Set, entries []Entry, res map[string]*Result) (n int, total, worst float64) {
	var exact, got float64
	for i, e := range entries {
		r := res[set.Signatures[i].ID]
		if e.Result == nil || r == nil {
			continue
		}
		c := float64(set.Signatures[i].Count)
		exact += c * r.ReportedNS()
		got += c * e.ReplayNS()
		if e.Interpolated != "" {
			n++
			if d := e.ReplayNS()/r.ReportedNS() - 1; math.Abs(d) > math.Abs(worst) {
				worst = d
			}
		}
	}
	return n, got/exact - 1, worst
}

func benchSet(path string) func(t *testing.T) *signatures.Set {
	return func(t *testing.T) *signatures.Set {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		set, err := signatures.ReadSet(f, filepath.Base(path))
		if err != nil {
			t.Fatal(err)
		}
		return set
	}
}

// gzSet reads a gzipped signature set.
func gzSet(path string) func(t *testing.T) *signatures.Set {
	return func(t *testing.T) *signatures.Set {
		set, err := signatures.ReadSet(gunzipFile(t, path), filepath.Base(path))
		if err != nil {
			t.Fatal(err)
		}
		return set
	}
}

func traceSet(path string) func(t *testing.T) *signatures.Set {
	return func(t *testing.T) *signatures.Set {
		set, err := signatures.Load(path, signatures.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return set
	}
}

// benchResults reads workload's BenchmarkReplay results (ns/op: the
// reported time; the output holds no spread) from a gzip'ed bench file.
func benchResults(path, workload string) func(t *testing.T) map[string]*Result {
	return func(t *testing.T) map[string]*Result {
		zr := gunzipFile(t, path)
		prefix := "Replay/workload=" + workload + "/sig="
		res := map[string]*Result{}
		br := benchfmt.NewReader(zr, path)
		for br.Scan() {
			r, ok := br.Result().(*benchfmt.Result)
			if !ok || !strings.HasPrefix(string(r.Name), prefix) {
				continue
			}
			id := strings.TrimPrefix(string(r.Name), prefix)
			if i := strings.LastIndex(id, "-"); i > 0 {
				id = id[:i] // the GOMAXPROCS suffix
			}
			if v, ok := r.Value("sec/op"); ok {
				ns := v * 1e9
				res[id] = &Result{Stats: Stats{MedianNS: ns, LoNS: ns, HiNS: ns}}
			}
		}
		if err := br.Err(); err != nil {
			t.Fatal(err)
		}
		if len(res) == 0 {
			t.Fatalf("%s: no BenchmarkReplay results of %s", path, workload)
		}
		return res
	}
}

// jsonResults reads a map from signature ID to result (a run's progress
// file reduced to its results' statistics).
func jsonResults(path string) func(t *testing.T) map[string]*Result {
	return func(t *testing.T) map[string]*Result {
		res := map[string]*Result{}
		if err := json.NewDecoder(gunzipFile(t, path)).Decode(&res); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return res
	}
}

func gunzipFile(t *testing.T, path string) *gzip.Reader {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	t.Cleanup(func() { zr.Close() })
	return zr
}
