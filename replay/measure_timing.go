package replay

import (
	"time"

	"github.com/kreplay/kreplay/energy"
)

// measureTiming is the host time one Measure spends, by part (the
// measuring parts of Phases), each moment charged to one part: the
// innermost entered. A nil *measureTiming times nothing; the zero one is
// ready.
type measureTiming struct {
	// The timed samples' side: the idle pause; the warm-up launches; CUDA
	// graphs captured, instantiated and destroyed for the samples; the
	// timed samples and their statistics (less the CUPTI and NVML work
	// done among them); the CUPTI activity API's flushes of the records
	// (the warm-up's, dropped, and the samples'), and its enabling and
	// disabling; the NVML sampler's start and stop; the clock probe.
	pause, warmup, graphs, sampling, cupti, cuptiSwitch, nvml, probe time.Duration
	// cuptiWait is the wait for another GPU's recording to end (cuptiMu),
	// in a Group.
	cuptiWait time.Duration
	// samples is how many timed samples were taken, timed their event
	// times summed (GPU time inside sampling); flushes counts the CUPTI
	// flushes; pauses the pauses taken (0 or 1 per Measure).
	samples, flushes, pauses int
	timed                    time.Duration
	// energy is the energy measurement's side.
	energy energyTiming

	cur   measurePart
	since time.Time
	clock func() time.Time // time.Now when nil (tests set it)
}

// energyTiming is the host time of an energy measurement by part: graphs
// captured for its batches; and, of each back-to-back window, the warm-up
// asked, the wait from its end to the counter tick that opens the window,
// the window between its ticks, and what followed its closing tick (the
// call in progress, stopping the poller and sampler); duty the
// duty-cycled windows measured again after a capped one (all their parts).
type energyTiming struct {
	graphs, warmup, firstTick, window, after, duty time.Duration
	// windows counts the back-to-back windows; dutyWindows the duty-cycled
	// ones.
	windows, dutyWindows int
}

// measurePart is what a measureTiming charges time to.
type measurePart int

const (
	measureUntimed measurePart = iota
	partPause
	partWarmup
	partGraphs
	partSampling
	partCUPTI
	partCUPTISwitch
	partCUPTIWait
	partNVML
	partProbe
	partEnergyGraphs
	partEnergyDuty
)

// now is the timing's clock.
func (m *measureTiming) now() time.Time {
	if m != nil && m.clock != nil {
		return m.clock()
	}
	return time.Now()
}

// enter charges the time since the last enter to the part then current,
// makes p current and returns the part it replaces: `defer
// m.enter(m.enter(p))` charges a function's time to p, but for what it
// enters itself.
func (m *measureTiming) enter(p measurePart) measurePart {
	if m == nil {
		return measureUntimed
	}
	now := m.now()
	if d := now.Sub(m.since); !m.since.IsZero() {
		if f := m.field(m.cur); f != nil {
			*f += d
		}
	}
	prev := m.cur
	m.cur, m.since = p, now
	return prev
}

// in charges f's time to p, but for what f enters itself.
func (m *measureTiming) in(p measurePart, f func()) {
	defer m.enter(m.enter(p))
	f()
}

// field is the duration p's time goes to; nil for measureUntimed.
func (m *measureTiming) field(p measurePart) *time.Duration {
	switch p {
	case partPause:
		return &m.pause
	case partWarmup:
		return &m.warmup
	case partGraphs:
		return &m.graphs
	case partSampling:
		return &m.sampling
	case partCUPTI:
		return &m.cupti
	case partCUPTISwitch:
		return &m.cuptiSwitch
	case partCUPTIWait:
		return &m.cuptiWait
	case partNVML:
		return &m.nvml
	case partProbe:
		return &m.probe
	case partEnergyGraphs:
		return &m.energy.graphs
	case partEnergyDuty:
		return &m.energy.duty
	}
	return nil
}

// flushed counts one CUPTI flush.
func (m *measureTiming) flushed() {
	if m != nil {
		m.flushes++
	}
}

// paused counts one pause taken.
func (m *measureTiming) paused() {
	if m != nil {
		m.pauses++
	}
}

// dutyWindow counts one duty-cycled energy window.
func (m *measureTiming) dutyWindow() {
	if m != nil {
		m.energy.dutyWindows++
	}
}

// sampled adds timed samples: their event times per call in ns, of batch
// calls each.
func (m *measureTiming) sampled(values []float64, batch int) {
	if m == nil {
		return
	}
	m.samples += len(values)
	var ns float64
	for _, v := range values {
		ns += v * float64(batch)
	}
	m.timed += time.Duration(ns)
}

// meterWindow runs measure, one back-to-back energy window asked to warm
// up for warmup, and charges its host time to the window's parts
// (energyTiming.addWindow); an error's to none (the energy's other time).
func (m *measureTiming) meterWindow(warmup time.Duration, measure func() (energy.Reading, error)) (energy.Reading, error) {
	prev := m.enter(measureUntimed)
	called := m.now()
	rd, err := measure()
	returned := m.now()
	if err == nil && m != nil {
		m.energy.addWindow(called, returned, rd.Start, rd.End, warmup)
	}
	m.enter(prev)
	return rd, err
}

// addWindow charges a window's host time, from called to returned, whose
// ticks opened it at start and closed it at end (Reading.Start and End),
// after a warm-up of warmup asked: the warm-up up to start, then the wait
// for the opening tick, the window, and what followed its close. Times out
// of order are clamped, so that the parts add up to returned − called.
func (e *energyTiming) addWindow(called, returned, start, end time.Time, warmup time.Duration) {
	clamp := func(t, lo, hi time.Time) time.Time {
		if t.Before(lo) {
			return lo
		}
		if t.After(hi) {
			return hi
		}
		return t
	}
	if returned.Before(called) {
		returned = called
	}
	start = clamp(start, called, returned)
	end = clamp(end, start, returned)
	warm := min(max(warmup, 0), start.Sub(called))
	e.warmup += warm
	e.firstTick += start.Sub(called) - warm
	e.window += end.Sub(start)
	e.after += returned.Sub(end)
	e.windows++
}
