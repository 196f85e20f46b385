package replay

import (
	"errors"
	"testing"
	"time"

	"github.com/kreplay/kreplay/energy"
)

// fakeClock is a clock that moves only when told.
type fakeClock struct{ t time.Time }

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(1000, 0)} }

func (c *fakeClock) now() time.Time         { return c.t }
func (c *fakeClock) advance(ms int)         { c.t = c.t.Add(msOf(ms)) }
func (c *fakeClock) at(ms int) time.Time    { return c.t.Add(msOf(ms)) }
func (c *fakeClock) timing() *measureTiming { return &measureTiming{clock: c.now} }

func msOf(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }

// timedTotal and energyTotal sum a timing's parts.
func timedTotal(m *measureTiming) time.Duration {
	return m.pause + m.warmup + m.graphs + m.sampling + m.cupti + m.cuptiSwitch + m.nvml + m.probe
}

func energyTotal(e *energyTiming) time.Duration {
	return e.graphs + e.warmup + e.firstTick + e.window + e.after + e.duty
}

// Each moment goes to the innermost part entered; what no part holds goes
// nowhere; leaving a part returns to the one it was entered from.
func TestMeasureTimingInnermost(t *testing.T) {
	c := newFakeClock()
	m := c.timing()
	outer := m.enter(measureUntimed) // as measureTimed starts
	c.advance(3)                     // untimed
	m.in(partPause, func() { c.advance(50) })
	prev := m.enter(partWarmup)
	c.advance(20)
	m.in(partGraphs, func() { c.advance(4) })
	c.advance(1) // warm-up again, after the graph
	m.enter(prev)
	m.in(partSampling, func() {
		c.advance(30)
		m.in(partCUPTI, func() { c.advance(2) })
		m.in(partCUPTISwitch, func() { c.advance(3) })
		c.advance(10)
		m.in(partNVML, func() { c.advance(1) })
	})
	m.in(partEnergyDuty, func() {
		c.advance(900)
		m.in(partEnergyGraphs, func() { c.advance(7) })
	})
	c.advance(5) // untimed
	m.enter(outer)
	want := measureTiming{pause: msOf(50), warmup: msOf(21), graphs: msOf(4), sampling: msOf(40), cupti: msOf(2), cuptiSwitch: msOf(3), nvml: msOf(1),
		energy: energyTiming{graphs: msOf(7), duty: msOf(900)}}
	got := *m
	got.clock, got.since, got.cur = nil, time.Time{}, measureUntimed
	if got.pause != want.pause || got.warmup != want.warmup || got.graphs != want.graphs || got.sampling != want.sampling ||
		got.cupti != want.cupti || got.cuptiSwitch != want.cuptiSwitch || got.nvml != want.nvml || got.probe != want.probe || got.energy != want.energy {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if got := timedTotal(m) + energyTotal(&m.energy); got != msOf(1036-8) {
		t.Errorf("parts sum to %v, want %v (all but the 8 ms untimed)", got, msOf(1028))
	}
}

// A nil timing times nothing and does not fail.
func TestMeasureTimingNil(t *testing.T) {
	var m *measureTiming
	ran := false
	m.in(partSampling, func() { ran = true })
	m.enter(m.enter(partCUPTI))
	m.flushed()
	m.dutyWindow()
	m.sampled([]float64{1, 2}, 3)
	rd, err := m.meterWindow(time.Second, func() (energy.Reading, error) { return energy.Reading{Joules: 4}, nil })
	if !ran || err != nil || rd.Joules != 4 {
		t.Errorf("ran %v, reading %v, err %v", ran, rd, err)
	}
}

func TestMeasureTimingSampled(t *testing.T) {
	var m measureTiming
	m.sampled([]float64{1000, 1500.5}, 4) // ns per call, 4 calls a sample
	m.sampled(nil, 4)
	m.sampled([]float64{250}, 1)
	if m.samples != 3 || m.timed != 10252 {
		t.Errorf("samples %d, timed %v; want 3, 10.252µs", m.samples, m.timed)
	}
}

func TestEnergyTimingAddWindow(t *testing.T) {
	c := newFakeClock()
	called := c.at(0)
	for _, tc := range []struct {
		name                            string
		returned, start, end            int // ms after called
		warmup                          int
		warm, tick, window, after, left int // want, ms
	}{
		{"warm-up, wait for the tick, window, the call in progress", 960, 340, 950, 300, 300, 40, 610, 10, 0},
		{"the tick right at the warm-up's end", 905, 300, 900, 300, 300, 0, 600, 5, 0},
		{"no warm-up asked: all before the tick is waiting", 705, 80, 700, 0, 0, 80, 620, 5, 0},
		{"a negative warm-up counts as none", 705, 80, 700, -5, 0, 80, 620, 5, 0},
		{"a window opening before the warm-up's end is charged to it", 900, 250, 850, 300, 250, 0, 600, 50, 0},
		{"ticks outside the call are clamped", 500, -20, 600, 300, 0, 0, 500, 0, 0},
		{"an end before the start closes the window at the start", 500, 400, 350, 300, 300, 100, 0, 100, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e energyTiming
			e.addWindow(called, c.at(tc.returned), c.at(tc.start), c.at(tc.end), msOf(tc.warmup))
			want := energyTiming{warmup: msOf(tc.warm), firstTick: msOf(tc.tick), window: msOf(tc.window), after: msOf(tc.after), windows: 1}
			if e != want {
				t.Errorf("got %+v\nwant %+v", e, want)
			}
			if got := energyTotal(&e); got != msOf(tc.returned) {
				t.Errorf("parts sum to %v, want the call's %v", got, msOf(tc.returned))
			}
		})
	}
}

// meterWindow splits a window's call by its reading, charges a failed
// one to no part, and returns to the part it was called in.
func TestMeasureTimingMeterWindow(t *testing.T) {
	c := newFakeClock()
	m := c.timing()
	m.enter(partSampling)
	c.advance(10)
	rd, err := m.meterWindow(300*time.Millisecond, func() (energy.Reading, error) {
		start := c.at(330)
		c.advance(940)
		return energy.Reading{Start: start, End: start.Add(600 * time.Millisecond), Joules: 1}, nil
	})
	if err != nil || rd.Joules != 1 {
		t.Fatalf("reading %v, err %v", rd, err)
	}
	boom := errors.New("no window")
	if _, err := m.meterWindow(300*time.Millisecond, func() (energy.Reading, error) { c.advance(500); return energy.Reading{}, boom }); err != boom {
		t.Fatalf("err %v, want %v", err, boom)
	}
	c.advance(5) // sampling again
	m.enter(measureUntimed)
	want := energyTiming{warmup: msOf(300), firstTick: msOf(30), window: msOf(600), after: msOf(10), windows: 1}
	if m.energy != want {
		t.Errorf("energy %+v\nwant %+v", m.energy, want)
	}
	if m.sampling != msOf(15) {
		t.Errorf("sampling %v, want 15ms (before and after the windows)", m.sampling)
	}
}
