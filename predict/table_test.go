package predict

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/replay"
)

func tableEntries() []replay.Entry {
	yes, no := true, false
	return []replay.Entry{
		{ID: "a", Tier: 2, Class: "gemm", Count: 10, TracedMedianNS: 100, SameKernel: &yes,
			Result: &replay.Result{Stats: replay.Stats{MedianNS: 108}, KernelMedianNS: 105}},
		{ID: "b", Tier: 2, Class: "gemm", Count: 10, TracedMedianNS: 100, SameKernel: &no,
			Result: &replay.Result{Stats: replay.Stats{MedianNS: 150}}},
		{ID: "c", Tier: 1, Class: "memset", Count: 5, TracedMedianNS: 10, PartOf: "a"},
		{ID: "d", Tier: 3, Class: "elementwise", Count: 1, TracedMedianNS: 200, Err: "prepare: boom"},
		{ID: "e", Tier: 3, Class: "other", Count: 1, TracedMedianNS: 100,
			Result: &replay.Result{Stats: replay.Stats{MedianNS: 100}, Approximate: "no kernel"}},
	}
}

func TestCover(t *testing.T) {
	c := Cover(tableEntries(), 0.10, 2)
	// a within (105/100), b outside; b ran another kernel.
	if c.TracedNS != 2000 || c.ReplayedShare != 1 || c.WithinShare != 0.5 || c.SameKernelShare != 0.5 || c.Errors != 0 {
		t.Errorf("tier 2 coverage %+v", c)
	}
	c = Cover(tableEntries(), 0.10, 3)
	if c.TracedNS != 300 || c.Errors != 1 || math.Abs(c.ReplayedShare-1.0/3) > 1e-9 || math.Abs(c.ApproximateShare-1.0/3) > 1e-9 {
		t.Errorf("tier 3 coverage %+v", c)
	}
	// The part-of memset is not counted on its own.
	if c := Cover(tableEntries(), 0.10, 1); c.TracedNS != 0 {
		t.Errorf("tier 1 coverage %+v", c)
	}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	throttled := []replay.Entry{
		{ID: "f", Tier: 3, Class: "other", Count: 1, TracedMedianNS: 100,
			Result: &replay.Result{Stats: replay.Stats{MedianNS: 100}, Samples: 37, Throttled: true, ThrottledSamples: 3}},
		{ID: "g", Tier: 3, Class: "other", Count: 1, TracedMedianNS: 100,
			Result: &replay.Result{Stats: replay.Stats{MedianNS: 100}, Samples: 15, Throttled: true, ThrottledSamples: 12, ThrottledKept: true}},
	}
	if err := WriteTable(&b, append(tableEntries(), throttled...)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"1.050", "part of a", "error: prepare: boom", "false", "3/40 discarded", "12/15 kept"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
