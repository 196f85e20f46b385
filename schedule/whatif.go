package schedule

import (
	"errors"
	"fmt"
	"math"
)

// The host what-ifs (issue 43, item 6): pure functions that return a new
// schedule to simulate in place of the captured one. Each leaves its input
// unchanged; the result has no Process (its walls were the captured run's),
// but FasterHost keeps the recorder's cost per call, scaled.

// FasterHost returns s with the host factor times faster: every gap
// between calls (and between inferences) and every own duration of a call
// that does not wait divided by factor; the waits (W, sync copies and
// memsets, Q that returned ready) keep their captured durations, which are
// the GPU's. factor > 1 is a faster host, < 1 a slower one.
//
// Assumption (a guess, not measured): the framework's time and the driver's
// launch path scale alike with the host's speed. A faster CPU speeds them
// unevenly (memory-bound host code, the launch's writes to the GPU over PCIe
// do not scale with the clock), so the result is the most a host factor
// times faster could give.
//
// Calls are laid out one after another, as Simulate takes them: a call
// that overlapped the one before it (another thread's) gets a zero gap. An
// inference's End keeps its distance past its last exit, scaled.
func FasterHost(s *Schedule, factor float64) (*Schedule, error) {
	if factor <= 0 || math.IsNaN(factor) || math.IsInf(factor, 0) {
		return nil, fmt.Errorf("faster host: factor %g: want a finite number > 0", factor)
	}
	if err := checkWhatIf(s); err != nil {
		return nil, fmt.Errorf("faster host: %w", err)
	}
	scale := func(ns int64) int64 {
		if v := math.Round(float64(ns) / factor); v <= float64(maxNS) {
			return int64(v)
		}
		return maxNS + 1
	}
	out := whatIfHeader(s)
	if p := s.Process; p != nil && p.CallOverheadNS > 0 {
		// The recorder's cost per call still sits in the scaled gaps:
		// Simulate takes it off, scaled alike.
		out.Process = &Process{PID: p.PID, CallOverheadNS: scale(p.CallOverheadNS)}
	}
	var l layout
	for i := range s.Inferences {
		inf := &s.Inferences[i]
		l.open(s, i, scale)
		calls := make([]Call, len(inf.Calls))
		for k, c := range inf.Calls {
			own := c.Exit - c.Enter
			if !c.IsWait() {
				own = scale(own)
			}
			c.Enter, c.Exit = l.place(scale(gapBefore(inf.Calls, k)), own)
			calls[k] = c
		}
		out.Inferences = append(out.Inferences, l.close(inf, calls, scale))
	}
	return finishWhatIf(out, "faster host")
}

// GraphLabel labels the ops of UnderGraphs' graph launches in GraphOps.
const GraphLabel = "(CUDA graph)"

// UnderGraphs returns s as the same model would run under CUDA graphs: in
// each inference, each run of GPU ops from one that does not wait up to
// the next wait (W, a sync copy or memset, a Q that returned ready) becomes
// one G on the first op's stream, whose host call lasts graphLaunchNS (the
// caller's measurement of a graph launch) and whose kernels are the run's
// ops in order (GraphOps, GraphGroups). The host's gaps and calls inside a
// run are gone: the G enters the captured gap before the run's first op
// after the call before it; the run's other calls follow the G with no gap
// (marks and not-ready queries, host work a graph does not replace, with
// their captured durations; event records and stream waits, captured into
// the graph, with none), and so does the wait that ends the run. Waits
// keep their captured durations, the calls outside runs their gaps and
// durations.
//
// Assumptions, each a guess, not measured:
//   - every GPU op of a run can be captured (a copy from pageable host
//     memory cannot), and the host's time from a wait to the next run's
//     first op (the loop's own work: sampling, stopping) stays outside the
//     graph;
//   - the graph's kernels run one after another on its stream, QueueGapNS
//     apart (Simulate's G): the overlap of a run's streams is lost and the
//     kernels start as far apart as queued ones;
//   - a stream whose ops went into a graph is the graph's stream from then
//     on: later waits, records and stream waits on it, and later graphs of
//     its ops, go to that stream; an event recorded in a run completes
//     with the whole graph.
//
// Each inference's graphs are numbered from 1 in order, their number the
// graph exec handle (a decode step replays the same graphs).
func UnderGraphs(s *Schedule, graphLaunchNS int64) (*Schedule, error) {
	if graphLaunchNS < 0 || graphLaunchNS > maxNS {
		return nil, fmt.Errorf("under graphs: graph launch %d ns: want 0..2^62", graphLaunchNS)
	}
	if err := checkWhatIf(s); err != nil {
		return nil, fmt.Errorf("under graphs: %w", err)
	}
	same := func(ns int64) int64 { return ns }
	out := whatIfHeader(s)
	streams := map[uint64]uint64{}
	var l layout
	for i := range s.Inferences {
		inf := &s.Inferences[i]
		l.open(s, i, same)
		var calls []Call
		for _, p := range graphPlan(inf.Calls) {
			calls = append(calls, p.calls(inf.Calls, &l, streams, graphLaunchNS)...)
		}
		out.Inferences = append(out.Inferences, l.close(inf, calls, same))
	}
	return finishWhatIf(out, "under graphs")
}

// GraphGroups returns, for each inference of s (the captured schedule)
// and each GPU op of UnderGraphs(s), the indices of s's GPU ops it holds:
// a graph's run in order, or the one op kept as it was (a sync copy or
// memset). A caller maps the ops' energies with it, say.
func GraphGroups(s *Schedule) ([][][]int, error) {
	if err := checkWhatIf(s); err != nil {
		return nil, fmt.Errorf("graph groups: %w", err)
	}
	out := make([][][]int, len(s.Inferences))
	for i := range s.Inferences {
		out[i], _ = graphGroups(s.Inferences[i].Calls)
	}
	return out, nil
}

// graphGroups returns the groups of GraphGroups for one inference and
// whether each is a graph.
func graphGroups(calls []Call) (groups [][]int, graph []bool) {
	op := 0
	for _, p := range graphPlan(calls) {
		var g []int
		for k := p.from; k < p.to; k++ {
			if calls[k].Kind.GPU() {
				g = append(g, op)
				op++
			}
		}
		if len(g) > 0 {
			groups, graph = append(groups, g), append(graph, p.graph)
		}
	}
	return groups, graph
}

// GraphOps maps ops, Simulate's ops of s (the captured schedule), to the
// ops of UnderGraphs(s): a graph's times are its run's ops' times
// concatenated, labelled GraphLabel; an op kept as it was keeps its own.
func GraphOps(s *Schedule, ops [][]Op) ([][]Op, error) {
	if err := checkWhatIf(s); err != nil {
		return nil, fmt.Errorf("graph ops: %w", err)
	}
	if len(ops) != len(s.Inferences) {
		return nil, fmt.Errorf("graph ops: ops for %d inferences, the schedule has %d", len(ops), len(s.Inferences))
	}
	out := make([][]Op, len(ops))
	for i := range s.Inferences {
		calls := s.Inferences[i].Calls
		if n := s.Inferences[i].GPUOps(); len(ops[i]) != n {
			return nil, fmt.Errorf("graph ops: inference %d has %d GPU ops, %d ops given", i, n, len(ops[i]))
		}
		groups, graph := graphGroups(calls)
		for g, members := range groups {
			if !graph[g] {
				out[i] = append(out[i], ops[i][members[0]])
				continue
			}
			op := Op{Label: GraphLabel}
			for _, j := range members {
				op.DurNS = append(op.DurNS, ops[i][j].DurNS...)
			}
			out[i] = append(out[i], op)
		}
	}
	return out, nil
}

// piece is a part of an inference's calls, [from, to): a graph's run, or
// one call kept as it was.
type piece struct {
	from, to int
	graph    bool
}

// graphPlan splits calls into pieces: each run from a GPU op that does not
// wait up to the next wait (or the end) is a graph; every other call is
// kept.
func graphPlan(calls []Call) []piece {
	var out []piece
	for k := 0; k < len(calls); {
		c := &calls[k]
		if !c.Kind.GPU() || c.IsWait() {
			out = append(out, piece{from: k, to: k + 1})
			k++
			continue
		}
		end := k
		for end < len(calls) && !calls[end].IsWait() {
			end++
		}
		out = append(out, piece{from: k, to: end, graph: true})
		k = end
	}
	return out
}

// calls lays out the piece's calls under graphs; streams maps a stream
// whose ops went into a graph to the graph's stream.
func (p piece) calls(calls []Call, l *layout, streams map[uint64]uint64, launchNS int64) []Call {
	if !p.graph {
		c := calls[p.from]
		moveStream(&c, streams)
		gap := gapBefore(calls, p.from)
		if l.afterGraph {
			gap = 0 // the wait that ends a run follows its graph
		}
		l.afterGraph = false
		c.Enter, c.Exit = l.place(gap, c.Exit-c.Enter)
		return []Call{c}
	}
	l.graphs++
	l.afterGraph = true
	g := Call{Kind: Graph, Stream: calls[p.from].Stream, Handle: uint64(l.graphs)}
	moveStream(&g, streams)
	g.Enter, g.Exit = l.place(gapBefore(calls, p.from), launchNS)
	out := []Call{g}
	for k := p.from; k < p.to; k++ {
		c := calls[k]
		switch {
		case c.Kind.GPU():
			streams[c.Stream] = g.Stream
			continue
		case c.Kind == Record || c.Kind == StreamWait:
			c.Stream = g.Stream
			c.Enter, c.Exit = l.place(0, 0)
		default: // a mark or a not-ready query
			moveStream(&c, streams)
			c.Enter, c.Exit = l.place(0, c.Exit-c.Enter)
		}
		out = append(out, c)
	}
	return out
}

// moveStream gives a call that names a stream the stream its ops went to.
func moveStream(c *Call, streams map[uint64]uint64) {
	if (c.Kind == Wait || c.Kind == Query) && c.Target != OnStream || c.Kind == Mark {
		return
	}
	if to, ok := streams[c.Stream]; ok {
		c.Stream = to
	}
}

// layout places a what-if inference's calls one after another, ns after
// its start; times past 2^62 are left for Validate to reject.
type layout struct {
	start  int64 // the inference's start on the clock
	at     int64 // the last call's exit
	graphs int   // graphs so far in the inference
	// afterGraph is set when the last call placed ends a graph's run.
	afterGraph bool
	prevAt     int64 // the previous inference's last exit on the clock
}

// open starts inference i the captured gap (through scale) after the
// previous one's last exit.
func (l *layout) open(s *Schedule, i int, scale func(int64) int64) {
	inf := &s.Inferences[i]
	if i == 0 {
		l.start = inf.Start
	} else {
		prev := &s.Inferences[i-1]
		gap := inf.Start - (prev.Start + prev.Calls[len(prev.Calls)-1].Exit)
		l.start = add(l.prevAt, scale(max(gap, 0)))
	}
	l.at, l.graphs, l.afterGraph = 0, 0, false
}

// place puts a call gap after the last one's exit, lasting own.
func (l *layout) place(gap, own int64) (enter, exit int64) {
	enter = add(l.at, gap)
	l.at = add(enter, own)
	return enter, l.at
}

// close ends the inference: its End keeps its distance past the last exit
// (through scale).
func (l *layout) close(inf *Inference, calls []Call, scale func(int64) int64) Inference {
	last := inf.Calls[len(inf.Calls)-1].Exit
	out := Inference{Start: l.start, Calls: calls, End: add(l.at, scale(inf.End-last)), Fresh: inf.Fresh}
	l.prevAt = add(l.start, l.at)
	return out
}

// add adds two times in 0..2^62+1, saturating at 2^62+1.
func add(a, b int64) int64 {
	if a > maxNS-b {
		return maxNS + 1
	}
	return a + b
}

// gapBefore is the captured gap before call k (0 for the first, and for a
// call that entered before the previous one's exit).
func gapBefore(calls []Call, k int) int64 {
	if k == 0 {
		return 0
	}
	return max(calls[k].Enter-calls[k-1].Exit, 0)
}

func checkWhatIf(s *Schedule) error {
	if s == nil {
		return errors.New("no schedule")
	}
	return s.Validate()
}

// whatIfHeader copies s's header; the result has no Process.
func whatIfHeader(s *Schedule) *Schedule {
	names := make(map[uint32]string, len(s.Names))
	for id, n := range s.Names {
		names[id] = n
	}
	return &Schedule{Version: s.Version, Source: s.Source, CPU: s.CPU, Clock: s.Clock, Names: names}
}

func finishWhatIf(s *Schedule, what string) (*Schedule, error) {
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%s: the result: %w", what, err)
	}
	return s, nil
}
