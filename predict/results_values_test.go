package predict

import (
	"math"
	"os"
	"strings"
	"testing"
)

// A result with a value that is not finite, negative or absurdly large is
// skipped with a warning naming the input, the line and the benchmark;
// the results before and after it are read.
func TestReadResultsRefusesBadValues(t *testing.T) {
	const good = "BenchmarkReplay/workload=w/sig=aaaaaaaaaaaa-4\t1\t5.0 ns/op\n"
	const name = "Replay/workload=w/sig=bbbbbbbbbbbb-4"
	for _, tc := range []struct {
		name, values, want string
	}{
		{"NaN ns", "NaN ns/op", "ns/op is NaN, not a finite number"},
		{"Inf ns", "+Inf ns/op", "ns/op is +Inf, not a finite number"},
		{"negative ns", "-9.2e18 ns/op", "ns/op is -9.2e+18, negative"},
		{"huge ns", "1e308 ns/op", "ns/op is 1e+308, more than 1e+15"},
		{"huge sec", "2e6 sec/op", "ns/op is 2e+15, more than 1e+15"},
		{"negative J", "5 ns/op\t-1 J/op", "J/op is -1, negative"},
		{"NaN W", "5 ns/op\tNaN W", "W is NaN, not a finite number"},
		{"huge other", "5 ns/op\t1e20 tokens", "tokens is 1e+20, more than 1e+15"},
		{"negative skipped-ns", "5 ns/op\t-3 skipped-ns", "skipped-ns is -3, negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := good + "Benchmark" + name + "\t1\t" + tc.values + "\n" + good
			rs, err := ReadResults([]Input{input("x.bench", out)})
			if err != nil {
				t.Fatal(err)
			}
			w := rs.Workload("w")
			if w == nil || w.Sigs["aaaaaaaaaaaa"].Runs() != 2 {
				t.Fatalf("the good lines around the bad one: %+v", w)
			}
			if s := w.Sigs["bbbbbbbbbbbb"]; s != nil {
				t.Errorf("the bad result was kept: %+v", s)
			}
			want := "x.bench:2: Benchmark" + name + ": " + tc.want
			if !hasWarning(rs.Warnings, want) {
				t.Errorf("warnings %q, want one starting %q", rs.Warnings, want)
			}
		})
	}
}

// Zero (in a unit benchfmt keeps as written) and the largest accepted value are kept.
func TestReadResultsKeepsEdgeValues(t *testing.T) {
	out := "BenchmarkReplay/workload=w/sig=aaaaaaaaaaaa-4\t1\t1 ns/op\t0 J/op\n" +
		"BenchmarkReplay/workload=w/sig=aaaaaaaaaaaa-4\t1\t1e15 ns/op\t1e15 J/op\n"
	rs, err := ReadResults([]Input{input("x.bench", out)})
	if err != nil {
		t.Fatal(err)
	}
	s := rs.Workload("w").Sigs["aaaaaaaaaaaa"]
	if s.Runs() != 2 || math.Abs(s.NS[1]-1e15) > 1 || s.Joules[0] != 0 || len(rs.Warnings) != 0 {
		t.Errorf("samples %+v, warnings %q", s, rs.Warnings)
	}
}

func hasWarning(ws []string, prefix string) bool {
	for _, w := range ws {
		if strings.HasPrefix(w, prefix) {
			return true
		}
	}
	return false
}

// ReadResults never panics, and every value it accepts is finite,
// non-negative and at most MaxValue.
func FuzzReadResults(f *testing.F) {
	for _, p := range []string{"testdata/h100-bloom-560m_prefill.bench", "testdata/h100-bloom-560m_prefill.energy.bench"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 4096 {
			b = b[:4096]
		}
		f.Add(b)
	}
	f.Add([]byte("BenchmarkReplay/workload=w/sig=a-4\t1\tNaN ns/op\t-1 J/op\n"))
	f.Add([]byte("BenchmarkModel/workload=w-4\t1\t1e308 ns/op\t3 mean-ns\n--- SKIP: BenchmarkReplay/workload=w/sig=b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := ReadResults([]Input{input("fuzz.bench", string(data))})
		if err != nil {
			return
		}
		for _, w := range rs.Workloads {
			for id, s := range w.Sigs {
				checkSamples(t, w.Name+"/"+id, s)
			}
			for id, s := range w.Context {
				checkSamples(t, w.Name+"/context/"+id, s)
			}
			for _, s := range []*Samples{w.Model, w.Timeline, w.Inference} {
				checkSamples(t, w.Name, s)
			}
		}
	})
}

func checkSamples(t *testing.T, what string, s *Samples) {
	if s == nil {
		return
	}
	all := [][]float64{s.NS, s.Joules, s.Watts, s.IdleW, s.GBps, s.TFLOPs, s.SMMHz, s.SkippedNS, s.GapNS, s.MeanNS}
	for _, v := range s.Other {
		all = append(all, v)
	}
	for _, vs := range all {
		for _, x := range vs {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x > MaxValue*(1+1e-9) {
				t.Fatalf("%s: accepted value %v", what, x)
			}
		}
	}
}
