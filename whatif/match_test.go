package whatif

import (
	"slices"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/signatures"
)

func TestParseReplace(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{"pow,mean", []string{"aten::pow", "aten::mean"}, ""},
		{" aten::pow , mean ", []string{"aten::pow", "aten::mean"}, ""},
		{"de7fb168b738,mul", []string{"de7fb168b738", "aten::mul"}, ""},
		{"triton::fused_op", []string{"triton::fused_op"}, ""},
		{"llama-rmsnorm", RecipeByName("llama-rmsnorm").Ops, ""},
		{"llama-rmsnorm-f32", []string{"aten::pow", "aten::mean", "aten::add", "aten::rsqrt", "aten::mul", "aten::mul"}, ""},
		{"", nil, "no ops to replace"},
		{"pow,,mean", nil, "an empty op"},
	} {
		got, err := ParseReplace(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseReplace(%q): error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseReplace(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

// The embedded Llama-7B prefill runs the llama-rmsnorm chain at every
// RMSNorm: twice in each of 32 layers and once before the LM head, each
// time the same eight signatures, and nowhere else.
func TestFindLlamaRMSNorm(t *testing.T) {
	set := llamaSet(t)
	m, err := Find(set, RecipeByName("llama-rmsnorm").Ops)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Runs) != 65 || len(m.Variants) != 1 || m.Variants[0].Runs != 65 || m.Hint != "" {
		t.Fatalf("%d runs, %d variants (%+v), hint %q", len(m.Runs), len(m.Variants), m.Variants, m.Hint)
	}
	wantIDs := []string{"3b90c9320456", "de7fb168b738", "823849f76925", "77b00050a759", "6ce76b4ff6f8", "a80b159c5b5b", "4129aa360618", "9c03c8fb127e"}
	var ids []string
	var traced int64
	for _, r := range m.Replaced {
		ids = append(ids, r.ID)
		sig := set.Signatures[r.Sig]
		// Every invocation of the chain's signatures is in a run.
		if r.Invocations != 65 || r.Count != 65 || r.TracedNS != sig.TracedNS.Total || r.PartOf != "" {
			t.Errorf("%s %s: %d invocations in runs of %d, %d ns of %d", r.ID, r.Label, r.Invocations, r.Count, r.TracedNS, sig.TracedNS.Total)
		}
		traced += r.TracedNS
	}
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("replaced %v, want %v", ids, wantIDs)
	}
	if m.TracedNS != traced || m.TracedNS <= 0 || m.TracedNS > m.BusyNS {
		t.Errorf("runs traced %d ns, signatures %d, busy %d", m.TracedNS, traced, m.BusyNS)
	}
	for i, r := range m.Runs {
		if len(r.Invocations) != 8 || r.Invocations[7]-r.Invocations[0] != 7 || r.Variant != 0 {
			t.Errorf("run %d: invocations %v", i, r.Invocations)
		}
	}
	if m.Runs[0].Invocations[0] != 22 {
		t.Errorf("first run at invocation %d, want 22 (after the rotary embedding's setup)", m.Runs[0].Invocations[0])
	}
	t.Logf("%d runs, %.1f µs traced of %.1f µs busy", len(m.Runs), float64(m.TracedNS)/1e3, float64(m.BusyNS)/1e3)
}

// The six ops, the chain of an f32 model, are not contiguous in
// an f16 model's trace: the hint names the cast in between.
func TestFindHint(t *testing.T) {
	m, err := Find(llamaSet(t), RecipeByName("llama-rmsnorm-f32").Ops)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Runs) != 0 || !strings.Contains(m.Hint, "matched 5 of 6") || !strings.Contains(m.Hint, "aten::copy_") ||
		!strings.Contains(m.Hint, "-replace llama-rmsnorm has the casts") {
		t.Errorf("%d runs, hint %q", len(m.Runs), m.Hint)
	}
	m, err = Find(llamaSet(t), []string{"aten::layer_norm"})
	if err != nil || len(m.Runs) != 0 || !strings.Contains(m.Hint, "no invocation of aten::layer_norm") {
		t.Errorf("layer_norm: %v, hint %q", err, m.Hint)
	}
}

// synthSet is a set of signatures named by op ("a", "b", ...; "m" is a
// part of "b") and a timeline of (stream, op) pairs, 10 ns each.
func synthSet(inv ...any) *signatures.Set {
	set := &signatures.Set{}
	index := map[string]int{}
	for i := 0; i < len(inv); i += 2 {
		op := inv[i+1].(string)
		k, ok := index[op]
		if !ok {
			k = len(set.Signatures)
			index[op] = k
			sig := &signatures.Signature{ID: strings.Repeat(op[:1], 12), Op: "aten::" + op, Label: op}
			if op == "m" {
				sig.PartOf = strings.Repeat("b", 12)
			}
			set.Signatures = append(set.Signatures, sig)
		}
		set.Signatures[k].Count++
		set.Timeline = append(set.Timeline, signatures.Invocation{Sig: k, Stream: int64(inv[i].(int)), Dur: 10})
	}
	return set
}

func TestFind(t *testing.T) {
	for _, c := range []struct {
		name  string
		set   *signatures.Set
		steps []string
		runs  [][]int // each run's timeline indices
		hint  string
	}{
		{"one stream", synthSet(7, "a", 7, "b", 7, "c", 7, "a", 7, "b", 7, "c"), []string{"aten::a", "aten::b"}, [][]int{{0, 1}, {3, 4}}, ""},
		// Runs do not overlap: the greedy match takes a,a then a,a.
		{"greedy", synthSet(7, "a", 7, "a", 7, "a", 7, "a", 7, "a"), []string{"aten::a", "aten::a"}, [][]int{{0, 1}, {2, 3}}, ""},
		// Another stream's launches in between do not break a run.
		{"streams", synthSet(7, "a", 8, "b", 7, "b", 8, "a", 8, "b"), []string{"aten::a", "aten::b"}, [][]int{{0, 2}, {3, 4}}, ""},
		// A part inside a run is in it; the signature is matched without it.
		{"part", synthSet(7, "a", 7, "m", 7, "b", 7, "c"), []string{"aten::a", "aten::b", "aten::c"}, [][]int{{0, 1, 2, 3}}, ""},
		{"by id", synthSet(7, "a", 7, "b", 7, "a", 7, "c"), []string{"aaaaaaaaaaaa", "aten::c"}, [][]int{{2, 3}}, ""},
		{"none", synthSet(7, "a", 7, "b", 7, "a", 7, "c"), []string{"aten::a", "aten::b", "aten::d"}, nil, "matched 2 of 3 steps (aten::a,aten::b), then the trace has aten::a"},
	} {
		m, err := Find(c.set, c.steps)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var got [][]int
		for _, r := range m.Runs {
			got = append(got, r.Invocations)
		}
		if !slices.EqualFunc(got, c.runs, slices.Equal) || !strings.Contains(m.Hint, c.hint) {
			t.Errorf("%s: runs %v, hint %q; want %v, %q", c.name, got, m.Hint, c.runs, c.hint)
		}
		var n int
		for _, r := range m.Replaced {
			n += r.Invocations
		}
		var want int
		for _, r := range c.runs {
			want += len(r)
		}
		if n != want || m.TracedNS != int64(10*want) {
			t.Errorf("%s: replaced %d invocations, %d ns; want %d", c.name, n, m.TracedNS, want)
		}
	}
}

func TestFindBadTimeline(t *testing.T) {
	set := synthSet(7, "a")
	set.Timeline[0].Sig = 3
	if _, err := Find(set, []string{"aten::a"}); err == nil {
		t.Error("no error for a timeline naming a missing signature")
	}
	if _, err := Find(set, nil); err == nil {
		t.Error("no error for no steps")
	}
}
