package whatif

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kreplay/kreplay/signatures"
)

// A step of a replaced run names an aten op ("aten::pow"; "pow" is read
// as "aten::pow", a name with "::" as it is) or a signature ID (12 hex
// digits), which matches that signature only.

// ParseReplace reads a -replace list: a recipe's name (Recipes), or
// comma-separated steps, each an op name or a signature ID.
func ParseReplace(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if r := RecipeByName(s); r != nil {
		return slices.Clone(r.Ops), nil
	}
	if s == "" {
		return nil, fmt.Errorf("no ops to replace (want OP,OP,... or one of %s)", strings.Join(RecipeNames(), ", "))
	}
	var steps []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
			return nil, fmt.Errorf("-replace %q: an empty op", s)
		case isSigID(f) || strings.Contains(f, "::"):
			steps = append(steps, f)
		default:
			steps = append(steps, "aten::"+f)
		}
	}
	return steps, nil
}

// isSigID reports whether s looks like a signature ID: 12 lowercase hex
// digits.
func isSigID(s string) bool {
	if len(s) != 12 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// stepMatches reports whether a step names sig.
func stepMatches(step string, sig *signatures.Signature) bool {
	if isSigID(step) {
		return sig.ID == step
	}
	return sig.Op == step
}

// Run is one contiguous run of the replaced ops on one device and stream.
type Run struct {
	Device int64 `json:"device"`
	Stream int64 `json:"stream"`
	// Invocations are the run's indices into the set's Timeline, in
	// order: its ops' invocations and the parts (PartOf) between them.
	Invocations []int `json:"invocations"`
	// Sigs are the signature indices of its ops, one per step.
	Sigs []int `json:"sigs"`
	// TracedNS is the summed traced duration of its invocations.
	TracedNS int64 `json:"traced_ns"`
	// Variant indexes Match.Variants.
	Variant int `json:"variant"`
}

// Variant is the runs whose ops are the same signatures: one kernel
// launch shape and one set of tensors.
type Variant struct {
	// Sigs are the signature indices of its ops, one per step.
	Sigs []int `json:"sigs"`
	// Ops are their aten ops.
	Ops []string `json:"ops"`
	// Runs counts its runs.
	Runs int `json:"runs"`
}

// Replaced is one signature with invocations in the runs.
type Replaced struct {
	Sig   int    `json:"sig"`
	ID    string `json:"id"`
	Label string `json:"label"`
	Op    string `json:"op"`
	// PartOf is set for a part of another signature (a memset inside a
	// GEMM call), whose time is inside its parent's replay.
	PartOf string `json:"part_of,omitempty"`
	// Invocations and TracedNS are its invocations in the runs and their
	// traced time; Count its invocations in the whole trace.
	Invocations int   `json:"invocations"`
	TracedNS    int64 `json:"traced_ns"`
	Count       int   `json:"count"`
}

// Match is every run of a list of steps in a trace.
type Match struct {
	Workload string    `json:"workload"`
	Steps    []string  `json:"steps"`
	Runs     []Run     `json:"runs"`
	Variants []Variant `json:"variants"`
	// Replaced are the signatures with invocations in the runs, in the
	// order of their first step.
	Replaced []Replaced `json:"replaced"`
	// TracedNS is the runs' traced time; TraceTracedNS and BusyNS the
	// whole trace's summed durations and GPU-busy time.
	TracedNS      int64 `json:"traced_ns"`
	TraceTracedNS int64 `json:"trace_traced_ns"`
	BusyNS        int64 `json:"busy_ns"`
	// Hint says, when no run matched, where the longest partial run
	// broke off.
	Hint string `json:"hint,omitempty"`
}

// stream is one device and stream's invocations that are not parts, in
// timeline order.
type stream struct {
	dev, id int64
	idx     []int // timeline indices
}

// streams splits set's timeline by device and stream, leaving out parts.
func streams(set *signatures.Set) []*stream {
	var out []*stream
	by := map[[2]int64]*stream{}
	for i, inv := range set.Timeline {
		if set.Signatures[inv.Sig].PartOf != "" {
			continue
		}
		k := [2]int64{inv.Device, inv.Stream}
		s := by[k]
		if s == nil {
			s = &stream{dev: inv.Device, id: inv.Stream}
			by[k] = s
			out = append(out, s)
		}
		s.idx = append(s.idx, i)
	}
	return out
}

// Find finds every contiguous run of steps in set: on each device and
// stream, consecutive invocations (parts of another signature aside)
// whose signatures the steps name in order, taken greedily from the
// start without overlap.
func Find(set *signatures.Set, steps []string) (*Match, error) {
	if len(steps) == 0 {
		return nil, fmt.Errorf("no ops to replace")
	}
	for _, inv := range set.Timeline {
		if inv.Sig < 0 || inv.Sig >= len(set.Signatures) {
			return nil, fmt.Errorf("timeline names signature %d of %d", inv.Sig, len(set.Signatures))
		}
	}
	m := &Match{Workload: set.Source.Workload, Steps: slices.Clone(steps)}
	for _, s := range set.Summary {
		m.BusyNS += s.BusyNS
	}
	for _, inv := range set.Timeline {
		m.TraceTracedNS += inv.Dur
	}
	at := func(i int) *signatures.Signature { return set.Signatures[set.Timeline[i].Sig] }
	best, bestAt := 0, -1
	for _, s := range streams(set) {
		for p := 0; p < len(s.idx); {
			k := 0
			for k < len(steps) && p+k < len(s.idx) && stepMatches(steps[k], at(s.idx[p+k])) {
				k++
			}
			if k > best && k < len(steps) && p+k < len(s.idx) {
				best, bestAt = k, s.idx[p+k]
			}
			if k < len(steps) {
				p++
				continue
			}
			m.Runs = append(m.Runs, newRun(set, s, s.idx[p], s.idx[p+k-1]))
			p += k
		}
	}
	if len(m.Runs) == 0 {
		m.Hint = hint(set, steps, best, bestAt)
	}
	m.tally(set)
	return m, nil
}

// newRun is the run of stream s from timeline index first to last.
func newRun(set *signatures.Set, s *stream, first, last int) Run {
	r := Run{Device: s.dev, Stream: s.id}
	for i := first; i <= last; i++ {
		inv := set.Timeline[i]
		if inv.Device != s.dev || inv.Stream != s.id {
			continue
		}
		r.Invocations = append(r.Invocations, i)
		r.TracedNS += inv.Dur
		if set.Signatures[inv.Sig].PartOf == "" {
			r.Sigs = append(r.Sigs, inv.Sig)
		}
	}
	return r
}

// hint says where the longest partial run broke off.
func hint(set *signatures.Set, steps []string, best, at int) string {
	if best == 0 {
		return fmt.Sprintf("no invocation of %s in the trace", steps[0])
	}
	got := set.Signatures[set.Timeline[at].Sig]
	h := fmt.Sprintf("the longest partial run matched %d of %d steps (%s), then the trace has %s (%s) where %s was asked",
		best, len(steps), strings.Join(steps[:best], ","), got.Op, got.Label, steps[best])
	if r := RecipeFor(steps); r != nil && r.Name == "llama-rmsnorm-f32" && got.Op == "aten::copy_" {
		h += "; an f16 or bf16 model casts x to f32 and back: -replace llama-rmsnorm has the casts"
	}
	return h
}

// tally groups the runs into variants and counts the replaced
// signatures' invocations and traced time in the runs.
func (m *Match) tally(set *signatures.Set) {
	variants := map[string]int{}
	replaced := map[int]int{}
	for ri := range m.Runs {
		r := &m.Runs[ri]
		m.TracedNS += r.TracedNS
		key := fmt.Sprint(r.Sigs)
		v, ok := variants[key]
		if !ok {
			v = len(m.Variants)
			variants[key] = v
			var ops []string
			for _, s := range r.Sigs {
				ops = append(ops, set.Signatures[s].Op)
			}
			m.Variants = append(m.Variants, Variant{Sigs: slices.Clone(r.Sigs), Ops: ops})
		}
		r.Variant = v
		m.Variants[v].Runs++
		for _, i := range r.Invocations {
			inv := set.Timeline[i]
			k, ok := replaced[inv.Sig]
			if !ok {
				sig := set.Signatures[inv.Sig]
				k = len(m.Replaced)
				replaced[inv.Sig] = k
				m.Replaced = append(m.Replaced, Replaced{Sig: inv.Sig, ID: sig.ID, Label: sig.Label, Op: sig.Op,
					PartOf: sig.PartOf, Count: sig.Count})
			}
			m.Replaced[k].Invocations++
			m.Replaced[k].TracedNS += inv.Dur
		}
	}
}

// Sorted returns the replaced signatures by traced time in the runs.
func (m *Match) Sorted() []Replaced {
	out := slices.Clone(m.Replaced)
	slices.SortStableFunc(out, func(a, b Replaced) int { return cmp.Compare(b.TracedNS, a.TracedNS) })
	return out
}
