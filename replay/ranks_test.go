package replay

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/signatures"
)

// With every signature replayed at exactly its traced median, compute is
// the traced compute and communication the traced collective time, so the
// prediction misses busy-minus-wait by exactly the waiting it does not
// model; with collectives replayed at their transfer time it matches.
func TestPredictRanksTP(t *testing.T) {
	var sets []*signatures.Set
	for _, n := range []string{"2xh200_llama-7b-tp2_prefill.rank0.trace.json.gz", "2xh200_llama-7b-tp2_prefill.rank1.trace.json.gz"} {
		sets = append(sets, embedded(t, n))
	}
	_, comm, err := signatures.PairCollectives(sets)
	if err != nil {
		t.Fatal(err)
	}
	var lists [][]Entry
	for i, set := range sets {
		var es []Entry
		// Parts' time is inside their parent's replay: it is added there.
		for _, s := range set.Signatures {
			e := Entry{ID: s.ID, Class: s.Class, Count: s.Count, TracedTotalNS: s.TracedNS.Total, PartOf: s.PartOf}
			per := float64(s.TracedNS.Total) / float64(s.Count) // the traced mean
			if s.Class == signatures.ClassCollective {
				per = float64(comm[i].TransferNS) / float64(comm[i].Collectives)
			}
			if s.PartOf == "" {
				e.Result = &Result{MedianNS: per}
			}
			es = append(es, e)
		}
		for _, s := range set.Signatures {
			if s.PartOf == "" {
				continue
			}
			for k := range es {
				if es[k].ID == s.PartOf {
					es[k].Result.MedianNS += float64(s.TracedNS.Total) / float64(es[k].Count)
				}
			}
		}
		lists = append(lists, es)
	}
	ps, err := PredictRanks(sets, lists)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		// Busy time is the union of intervals; with one stream it is the
		// sum of durations up to rounding, so the error is tiny.
		if math.Abs(p.Error) > 0.01 || p.Missing != 0 {
			t.Errorf("rank %d: %+v", p.Rank, p)
		}
	}
	var b bytes.Buffer
	if err := WriteRanks(&b, ps); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "busy-wait_ms") {
		t.Errorf("table:\n%s", b.String())
	}
	if _, err := PredictRanks(sets[:1], lists[:1]); err == nil {
		t.Error("one rank: no error")
	}
}
