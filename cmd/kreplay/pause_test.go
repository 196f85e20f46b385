package main

import (
	"testing"
	"time"
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
