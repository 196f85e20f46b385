package bench

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/kreplay/kreplay/signatures"
)

// GroupReplay runs a tensor-parallel package's BenchmarkReplay: Replay of
// every rank's set in rank order, its sub-benchmarks named with the rank's
// workload (BenchmarkReplay/workload=W_rankN/sig=ID), ids[r] the
// signatures of rank r.
func GroupReplay(b *testing.B, sets []*signatures.Set, ids [][]string, o Options) {
	b.Helper()
	if err := CheckRanks(sets); err != nil {
		b.Fatal(err)
	}
	if len(ids) != len(sets) {
		b.Fatalf("ids of %d ranks for %d sets: regenerate", len(ids), len(sets))
	}
	for r, set := range sets {
		Replay(b, set, Workload(set.Source), ids[r], o)
	}
}

// CheckGroup is the test of a tensor-parallel package: sets are the ranks
// of workload (CheckRanks, GroupWorkload), each checked as Check checks a
// package's set against ids[r], and the model benchmark's names read back
// through benchproc as each rank's.
func CheckGroup(t testing.TB, sets []*signatures.Set, workload string, ids [][]string) {
	t.Helper()
	if err := checkGroup(sets, workload, ids); err != nil {
		t.Fatal(err)
	}
}

func checkGroup(sets []*signatures.Set, workload string, ids [][]string) error {
	if err := CheckRanks(sets); err != nil {
		return err
	}
	if w := GroupWorkload(sets[0].Source); w != workload {
		return fmt.Errorf("the sets' workload is %q, generated for %q: regenerate", w, workload)
	}
	if len(ids) != len(sets) {
		return fmt.Errorf("ids of %d ranks for %d sets: regenerate", len(ids), len(sets))
	}
	var out bytes.Buffer
	for r, set := range sets {
		if err := check(set, Workload(set.Source), ids[r]); err != nil {
			return fmt.Errorf("rank %d: %w", r, err)
		}
		fmt.Fprintf(&out, "Benchmark%s/%s-8\t1\t%d ns/op\n", ModelName, ModelBenchName(Workload(set.Source)), r+1)
	}
	return checkNames(&out, ModelName, sets)
}

// checkNames reads benchmark lines, one per rank in rank order, as
// benchproc reads go test's output, and returns an error unless each is
// benchmark base of its rank's workload, with no signature.
func checkNames(lines io.Reader, base string, sets []*signatures.Set) error {
	np, err := NewNameProjection()
	if err != nil {
		return err
	}
	br := benchfmt.NewReader(lines, "names")
	r := 0
	for ; br.Scan(); r++ {
		res, ok := br.Result().(*benchfmt.Result)
		if !ok {
			return fmt.Errorf("benchfmt cannot read the generated names: %v", br.Result())
		}
		if r >= len(sets) {
			return fmt.Errorf("more names than ranks: %s", res.Name.Full())
		}
		b, w, sig := np.Keys(res)
		if want := Workload(sets[r].Source); b != base || w != want || sig != "" {
			return fmt.Errorf("benchproc reads %s as %s workload=%q sig=%q, want %s workload=%q", res.Name.Full(), b, w, sig, base, want)
		}
	}
	if err := br.Err(); err != nil {
		return err
	}
	if r != len(sets) {
		return fmt.Errorf("%d names for %d ranks", r, len(sets))
	}
	return nil
}
