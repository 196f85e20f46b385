package schedule

import (
	"fmt"

	"github.com/kreplay/kreplay/signatures"
)

// Bound is one GPU op of an inference matched to the trace.
type Bound struct {
	// Call is the op's index in Inference.Calls.
	Call int
	// Timeline are the indices into the set's Timeline of the op's
	// invocations: one for L, C and S, the graph's run for G. Sigs are
	// their signature indices (Set.Signatures).
	Timeline []int
	Sigs     []int
}

// SameKernel reports whether a trace's kernel name and a recorded one name
// the same kernel (the recorder records the mangled name, the trace the
// demangled one).
type SameKernel func(traceName, recordedName string) bool

// Memo returns same with its answers kept: a decode's schedule names a
// few hundred kernels in tens of thousands of launches per inference, and
// comparing two names demangles both. Not safe for concurrent use.
func Memo(same SameKernel) SameKernel {
	seen := map[[2]string]bool{}
	return func(traceName, recordedName string) bool {
		k := [2]string{traceName, recordedName}
		v, ok := seen[k]
		if !ok {
			v = same(traceName, recordedName)
			seen[k] = v
		}
		return v
	}
}

// Bind matches the GPU ops (L, C, S, G) of inference inf of s, in host
// order, one to one to the invocations of set's Timeline in the order the
// trace's runtime calls launched them. rt holds those calls (ReadRuntime
// of the trace the set was imported from); with rt nil the Timeline's
// order is taken instead, which is the launch order only on one stream,
// so a set whose timeline has several streams is then an error, and a G
// takes the run of consecutive graph invocations (Signature.Graph).
// Kernels' names are compared with same, their grids and blocks, copies'
// directions and bytes and memsets' bytes with the signatures'. A count,
// kind or name mismatch is an error naming the first op that differs.
func Bind(s *Schedule, inf int, set *signatures.Set, rt *signatures.Runtime, same SameKernel) ([]Bound, error) {
	if inf < 0 || inf >= len(s.Inferences) {
		return nil, fmt.Errorf("bind: inference %d of %d", inf, len(s.Inferences))
	}
	groups, err := launchGroups(set, rt)
	if err != nil {
		return nil, fmt.Errorf("bind: %w", err)
	}
	calls := s.Inferences[inf].Calls
	var out []Bound
	g := 0
	for k := range calls {
		c := &calls[k]
		if !c.Kind.GPU() {
			continue
		}
		op := len(out)
		if g >= len(groups) {
			return nil, fmt.Errorf("bind: inference %d: GPU op %d (record %d, %s) is past the trace's %d launches",
				inf, op, k, c.Kind, len(groups))
		}
		tl := groups[g]
		if rt == nil && c.Kind == Graph {
			tl = graphRun(set, tl[0])
		}
		if err := match(s, c, set, tl, same); err != nil {
			return nil, fmt.Errorf("bind: inference %d: GPU op %d (record %d) against timeline %d: %w", inf, op, k, tl[0], err)
		}
		b := Bound{Call: k, Timeline: tl, Sigs: make([]int, len(tl))}
		for i, t := range tl {
			b.Sigs[i] = set.Timeline[t].Sig
		}
		out = append(out, b)
		if rt == nil {
			g += len(tl)
		} else {
			g++
		}
	}
	if g < len(groups) {
		return nil, fmt.Errorf("bind: inference %d has %d GPU ops; the trace launches more: the first unmatched is timeline %d",
			inf, len(out), groups[g][0])
	}
	return out, nil
}

// launchGroups lists the timeline's invocations in launch order, grouped
// by the call that launched them (one invocation each when rt is nil).
func launchGroups(set *signatures.Set, rt *signatures.Runtime) ([][]int, error) {
	tl := set.Timeline
	if rt == nil {
		groups := make([][]int, len(tl))
		for i := range tl {
			if tl[i].Stream != tl[0].Stream {
				return nil, fmt.Errorf("the timeline has streams %d and %d: binding needs the trace's runtime calls", tl[0].Stream, tl[i].Stream)
			}
			groups[i] = []int{i}
		}
		return groups, nil
	}
	if len(rt.Activities) != len(tl) {
		return nil, fmt.Errorf("the runtime calls launch %d activities, the set's timeline has %d: not the same trace", len(rt.Activities), len(tl))
	}
	for i, a := range rt.Activities {
		if a.TS != tl[i].Start || a.Dur != tl[i].Dur || a.Stream != tl[i].Stream {
			return nil, fmt.Errorf("timeline %d differs from the runtime's activity %d: not the same trace", i, i)
		}
	}
	var groups [][]int
	seen := 0
	for _, hc := range hostCalls(rt) {
		if len(hc.acts) > 0 {
			groups = append(groups, hc.acts)
			seen += len(hc.acts)
		}
	}
	if seen != len(tl) {
		return nil, fmt.Errorf("%d of the timeline's %d invocations have no runtime call in the trace", len(tl)-seen, len(tl))
	}
	return groups, nil
}

// graphRun is the run of consecutive graph invocations from timeline i.
func graphRun(set *signatures.Set, i int) []int {
	run := []int{i}
	for j := i + 1; j < len(set.Timeline) && set.Signatures[set.Timeline[j].Sig].Graph; j++ {
		run = append(run, j)
	}
	return run
}

// match checks one GPU op against its invocations.
func match(s *Schedule, c *Call, set *signatures.Set, tl []int, same SameKernel) error {
	sig := set.Signatures[set.Timeline[tl[0]].Sig]
	if c.Kind == Graph {
		if !sig.Graph {
			return fmt.Errorf("a graph launch, the trace's %s %q is not a graph's", sig.Activity, sig.Kernel)
		}
		return nil
	}
	if len(tl) != 1 {
		return fmt.Errorf("a %s record, the trace's call launched %d activities", c.Kind, len(tl))
	}
	if sig.Graph {
		return fmt.Errorf("a %s record, the trace's %s %q ran in a graph", c.Kind, sig.Activity, sig.Kernel)
	}
	switch c.Kind {
	case Launch:
		if sig.Activity != signatures.ActivityKernel {
			return fmt.Errorf("a kernel launch, the trace's is a %s", sig.Activity)
		}
		if rec := s.Names[c.Name]; !same(sig.Kernel, rec) {
			return fmt.Errorf("kernel %q, the trace's %q", rec, sig.Kernel)
		}
		if l := sig.Launch; l != nil && !sameDims(c.Grid, c.Block, l) {
			return fmt.Errorf("grid %v block %v, the trace's %v %v", c.Grid, c.Block, l.Grid, l.Block)
		}
	case Copy:
		m := sig.Memory
		if sig.Activity != signatures.ActivityMemcpy || m == nil {
			return fmt.Errorf("a copy, the trace's is a %s", sig.Activity)
		}
		if string(m.Kind) != string(c.Dir) || m.Bytes != c.Bytes {
			return fmt.Errorf("copy %s of %d bytes, the trace's %s of %d", c.Dir, c.Bytes, m.Kind, m.Bytes)
		}
	case Memset:
		m := sig.Memory
		if sig.Activity != signatures.ActivityMemset || m == nil {
			return fmt.Errorf("a memset, the trace's is a %s", sig.Activity)
		}
		if m.Bytes != c.Bytes {
			return fmt.Errorf("memset of %d bytes, the trace's of %d", c.Bytes, m.Bytes)
		}
	}
	return nil
}

func sameDims(grid, block [3]uint32, l *signatures.Launch) bool {
	for i := 0; i < 3; i++ {
		if int64(grid[i]) != l.Grid[i] || int64(block[i]) != l.Block[i] {
			return false
		}
	}
	return true
}
