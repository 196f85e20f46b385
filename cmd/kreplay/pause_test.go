package main

import (
	"strings"
	"testing"
	"time"

	"github.com/kreplay/kreplay/replay"
)

// -pause 0 is no pause, which replay.Options spells as a negative one
// (its zero is the default, 50 ms).
func TestPauseOption(t *testing.T) {
	for _, tc := range []struct{ flag, want time.Duration }{
		{50 * time.Millisecond, 50 * time.Millisecond},
		{time.Millisecond, time.Millisecond},
		{0, -1},
		{-time.Second, -1},
	} {
		if got := pauseOption(tc.flag); got != tc.want {
			t.Errorf("pauseOption(%v) = %v, want %v", tc.flag, got, tc.want)
		}
	}
}

// -pause-above 0 is a pause before every signature, which
// replay.Options spells as a negative share (its zero is the default).
func TestPauseAboveOption(t *testing.T) {
	for _, tc := range []struct{ flag, want float64 }{
		{0.5, 0.5},
		{0.8, 0.8},
		{2, 2},
		{0, -1},
		{-0.5, -1},
	} {
		if got := pauseAboveOption(tc.flag); got != tc.want {
			t.Errorf("pauseAboveOption(%g) = %g, want %g", tc.flag, got, tc.want)
		}
	}
}

// kreplay run's -pause and -pause-above reach replay.Options: by default
// 50 ms taken above half the power limit; a negative share is refused.
func TestRunPauseFlags(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		pause time.Duration
		above float64
	}{
		{nil, 50 * time.Millisecond, replay.DefaultPauseAbove},
		{[]string{"-pause-above", "0.8"}, 50 * time.Millisecond, 0.8},
		{[]string{"-pause-above", "0"}, 50 * time.Millisecond, -1},
		{[]string{"-pause", "0", "-pause-above", "0.3"}, -1, 0.3},
		{[]string{"-pause", "10ms"}, 10 * time.Millisecond, replay.DefaultPauseAbove},
	} {
		f, _, err := parseRunFlags(tc.args, &strings.Builder{})
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if f.measure.Pause != tc.pause || f.measure.PauseAbove != tc.above {
			t.Errorf("%q: Pause %v, PauseAbove %g; want %v, %g", tc.args, f.measure.Pause, f.measure.PauseAbove, tc.pause, tc.above)
		}
	}
	if _, _, err := parseRunFlags([]string{"-pause-above", "-0.5"}, &strings.Builder{}); err == nil || !strings.Contains(err.Error(), "-pause-above -0.5: want 0 or more") {
		t.Errorf("-pause-above -0.5: error %v, want one saying 0 or more", err)
	}
}
