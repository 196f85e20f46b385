package main

import (
	"fmt"
	"io"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// earlierRanks returns the results to reuse for a rank's set: prev (a
// resumed run's, which win) and the results of the same signatures (the
// same ID: kernel, launch, op and tensors) measured for the earlier ranks
// of the same group in outs, each marked SameAs "rank N". A
// tensor-parallel group's ranks run the same signatures on GPUs of one
// kind, so each is measured once; a set that is no rank of a group gets
// prev alone.
func earlierRanks(outs []runOutput, set *signatures.Set, prev map[string]replay.Entry) map[string]replay.Entry {
	src := set.Source
	if src.WorldSize < 2 {
		return prev
	}
	got := map[string]replay.Entry{}
	for _, o := range outs {
		if o.Set.WorldSize != src.WorldSize || o.Set.Workload != src.Workload || o.Set.Rank == src.Rank {
			continue
		}
		for _, e := range o.Entries {
			if _, ok := got[e.ID]; ok || e.Result == nil || e.Err != "" || e.Interpolated != "" || e.PartOf != "" {
				continue
			}
			if e.SameAs == "" {
				e.SameAs = fmt.Sprintf("rank %d", o.Set.Rank)
			}
			got[e.ID] = e
		}
	}
	for id, e := range prev {
		got[id] = e
	}
	return got
}

// reusedNote says how many of set's signatures take a result from prev:
// measured for an earlier rank, or read from the -out file progOut.
func reusedNote(w io.Writer, set *signatures.Set, prev map[string]replay.Entry, progOut string) {
	var ranks, file int
	for _, s := range set.Signatures {
		switch e, ok := prev[s.ID]; {
		case !ok || e.Result == nil:
		case e.SameAs != "":
			ranks++
		default:
			file++
		}
	}
	if file > 0 {
		fmt.Fprintf(w, "kreplay run: %s: %d results from %s reused\n", set.Source.File, file, progOut)
	}
	if ranks > 0 {
		fmt.Fprintf(w, "kreplay run: %s: %d signatures the same as an earlier rank's take its results (-each-rank measures them again)\n", set.Source.File, ranks)
	}
}
