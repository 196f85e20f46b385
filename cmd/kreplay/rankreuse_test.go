package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

func TestEarlierRanks(t *testing.T) {
	res := func(ns float64) *replay.Result { return &replay.Result{Stats: replay.Stats{MedianNS: ns}} }
	rank := func(workload string, r, world int) signatures.Source {
		return signatures.Source{Workload: workload, Rank: r, WorldSize: world, File: "rank.json"}
	}
	outs := []runOutput{
		{Set: rank("w", 0, 2), Entries: []replay.Entry{
			{ID: "gemm", Result: res(10)},
			{ID: "failed", Err: "lost"},
			{ID: "interp", Result: res(3), Interpolated: "family"},
			{ID: "part", Result: res(1), PartOf: "gemm"},
			{ID: "coll", Result: res(7)},
		}},
		{Set: rank("other", 0, 2), Entries: []replay.Entry{{ID: "x", Result: res(5)}}},
	}
	prev := map[string]replay.Entry{"coll": {ID: "coll", Result: res(8)}}
	tests := []struct {
		name string
		set  signatures.Source
		prev map[string]replay.Entry
		want map[string]float64 // ID -> reused median; SameAs "rank 0" unless from prev
	}{
		{"rank 1 takes rank 0's measured ones, the file wins", rank("w", 1, 2), prev, map[string]float64{"gemm": 10, "coll": 8}},
		{"no file", rank("w", 1, 2), nil, map[string]float64{"gemm": 10, "coll": 7}},
		{"another workload's ranks are not the group", rank("v", 1, 2), nil, map[string]float64{}},
		{"another world size", rank("w", 1, 4), nil, map[string]float64{}},
		{"rank 0 itself", rank("w", 0, 2), nil, map[string]float64{}},
		{"one GPU: the file alone", signatures.Source{Workload: "w"}, prev, map[string]float64{"coll": 8}},
	}
	for _, tt := range tests {
		got := earlierRanks(outs, &signatures.Set{Source: tt.set}, tt.prev)
		if len(got) != len(tt.want) {
			t.Errorf("%s: reused %d (%v), want %d", tt.name, len(got), got, len(tt.want))
		}
		for id, ns := range tt.want {
			e, ok := got[id]
			if !ok || e.Result.MedianNS != ns {
				t.Errorf("%s: %s: %+v, want median %g", tt.name, id, e, ns)
				continue
			}
			fromFile := tt.prev[id].Result != nil
			if wantSame := map[bool]string{true: "", false: "rank 0"}[fromFile]; e.SameAs != wantSame {
				t.Errorf("%s: %s: SameAs %q, want %q", tt.name, id, e.SameAs, wantSame)
			}
		}
	}
	if outs[0].Entries[0].SameAs != "" {
		t.Errorf("rank 0's own entry was changed: %+v", outs[0].Entries[0])
	}
}

func TestReusedNote(t *testing.T) {
	r := &replay.Result{}
	set := &signatures.Set{Source: signatures.Source{File: "rank1.json"},
		Signatures: []*signatures.Signature{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}}}
	prev := map[string]replay.Entry{"a": {Result: r, SameAs: "rank 0"}, "b": {Result: r, SameAs: "rank 0"},
		"c": {Result: r}, "d": {}, "elsewhere": {Result: r, SameAs: "rank 0"}}
	var b bytes.Buffer
	reusedNote(&b, set, prev, "p.jsonl")
	for _, want := range []string{"rank1.json: 1 results from p.jsonl reused", "rank1.json: 2 signatures the same as an earlier rank's"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("note %q, want %q", b.String(), want)
		}
	}
	b.Reset()
	reusedNote(&b, set, nil, "")
	if b.Len() != 0 {
		t.Errorf("nothing reused: note %q, want none", b.String())
	}
}
