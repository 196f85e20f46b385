package energy

import (
	"errors"
	"fmt"
	"time"
)

// This file holds the pure arithmetic behind Measure: turning recorded
// counter reads into ticks, choosing a window aligned to ticks, attributing
// work calls to it, and the power-integral fallback. Nothing here talks to
// NVML, so it is tested on recorded sequences.

// counterRead is one read of the total-energy counter: value mj (millijoules)
// as returned at time t.
type counterRead struct {
	t  time.Time
	mj uint64
}

// tick is an observed change of the counter: the read at at returned mj,
// and the previous read, at prev, still returned the old value. The true
// change happened in (prev, at]; mid is taken as its time, so the timing
// error of one tick is at most half of at-prev.
type tick struct {
	prev, at time.Time
	mj       uint64
}

func (k tick) mid() time.Time { return k.prev.Add(k.at.Sub(k.prev) / 2) }

// halfWidth is the largest error of k.mid() as the time of the change.
func (k tick) halfWidth() time.Duration { return k.at.Sub(k.prev) / 2 }

var errCounterBackwards = errors.New("energy: energy counter went backwards (driver reloaded?)")

// tickTracker turns a stream of reads into ticks.
type tickTracker struct {
	last    counterRead
	started bool
	ticks   []tick
}

// add records one read and reports whether it was a tick.
func (tr *tickTracker) add(r counterRead) (bool, error) {
	if !tr.started {
		tr.started, tr.last = true, r
		return false, nil
	}
	switch {
	case r.mj == tr.last.mj:
		tr.last = r
		return false, nil
	case r.mj < tr.last.mj:
		return false, fmt.Errorf("%w: %d mJ after %d mJ", errCounterBackwards, r.mj, tr.last.mj)
	}
	tr.ticks = append(tr.ticks, tick{prev: tr.last.t, at: r.t, mj: r.mj})
	tr.last = r
	return true, nil
}

// ticksOf converts a recorded sequence of reads to ticks.
func ticksOf(reads []counterRead) ([]tick, error) {
	var tr tickTracker
	for _, r := range reads {
		if _, err := tr.add(r); err != nil {
			return tr.ticks, err
		}
	}
	return tr.ticks, nil
}

// windowRule says when a window opens and closes. A window opens at the
// first tick whose change certainly happened at or after notBefore (its
// prev read is not before it) and closes at the first later tick that is at
// least minTicks ticks and minDur (between tick mid-points) after it.
type windowRule struct {
	notBefore time.Time
	minTicks  int
	minDur    time.Duration
}

func (w windowRule) opens(k tick) bool { return !k.prev.Before(w.notBefore) }

func (w windowRule) closes(ticks []tick, open, j int) bool {
	return j-open >= w.minTicks && ticks[j].mid().Sub(ticks[open].mid()) >= w.minDur
}

// find returns the indices of the opening and closing ticks.
func (w windowRule) find(ticks []tick) (open, close int, ok bool) {
	open = -1
	for i, k := range ticks {
		if w.opens(k) {
			open = i
			break
		}
	}
	if open < 0 {
		return 0, 0, false
	}
	for j := open + 1; j < len(ticks); j++ {
		if w.closes(ticks, open, j) {
			return open, j, true
		}
	}
	return open, 0, false
}

// callSpan is one call of the work function.
type callSpan struct {
	start, end time.Time
}

// callsIn attributes calls to the window [from, to]. Call i is taken to
// occupy [start_i, start_{i+1}) (the last one [start, end]) so that the loop
// overhead between calls is shared out and the calls tile time without gaps.
// A call cut by a window edge counts by the fraction of its time inside,
// which assumes it spends energy evenly over its time: at worst one call's
// worth at each edge is misattributed. complete counts calls that both
// started and ended inside the window.
func callsIn(calls []callSpan, from, to time.Time) (frac float64, complete int) {
	for i, c := range calls {
		s, e := c.start, c.end
		if i+1 < len(calls) {
			e = calls[i+1].start
		}
		if !e.After(s) {
			continue
		}
		lo, hi := maxTime(s, from), minTime(e, to)
		if hi.After(lo) {
			frac += float64(hi.Sub(lo)) / float64(e.Sub(s))
		}
		if !c.start.Before(from) && !c.end.After(to) {
			complete++
		}
	}
	return frac, complete
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// errNoWindow means the recording did not contain a complete window.
var errNoWindow = errors.New("energy: recording holds no complete window")

// counterReading computes a Reading from counter ticks and work calls.
func counterReading(ticks []tick, calls []callSpan, rule windowRule) (Reading, error) {
	open, close, ok := rule.find(ticks)
	if !ok {
		return Reading{}, fmt.Errorf("%w: %d ticks, need %d after the start and %v", errNoWindow, len(ticks), rule.minTicks, rule.minDur)
	}
	o, c := ticks[open], ticks[close]
	r := Reading{
		Method:          MethodEnergyCounter,
		Start:           o.mid(),
		End:             c.mid(),
		Joules:          float64(c.mj-o.mj) / 1000,
		Ticks:           close - open,
		TimeUncertainty: o.halfWidth() + c.halfWidth(),
	}
	r.finish(calls)
	return r, nil
}

// powerWindow chooses the fallback window over sampled states: it opens at
// the first state with a power reading taken at or after notBefore and
// closes at the first later one at least minDur after it.
func powerWindow(states []State, notBefore time.Time, minDur time.Duration) (open, close int, ok bool) {
	open = -1
	for i, s := range states {
		if s.PowerSource != PowerUnknown && !s.Time.Before(notBefore) {
			open = i
			break
		}
	}
	if open < 0 {
		return 0, 0, false
	}
	for j := open + 1; j < len(states); j++ {
		if states[j].PowerSource != PowerUnknown && states[j].Time.Sub(states[open].Time) >= minDur {
			return open, j, true
		}
	}
	return open, 0, false
}

// powerReading computes a Reading by integrating sampled power (trapezoid
// rule) over the window chosen by powerWindow.
func powerReading(states []State, calls []callSpan, notBefore time.Time, minDur time.Duration) (Reading, error) {
	open, close, ok := powerWindow(states, notBefore, minDur)
	if !ok {
		return Reading{}, fmt.Errorf("%w: %d power samples, need %v after the start", errNoWindow, len(states), minDur)
	}
	win := states[open : close+1]
	r := Reading{
		Method: MethodPowerIntegral,
		Start:  win[0].Time,
		End:    win[len(win)-1].Time,
		Joules: IntegratePower(win),
	}
	for _, s := range win {
		if s.PowerSource != PowerUnknown {
			r.Ticks++
			r.PowerSource = s.PowerSource
		}
	}
	r.Ticks-- // intervals between power readings
	r.finish(calls)
	return r, nil
}

// finish fills the fields derived from Start, End, Joules, Ticks and calls.
func (r *Reading) finish(calls []callSpan) {
	r.Seconds = r.End.Sub(r.Start).Seconds()
	if r.Seconds > 0 {
		r.Watts = r.Joules / r.Seconds
	}
	if r.Ticks > 0 {
		r.TickEnergyShare = 1 / float64(r.Ticks)
	}
	r.Calls, r.CompleteCalls = callsIn(calls, r.Start, r.End)
	if r.Calls > 0 {
		r.JoulesPerCall = r.Joules / r.Calls
		r.SecondsPerCall = r.Seconds / r.Calls
	}
}
