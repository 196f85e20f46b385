package schedule

import (
	"errors"
	"fmt"
	"math"
)

// Constants are the model's host-GPU constants (docs/whole-inference.md,
// section 3). SubmitNS, QueueGapNS, WakeNS and WaitPowerW are measured on
// the replay GPU by replay's host probes.
type Constants struct {
	// SubmitNS is the time from a launch's host enter to the kernel's start
	// on an idle GPU.
	SubmitNS int64
	// QueueGapNS is the gap between a queued kernel and the one before it.
	QueueGapNS int64
	// WakeNS is the time from the GPU reaching a wait's target to the
	// host's return from the wait.
	WakeNS int64
	// MaxCallNS caps the own host cost of a call that does not wait: a
	// labelled guess, not a measurement. A call that blocked (a launch on
	// a full queue) lasted longer than its host work; what exceeds the cap
	// is taken as blocking. 0 means no cap. A wait's own cost is capped at
	// WakeNS instead.
	MaxCallNS int64
	// WaitPowerW is the GPU's power while it waits for the host between
	// short kernels (active idle), used by Energy.
	WaitPowerW float64
}

// Op is what the simulation needs of one GPU op (L, C, S or G, in host
// order): its predicted time and a label for the host breakdown (the
// signature's op name, say).
type Op struct {
	// DurNS holds one time for an L, C or S; for a G, its kernels' times
	// in order, run back to back on its stream QueueGapNS apart.
	DurNS []int64
	Label string
	// Collective marks an op that runs with its peers on the other ranks
	// (an NCCL kernel): SimulateGroup starts the k-th collective of every
	// rank together; Simulate runs it as any other op.
	Collective bool
}

// Quantiles of a set of times, ns: the median (the mean of the middle two
// of an even count) and the 10th and 90th percentiles (nearest rank).
type Quantiles struct {
	P10, Median, P90 float64
}

// HostSplit is host time split TaxBreak-style: framework time (the gaps
// between calls), the launch path (the calls' own cost) and waits (calls
// that blocked on the GPU, whole).
type HostSplit struct {
	FrameworkNS float64
	LaunchNS    float64
	WaitNS      float64
}

// Dominant names the largest part: "framework", "launch path" or "waits".
func (h HostSplit) Dominant() string {
	switch {
	case h.FrameworkNS >= h.LaunchNS && h.FrameworkNS >= h.WaitNS:
		return "framework"
	case h.LaunchNS >= h.WaitNS:
		return "launch path"
	}
	return "waits"
}

// HostShare is the host time, per inference, spent for the GPU ops of one
// label: the gaps and calls before an op (since the previous GPU op) and
// the op's own call are its framework and launch path; a wait belongs to
// the GPU op launched last before it.
type HostShare struct {
	Label string
	// Ops is the number of GPU ops with the label per inference.
	Ops float64
	HostSplit
}

// TailLabel labels the host time after an inference's last GPU op.
const TailLabel = "(after the last GPU op)"

// InferenceTimes are one simulated inference's times, ns from the first
// inference's start.
type InferenceTimes struct {
	// Start is the first call's enter; End the later of the last call's
	// exit and the last GPU op's end.
	Start, End int64
	// Ops is the number of GPU ops.
	Ops int
	// Tokens are the ends of the first wait after each token mark (the
	// inference's end where no wait follows one).
	Tokens []int64
	// HostWaitNS is the time the host was blocked on the GPU.
	HostWaitNS int64
	// PeerWaitNS is the time its collectives waited for the other ranks
	// (SimulateGroup).
	PeerWaitNS int64
	// Steady says the inference counts in the per-inference figures: it
	// follows the previous one back to back (not the first, not Fresh).
	Steady bool
}

// Result is the simulated figures of a schedule, per inference in steady
// state: the inferences that follow another back to back (not the first,
// not a Fresh one), over the windows from each run of back-to-back
// inferences' first end to its last end; each inference over its own span
// where none follows another.
type Result struct {
	Inferences int
	// Steady is the number of inferences the per-inference figures are
	// means over (Times[i].Steady), FirstSteady the first of them.
	Steady, FirstSteady int
	// WallNS is the MEAN wall per steady inference: the interval from the
	// previous back-to-back inference's end to its own end (none back to
	// back: its own span), averaged; the per-inference energy and the
	// figures below are means over the same inferences. WallQ is the
	// quantiles of the same per-inference walls: its Median is the wall
	// the whole-inference acceptance holds against the measured median
	// inference (docs/whole-inference.md, "Judging").
	WallNS float64
	WallQ  Quantiles
	// BusyNS is the time the GPU ran ops (their union over streams).
	BusyNS float64
	// GPUIdleNS is WallNS - BusyNS - PeerWaitNS: the GPU waiting for the
	// host.
	GPUIdleNS float64
	// HostWaitNS is the time the host was blocked on the GPU.
	HostWaitNS float64
	// PeerWaitNS is the time the rank's collectives waited for the other
	// ranks (SimulateGroup; 0 alone). It is part of BusyNS's complement:
	// the GPU runs NCCL's kernel then, waiting.
	PeerWaitNS float64
	// Bound is "host" when the GPU idled longer than the host waited,
	// else "gpu".
	Bound string
	// Host is the host's time split; Shares the same per op label, largest
	// first.
	Host   HostSplit
	Shares []HostShare
	// Tokens is the mean count of token marks; TTFT (over all inferences:
	// start to the first token) and TPOT (all intervals between
	// consecutive tokens) are zero without tokens.
	Tokens     float64
	TTFT, TPOT Quantiles
	Times      []InferenceTimes
}

// Simulate runs the model of docs/whole-inference.md (section 3) on s with
// ops[i][j] the j-th GPU op of inference i, in linear time in the calls
// (the GPU's busy time sorts the ops' spans only where several streams
// put them out of start order).
//
// The host: each call enters its captured gap (clamped at 0) after the
// previous call's simulated exit (the first call of an inference after
// the previous inference's last, by the captured starts; a Fresh
// inference's first call at once after the GPU finished all before it, as
// a host that synchronized); a call's own
// cost is its captured duration capped at MaxCallNS, a wait's capped at
// WakeNS (what a captured wait spent beyond that was the capture's GPU,
// not host work). The GPU: an op on a stream starts at max(enter +
// SubmitNS, the stream's last end + QueueGapNS if that is later than
// enter + SubmitNS, the latest event the stream was made to wait on) and
// lasts its time. A wait (W, a sync copy
// or memset, a Q that returned ready) exits at max(enter + own cost, the
// target's time + WakeNS): a stream's last end (or the event it waits on,
// if later), an event's record time (0 if never recorded: no wait), or
// every stream's end for a context wait. An event record takes its
// stream's current end. Streams are independent: the legacy default
// stream's implicit synchronization is not modelled.
func Simulate(s *Schedule, ops [][]Op, c Constants) (Result, error) {
	if err := checkInput(s, ops, c); err != nil {
		return Result{}, fmt.Errorf("simulate: %w", err)
	}
	sim := newSim(s, c)
	for i := range s.Inferences {
		sim.inference(i, ops[i])
	}
	return sim.result(), nil
}

func checkInput(s *Schedule, ops [][]Op, c Constants) error {
	if s == nil {
		return errors.New("no schedule")
	}
	if err := s.Validate(); err != nil {
		return err
	}
	if c.SubmitNS < 0 || c.QueueGapNS < 0 || c.WakeNS < 0 || c.MaxCallNS < 0 || c.WaitPowerW < 0 || math.IsNaN(c.WaitPowerW) {
		return fmt.Errorf("negative constant in %+v", c)
	}
	if len(ops) != len(s.Inferences) {
		return fmt.Errorf("ops for %d inferences, the schedule has %d", len(ops), len(s.Inferences))
	}
	for i := range s.Inferences {
		calls := s.Inferences[i].Calls
		j := 0
		for k := range calls {
			if !calls[k].Kind.GPU() {
				continue
			}
			if j >= len(ops[i]) {
				return fmt.Errorf("inference %d: %d ops given, GPU op %d (record %d) has none", i, len(ops[i]), j, k)
			}
			d := ops[i][j].DurNS
			if len(d) == 0 || (len(d) > 1 && calls[k].Kind != Graph) {
				return fmt.Errorf("inference %d: GPU op %d (record %d, %s) has %d times", i, j, k, calls[k].Kind, len(d))
			}
			for _, v := range d {
				if v < 0 || v > maxNS {
					return fmt.Errorf("inference %d: GPU op %d (record %d) lasts %d ns", i, j, k, v)
				}
			}
			j++
		}
		if j != len(ops[i]) {
			return fmt.Errorf("inference %d has %d GPU ops, %d ops given", i, j, len(ops[i]))
		}
	}
	return nil
}

// stream is a stream's state: free is when its last op ends, wait the
// latest event it was made to wait on.
type stream struct{ free, wait int64 }

type sim struct {
	s       *Schedule
	c       Constants
	streams map[uint64]*stream
	events  map[uint64]int64
	allFree int64 // when every stream is done, so far
	host    int64 // the previous call's simulated exit
	spans   [][2]int64
	times   []InferenceTimes
	shares  map[string]*HostShare
	order   []string // labels in first-seen order
	steady  []bool   // Times[i].Steady
	// peers, in a group's simulation (SimulateGroup), starts the rank's
	// k-th collective: given the time this rank's stream reaches it, the
	// time every rank's has (ok false once the ranks disagree); nil alone.
	peers    func(k int, arrive int64) (start int64, ok bool)
	colls    int   // collectives placed so far
	peerWait int64 // the current inference's time waiting for peers
	err      error
}

func newSim(s *Schedule, c Constants) *sim {
	n := 0
	for i := range s.Inferences {
		n += len(s.Inferences[i].Calls)
	}
	return &sim{
		s: s, c: c, streams: map[uint64]*stream{}, events: map[uint64]int64{},
		spans: make([][2]int64, 0, n), shares: map[string]*HostShare{}, steady: steadyOnes(s.Inferences),
	}
}

// steadyOnes says which inferences follow another back to back; all of
// them where none does (each then counts over its own span).
func steadyOnes(infs []Inference) []bool {
	steady := make([]bool, len(infs))
	any := false
	for i := range infs {
		steady[i] = i > 0 && !infs[i].Fresh
		any = any || steady[i]
	}
	if !any {
		for i := range steady {
			steady[i] = true
		}
	}
	return steady
}

func (m *sim) stream(h uint64) *stream {
	st, ok := m.streams[h]
	if !ok {
		st = &stream{}
		m.streams[h] = st
	}
	return st
}

// gap is the captured host gap before call k of inference i, less the
// recorder's own cost per recorded call (Process.CallOverheadNS) where the
// call is one the recorder recorded (not a mark), at least 0: the
// recorder's cost falls around each call it records, and where the gap is
// shorter than it the rest is left in (an approximation).
func (m *sim) gap(i, k int) int64 {
	calls := m.s.Inferences[i].Calls
	var g int64
	switch {
	case k > 0:
		g = calls[k].Enter - calls[k-1].Exit
	case i > 0 && !m.s.Inferences[i].Fresh:
		prev := &m.s.Inferences[i-1]
		g = m.s.Inferences[i].Start - (prev.Start + prev.Calls[len(prev.Calls)-1].Exit)
	}
	if p := m.s.Process; p != nil && calls[k].Kind != Mark {
		g -= p.CallOverheadNS
	}
	return max(g, 0)
}

// inference simulates inference i's calls.
func (m *sim) inference(i int, ops []Op) {
	calls := m.s.Inferences[i].Calls
	t := InferenceTimes{Ops: len(ops), Steady: m.steady[i]}
	a := attribution{m: m, on: t.Steady}
	if i > 0 && m.s.Inferences[i].Fresh {
		m.host = max(m.host, m.allFree+m.c.WakeNS)
	}
	var gpuEnd int64
	marks := 0 // token marks waiting for a wait
	j := 0
	for k := range calls {
		c := &calls[k]
		var op *Op
		if c.Kind.GPU() {
			op = &ops[j]
		}
		st := m.step(i, k, op)
		gap, enter, exit, own := st.gap, st.enter, st.exit, st.own
		if k == 0 {
			t.Start = enter
		}
		gpuEnd = max(gpuEnd, st.end)
		part := HostSplit{FrameworkNS: float64(gap)}
		if c.IsWait() {
			part.WaitNS = float64(exit - enter)
			t.HostWaitNS += exit - enter - own
			for ; marks > 0; marks-- {
				t.Tokens = append(t.Tokens, exit)
			}
		} else {
			part.LaunchNS = float64(own)
		}
		if c.Kind == Mark && c.Mark == MarkToken {
			marks++
		}
		if c.Kind.GPU() {
			a.gpuOp(ops[j].Label, part)
			j++
		} else {
			a.hostCall(part, c.IsWait())
		}
	}
	a.end()
	t.PeerWaitNS, m.peerWait = m.peerWait, 0
	t.End = max(m.host, gpuEnd)
	for ; marks > 0; marks-- {
		t.Tokens = append(t.Tokens, t.End)
	}
	m.times = append(m.times, t)
}

// stepped is one simulated call: its gap before it, enter, exit and own
// cost, and for a GPU op its end.
type stepped struct{ gap, enter, exit, own, end int64 }

// step simulates call k of inference i after the previous call; op is
// its op if it is a GPU op.
func (m *sim) step(i, k int, op *Op) stepped {
	c := &m.s.Inferences[i].Calls[k]
	st := stepped{gap: m.gap(i, k), own: m.ownCost(c)}
	st.enter = m.host + st.gap
	st.exit = st.enter + st.own
	if c.Kind.GPU() {
		st.end = m.gpuOp(c, op, st.enter)
		if c.Sync {
			st.exit = max(st.exit, st.end+m.c.WakeNS)
		}
	} else if target, ok := m.hostOp(c); ok {
		st.exit = max(st.exit, target+m.c.WakeNS)
	}
	m.host = st.exit
	return st
}

// attribution gives an inference's host time to its GPU ops' labels: the
// gaps and calls since the previous GPU op, and the op's own call, to the
// op; a wait to the last GPU op before it (to the next where there is
// none); what follows the last op to TailLabel. It adds only when on.
type attribution struct {
	m       *sim
	on      bool
	pending HostSplit // host time since the last GPU op
	last    string    // the label of the last GPU op
}

func (a *attribution) gpuOp(l string, part HostSplit) {
	if !a.on {
		return
	}
	a.last = label(l)
	sh := a.m.share(a.last)
	sh.Ops++
	sh.add(a.pending)
	sh.add(part)
	a.pending = HostSplit{}
}

func (a *attribution) hostCall(part HostSplit, wait bool) {
	if !a.on {
		return
	}
	if wait && a.last != "" {
		a.m.share(a.last).add(HostSplit{WaitNS: part.WaitNS})
		part.WaitNS = 0
	}
	a.pending.add(part)
}

func (a *attribution) end() {
	if a.on && a.pending != (HostSplit{}) {
		a.m.share(TailLabel).add(a.pending)
	}
}

func label(l string) string {
	if l == "" {
		return "(unlabelled)"
	}
	return l
}

func (h *HostSplit) add(o HostSplit) {
	h.FrameworkNS += o.FrameworkNS
	h.LaunchNS += o.LaunchNS
	h.WaitNS += o.WaitNS
}

func (m *sim) share(l string) *HostShare {
	sh, ok := m.shares[l]
	if !ok {
		sh = &HostShare{Label: l}
		m.shares[l] = sh
		m.order = append(m.order, l)
	}
	return sh
}

// ownCost is a call's own host cost: its captured duration, capped at
// MaxCallNS; for a wait, capped at WakeNS instead, since what a captured
// wait spent beyond that was waiting for the capture's GPU (a wait that
// finds its target done returns at least as fast as one woken by it).
func (m *sim) ownCost(c *Call) int64 {
	own := c.Exit - c.Enter
	if c.IsWait() {
		return min(own, m.c.WakeNS)
	}
	if m.c.MaxCallNS > 0 {
		own = min(own, m.c.MaxCallNS)
	}
	return own
}

// gpuOp places a GPU op launched at enter and returns its end.
func (m *sim) gpuOp(c *Call, op *Op, enter int64) int64 {
	st := m.stream(c.Stream)
	start := enter + m.c.SubmitNS
	if st.free > start {
		start = st.free + m.c.QueueGapNS
	}
	start = max(start, st.wait)
	if op.Collective && m.peers != nil {
		start = m.withPeers(start)
	}
	end := start
	for q, d := range op.DurNS {
		if q > 0 {
			start = end + m.c.QueueGapNS
		}
		end = start + d
		m.spans = append(m.spans, [2]int64{start, end})
	}
	st.free = end
	m.allFree = max(m.allFree, end)
	return end
}

// withPeers is the start of the rank's next collective, which reaches its
// stream at arrive: once every rank's has (m.peers); the wait is counted.
func (m *sim) withPeers(arrive int64) int64 {
	k := m.colls
	m.colls++
	start, ok := m.peers(k, arrive)
	if !ok {
		if m.err == nil {
			m.err = fmt.Errorf("collective %d: not every rank reached it (the ranks' schedules launch different collectives)", k)
		}
		return arrive
	}
	m.peerWait += start - arrive
	return start
}

// hostOp applies a non-GPU call; for one that waits it returns the time
// the GPU reaches its target.
func (m *sim) hostOp(c *Call) (target int64, waits bool) {
	switch c.Kind {
	case Wait, Query:
		if !c.IsWait() {
			return 0, false
		}
		switch c.Target {
		case OnStream:
			st := m.stream(c.Stream)
			return max(st.free, st.wait), true
		case OnEvent:
			return m.events[c.Handle], true
		}
		return m.allFree, true
	case Record:
		st := m.stream(c.Stream)
		m.events[c.Handle] = max(st.free, st.wait)
	case StreamWait:
		if t, ok := m.events[c.Handle]; ok {
			st := m.stream(c.Stream)
			st.wait = max(st.wait, t)
			m.allFree = max(m.allFree, t)
		}
	}
	return 0, false
}
