package replay

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/kreplay/kreplay/internal/cupti"
)

// HostRound is one launch-and-wait round of the host probe on an idle
// GPU, from CUPTI's records: times in ns on CUPTI's clock, from the
// launch call's enter.
type HostRound struct {
	// LaunchEndNS is the launch call's return; KernelStartNS and
	// KernelEndNS the kernel's run on the GPU.
	LaunchEndNS   int64 `json:"launch_end_ns"`
	KernelStartNS int64 `json:"kernel_start_ns"`
	KernelEndNS   int64 `json:"kernel_end_ns"`
	// Copy marks a round of the .item() pattern: the copy call's enter
	// and return and the copy's run on the GPU follow.
	Copy            bool  `json:"copy,omitempty"`
	CopyCallStartNS int64 `json:"copy_call_start_ns,omitempty"`
	CopyCallEndNS   int64 `json:"copy_call_end_ns,omitempty"`
	CopyStartNS     int64 `json:"copy_start_ns,omitempty"`
	CopyEndNS       int64 `json:"copy_end_ns,omitempty"`
	// WaitStartNS and WaitEndNS are the cuStreamSynchronize call's enter
	// and return.
	WaitStartNS int64 `json:"wait_start_ns"`
	WaitEndNS   int64 `json:"wait_end_ns"`
}

// SubmitNS is the launch call's enter to the kernel's start.
func (r HostRound) SubmitNS() int64 { return r.KernelStartNS }

// WakeNS is the GPU's finish (the copy's end in a copy round, else the
// kernel's) to the host's return from the synchronize.
func (r HostRound) WakeNS() int64 {
	if r.Copy {
		return r.WaitEndNS - r.CopyEndNS
	}
	return r.WaitEndNS - r.KernelEndNS
}

// Waited reports whether the host entered its wait (the copy call in a
// copy round, else the synchronize) before the kernel ended; in a round
// where it did not, WakeNS holds the host's late arrival, not its wake.
func (r HostRound) Waited() bool {
	if r.Copy {
		return r.CopyCallStartNS < r.KernelEndNS
	}
	return r.WaitStartNS < r.KernelEndNS
}

// hostCalls indexes the driver calls of a set of records.
type hostCalls struct {
	byCorr   map[uint32]cupti.Record
	byThread map[uint32][]cupti.Record // by enter
}

func indexCalls(recs []cupti.Record) hostCalls {
	c := hostCalls{byCorr: map[uint32]cupti.Record{}, byThread: map[uint32][]cupti.Record{}}
	for _, r := range recs {
		if r.Kind == cupti.KindDriver {
			c.byCorr[r.CorrelationID] = r
			c.byThread[r.ThreadID] = append(c.byThread[r.ThreadID], r)
		}
	}
	for _, v := range c.byThread {
		slices.SortStableFunc(v, func(a, b cupti.Record) int { return cmp.Compare(a.Start, b.Start) })
	}
	return c
}

// next is the first call of c's thread entered after c returned.
func (h hostCalls) next(c cupti.Record) (cupti.Record, bool) {
	v := h.byThread[c.ThreadID]
	i, _ := slices.BinarySearchFunc(v, c.End, func(r cupti.Record, t uint64) int { return cmp.Compare(r.Start, t) })
	for ; i < len(v); i++ {
		if v[i].CorrelationID != c.CorrelationID {
			return v[i], true
		}
	}
	return cupti.Record{}, false
}

// kernelsByStart returns the kernel records by start on the GPU.
func kernelsByStart(recs []cupti.Record) []cupti.Record {
	var ks []cupti.Record
	for _, r := range recs {
		if r.Kind == cupti.KindKernel || r.Kind == cupti.KindConcurrentKernel {
			ks = append(ks, r)
		}
	}
	slices.SortStableFunc(ks, func(a, b cupti.Record) int { return cmp.Compare(a.Start, b.Start) })
	return ks
}

// hostRounds pairs the records of launch-and-wait rounds, one kernel
// each: its launch call (by correlation id), the call its thread made
// next, which is the synchronize or, where it issued a copy, the copy
// call, then the synchronize after that.
func hostRounds(recs []cupti.Record) ([]HostRound, error) {
	calls := indexCalls(recs)
	copies := map[uint32]cupti.Record{}
	for _, r := range recs {
		if r.Kind == cupti.KindMemcpy {
			copies[r.CorrelationID] = r
		}
	}
	var rounds []HostRound
	for i, k := range kernelsByStart(recs) {
		l, ok := calls.byCorr[k.CorrelationID]
		if !ok {
			return nil, fmt.Errorf("round %d: no driver call recorded for the launch of kernel %d", i, k.CorrelationID)
		}
		if k.Start < l.Start || l.End < l.Start {
			return nil, fmt.Errorf("round %d: kernel starts at %d, its launch call runs %d to %d: CUPTI's host and GPU times disagree",
				i, k.Start, l.Start, l.End)
		}
		at := func(t uint64) int64 { return int64(t) - int64(l.Start) }
		r := HostRound{LaunchEndNS: at(l.End), KernelStartNS: at(k.Start), KernelEndNS: at(k.End)}
		w, ok := calls.next(l)
		if c, isCopy := copies[w.CorrelationID]; ok && isCopy {
			r.Copy = true
			r.CopyCallStartNS, r.CopyCallEndNS = at(w.Start), at(w.End)
			r.CopyStartNS, r.CopyEndNS = at(c.Start), at(c.End)
			w, ok = calls.next(w)
		}
		if !ok {
			return nil, fmt.Errorf("round %d: no synchronize recorded after the launch of kernel %d", i, k.CorrelationID)
		}
		r.WaitStartNS, r.WaitEndNS = at(w.Start), at(w.End)
		rounds = append(rounds, r)
	}
	return rounds, nil
}

// setRounds sets p's round figures from the rounds of both kinds: Submit
// and Launch from all, Wake and CopyWake from those whose host waited,
// TracedRoundTrip from the synchronize rounds.
func (p *HostProbe) setRounds(rounds []HostRound) error {
	var submit, launch, wake, copyWake, traced []float64
	p.Rounds, p.CopyRounds, p.Late = nil, nil, 0
	for _, r := range rounds {
		submit = append(submit, float64(r.SubmitNS()))
		launch = append(launch, float64(r.LaunchEndNS))
		if r.Copy {
			p.CopyRounds = append(p.CopyRounds, r)
		} else {
			p.Rounds = append(p.Rounds, r)
			traced = append(traced, float64(r.WaitEndNS))
		}
		switch {
		case !r.Waited():
			p.Late++
		case r.Copy:
			copyWake = append(copyWake, float64(r.WakeNS()))
		default:
			wake = append(wake, float64(r.WakeNS()))
		}
	}
	if len(wake) == 0 || len(copyWake) == 0 {
		return fmt.Errorf("of %d synchronize and %d copy rounds, %d and %d had the host waiting before the kernel ended: lengthen WakeKernel",
			len(p.Rounds), len(p.CopyRounds), len(wake), len(copyWake))
	}
	p.Submit, p.Launch, p.Wake, p.CopyWake = spreadOf(submit), spreadOf(launch), spreadOf(wake), spreadOf(copyWake)
	p.TracedRoundTrip = spreadOf(traced)
	p.SubmitNS, p.WakeNS, p.CopyWakeNS = p.Submit.MedianNS, p.Wake.MedianNS, p.CopyWake.MedianNS
	return nil
}

// QueueProbe is the run of tiny kernels queued back to back on one
// stream behind a blocker kernel that holds the stream while the host
// launches them.
type QueueProbe struct {
	// Kernels is how many tiny kernels were launched; Queued how many of
	// them, in launch order, had their launch call return before the
	// blocker ended: the run the figures are taken from.
	Kernels int `json:"kernels"`
	Queued  int `json:"queued"`
	// BlockerNS is the blocker's duration; Tries how many runs it took,
	// the blocker twice as long each time, for the host to queue two
	// kernels before it ended.
	BlockerNS float64 `json:"blocker_ns"`
	Tries     int     `json:"tries,omitempty"`
	// SpanNS is the queued run's first start to last end; BusyNS the sum
	// of their durations; GapNS = (SpanNS − BusyNS)/(Queued − 1).
	SpanNS float64 `json:"span_ns"`
	BusyNS float64 `json:"busy_ns"`
	GapNS  float64 `json:"gap_ns"`
	// Gap, Kernel and Launch summarise the gaps between consecutive
	// queued kernels, their durations, and their launch calls' durations
	// (the host's launch cost while the stream is busy).
	Gap    Spread `json:"gap"`
	Kernel Spread `json:"kernel"`
	Launch Spread `json:"launch"`
	// GapsNS are the raw gaps, in order.
	GapsNS []int64 `json:"gaps_ns"`
}

// errNotAhead is queueRun's error when fewer than two tiny kernels were
// launched before the blocker ended.
var errNotAhead = errors.New("the host did not keep ahead")

// queueRun reads the queue probe's records: the first kernel on the GPU
// is the blocker, the rest the tiny kernels in launch order.
func queueRun(recs []cupti.Record) (QueueProbe, error) {
	ks := kernelsByStart(recs)
	if len(ks) < 3 {
		return QueueProbe{}, fmt.Errorf("queue probe: CUPTI recorded %d kernels, want a blocker and at least 2 more", len(ks))
	}
	calls := indexCalls(recs)
	blocker, tiny := ks[0], ks[1:]
	q := QueueProbe{Kernels: len(tiny), BlockerNS: float64(blocker.Duration())}
	var launch []float64
	for i, k := range tiny {
		l, ok := calls.byCorr[k.CorrelationID]
		if !ok {
			return QueueProbe{}, fmt.Errorf("queue probe: kernel %d: no driver call recorded for its launch", i+1)
		}
		if l.End > blocker.End {
			break
		}
		launch = append(launch, float64(l.Duration()))
		q.Queued++
	}
	if q.Queued < 2 {
		return q, fmt.Errorf("queue probe: %d of %d kernels were launched before the %.0f µs blocker ended: %w",
			q.Queued, q.Kernels, q.BlockerNS/1e3, errNotAhead)
	}
	run := tiny[:q.Queued]
	var durs, gaps []float64
	for i, k := range run {
		durs = append(durs, float64(k.Duration()))
		q.BusyNS += float64(k.Duration())
		if i > 0 {
			g := int64(k.Start) - int64(run[i-1].End)
			q.GapsNS = append(q.GapsNS, g)
			gaps = append(gaps, float64(g))
		}
	}
	q.SpanNS = float64(run[len(run)-1].End) - float64(run[0].Start)
	q.GapNS = (q.SpanNS - q.BusyNS) / float64(q.Queued-1)
	q.Gap, q.Kernel, q.Launch = spreadOf(gaps), spreadOf(durs), spreadOf(launch)
	return q, nil
}

// spreadOf summarises v (the zero Spread for none).
func spreadOf(v []float64) Spread {
	if len(v) == 0 {
		return Spread{}
	}
	s := slices.Sorted(slices.Values(v))
	return Spread{N: len(s), MedianNS: quantile(s, 0.5), P10NS: quantile(s, 0.1), P90NS: quantile(s, 0.9),
		MinNS: s[0], MaxNS: s[len(s)-1]}
}

// quantile is the q-quantile of sorted s, linearly interpolated between
// the closest ranks.
func quantile(s []float64, q float64) float64 {
	x := q * float64(len(s)-1)
	i := int(math.Floor(x))
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (x-float64(i))*(s[i+1]-s[i])
}
