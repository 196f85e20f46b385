package replay

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// The effective clock is Δclock64 over Δglobaltimer, and only over a
// window long enough to trust.
func TestClockReadingMHz(t *testing.T) {
	for _, tt := range []struct {
		name string
		c    clockReading
		want float64 // 0: an error
		err  string
	}{
		{"1536 MHz over 2 ms", clockReading{t0: 1e9, c0: 5e6, t1: 1e9 + 2e6, c1: 5e6 + 3072e3}, 1536, ""},
		{"1980 MHz over 1 ms", clockReading{t0: 0, c0: 0, t1: 1e6, c1: 1980e3}, 1980, ""},
		{"1658 MHz over 2.5 ms", clockReading{t0: 7, c0: 100, t1: 7 + 2.5e6, c1: 100 + 4145e3}, 1658, ""},
		{"timer still", clockReading{t0: 5, c0: 0, t1: 5, c1: 100}, 0, "globaltimer did not advance"},
		{"timer backwards", clockReading{t0: 5, c0: 0, t1: 4, c1: 100}, 0, "globaltimer did not advance"},
		{"clock still", clockReading{t0: 0, c0: 9, t1: 2e6, c1: 9}, 0, "clock64 did not advance"},
		{"short window", clockReading{t0: 0, c0: 0, t1: 400e3, c1: 600e3}, 0, "under the 500µs"},
		{"implausible", clockReading{t0: 0, c0: 0, t1: 1e6, c1: 2e10}, 0, "implausible"},
	} {
		got, err := tt.c.mhz()
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: %g, %v; want error %q", tt.name, got, err, tt.err)
		case tt.err == "" && (err != nil || math.Abs(got-tt.want) > 1e-9):
			t.Errorf("%s: %g, %v; want %g", tt.name, got, err, tt.want)
		}
	}
}

// decodeClock reads the flag buffer and names each way the probe fails.
func TestDecodeClock(t *testing.T) {
	ok := func(edit func(*[clockSlots]uint64)) [clockSlots]uint64 {
		var s [clockSlots]uint64
		s[slotStart], s[slotStop], s[slotReady], s[slotStatus], s[slotHandshake] = 1, 1, 1, probeOK, 1
		s[slotT0], s[slotC0], s[slotT1], s[slotC1] = 10, 20, 10+2e6, 20+3e6
		if edit != nil {
			edit(&s)
		}
		return s
	}
	for _, tt := range []struct {
		name string
		s    [clockSlots]uint64
		err  string
	}{
		{"ok", ok(nil), ""},
		{"no start kernel", ok(func(s *[clockSlots]uint64) { s[slotHandshake] = 0 }), "start kernel did not run"},
		{"probe not ready", ok(func(s *[clockSlots]uint64) { s[slotHandshake] = 2 }), "was not running"},
		{"no start", ok(func(s *[clockSlots]uint64) { s[slotStatus] = probeNoStart }), "waiting for the start flag"},
		{"no stop", ok(func(s *[clockSlots]uint64) { s[slotStatus] = probeNoStop }), "waiting for the stop flag"},
		{"unfinished", ok(func(s *[clockSlots]uint64) { s[slotStatus] = 0 }), "did not finish"},
	} {
		c, err := decodeClock(tt.s, 2*time.Second)
		if tt.err == "" {
			if err != nil || c != (clockReading{10, 20, 10 + 2e6, 20 + 3e6}) {
				t.Errorf("%s: %+v, %v", tt.name, c, err)
			} else if mhz, err := c.mhz(); err != nil || mhz != 1500 {
				t.Errorf("%s: %g MHz, %v; want 1500", tt.name, mhz, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
		}
	}
}

// The kernels index the flag buffer as the slot constants say.
func TestClockProbeSourceSlots(t *testing.T) {
	for _, want := range []string{
		fmt.Sprintf("f[%d] = 1; // ready", slotReady),
		fmt.Sprintf("while (f[%d] == 0)", slotStart),
		fmt.Sprintf("while (f[%d] == 0)", slotStop),
		fmt.Sprintf("f[%d] = %d;", slotStatus, probeOK),
		fmt.Sprintf("f[%d] = %d;", slotStatus, probeNoStart),
		fmt.Sprintf("f[%d] = %d;", slotStatus, probeNoStop),
		fmt.Sprintf("f[%d] = t0;", slotT0), fmt.Sprintf("f[%d] = (unsigned long long)c0;", slotC0),
		fmt.Sprintf("f[%d] = t1;", slotT1), fmt.Sprintf("f[%d] = (unsigned long long)c1;", slotC1),
		fmt.Sprintf("f[%d] = seen;", slotHandshake), fmt.Sprintf("f[%d] = 1;", slotStart), fmt.Sprintf("f[%d] = 1;", slotStop),
	} {
		if !strings.Contains(clockProbeSource, want) {
			t.Errorf("clockProbeSource lacks %q", want)
		}
	}
}

func TestClockProbeTimeout(t *testing.T) {
	for _, tt := range []struct{ expected, want time.Duration }{
		{0, 2 * time.Second},
		{-time.Second, 2 * time.Second},
		{2 * time.Millisecond, 2*time.Second + 20*time.Millisecond},
		{time.Second, 12 * time.Second},
		{time.Hour, time.Minute},
	} {
		if got := clockProbeTimeout(tt.expected); got != tt.want {
			t.Errorf("clockProbeTimeout(%v) = %v, want %v", tt.expected, got, tt.want)
		}
	}
}

// The probe runs enough batches to last 2 ms by the event time.
func TestProbeBatches(t *testing.T) {
	for _, tt := range []struct {
		medianNS float64
		batch    int
		n        int
		expected time.Duration
	}{
		{10e3, 100, 2, 2 * time.Millisecond},    // a graph of 100 launches of 10 µs
		{15e3, 1, 134, 2010 * time.Microsecond}, // cold: one launch a sample
		{3e3, 1000, 1, 3 * time.Millisecond},    // one batch lasts longer than the window
		{5e6, 1, 1, 5 * time.Millisecond},
		{0.01, 1, maxProbeBatches, 100 * time.Nanosecond},
		{0, 10, 1, 0},
		{math.NaN(), 10, 1, 0},
		{10e3, 0, 200, 2 * time.Millisecond},
	} {
		n, expected := probeBatches(tt.medianNS, tt.batch)
		if n != tt.n || expected != tt.expected {
			t.Errorf("probeBatches(%g, %d) = %d, %v; want %d, %v", tt.medianNS, tt.batch, n, expected, tt.n, tt.expected)
		}
	}
}
