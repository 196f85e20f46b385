package signatures

import (
	"testing"
)

// The two ranks of the TP trace pair up call by call, and their traced
// all-reduce time splits into waiting and transfer: the README of the
// traces says the kernels last far longer than the bytes need because each
// rank waits for the other.
func TestPairCollectivesTP(t *testing.T) {
	r0 := importFresh(t, "2xh200_llama-7b-tp2_prefill.rank0.trace.json.gz")
	r1 := importFresh(t, "2xh200_llama-7b-tp2_prefill.rank1.trace.json.gz")
	calls, sums, err := PairCollectives([]*Set{r1, r0}) // any order
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 64 || len(sums) != 2 || sums[0].Rank != 0 || sums[1].Rank != 1 {
		t.Fatalf("%d calls, summaries %+v", len(calls), sums)
	}
	for _, c := range calls {
		if c.Op != "allreduce" || c.Nelems != 8388608 || c.DType != "f16" || len(c.Ranks) != 2 {
			t.Fatalf("call %+v", c)
		}
		// One rank waits (its wait is the skew), the other does not.
		w0, w1 := c.Ranks[0].WaitNS, c.Ranks[1].WaitNS
		if min(w0, w1) != 0 || max(w0, w1) != c.SkewNS {
			t.Errorf("call %d: waits %d and %d, skew %d", c.Index, w0, w1, c.SkewNS)
		}
		// 16 MiB over NVLink takes tens of microseconds, not milliseconds.
		if c.TransferNS < 20e3 || c.TransferNS > 300e3 {
			t.Errorf("call %d: transfer %d ns", c.Index, c.TransferNS)
		}
	}
	for _, s := range sums {
		if s.TransferNS+s.WaitNS != s.TracedNS || s.Collectives != 64 {
			t.Errorf("rank %d: %+v", s.Rank, s)
		}
		t.Logf("rank %d: traced %.2f ms = transfer %.2f ms + wait %.2f ms", s.Rank,
			float64(s.TracedNS)/1e6, float64(s.TransferNS)/1e6, float64(s.WaitNS)/1e6)
	}
	// Most of rank 0's traced communication is waiting.
	if sums[0].WaitNS < sums[0].TracedNS/2 {
		t.Errorf("rank 0 waits %d of %d ns", sums[0].WaitNS, sums[0].TracedNS)
	}
}

func TestPairCollectivesErrors(t *testing.T) {
	r0 := importFresh(t, "2xh200_llama-7b-tp2_prefill.rank0.trace.json.gz")
	if _, _, err := PairCollectives([]*Set{r0}); err == nil {
		t.Error("one rank: no error")
	}
	if _, _, err := PairCollectives([]*Set{r0, r0}); err == nil {
		t.Error("the same rank twice: no error")
	}
	short := *r0
	short.Source.Rank = 1
	short.Timeline = r0.Timeline[:len(r0.Timeline)/2]
	if _, _, err := PairCollectives([]*Set{r0, &short}); err == nil {
		t.Error("unequal collective counts: no error")
	}
}
