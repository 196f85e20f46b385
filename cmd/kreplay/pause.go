package main

import (
	"flag"
	"time"

	"github.com/kreplay/kreplay/replay"
)

// pauseUsage documents -pause, of run and predict.
const pauseUsage = "idle `PAUSE` before a signature where the one measured before it on the GPU could carry its power state over (see -pause-above; 0: none)"

// pauseAboveUsage documents -pause-above, of run and predict.
const pauseAboveUsage = "take -pause only after a signature whose NVML-sampled power reached this `SHARE` of the GPU's power limit, that was throttled,\n" +
	"ran energy windows or whose power is unknown (0: before every signature); 0.5 is a guess, not a fitted constant:\n" +
	"the power limiter acts on power averaged over time, and the pause stays after power-hungry signatures"

// pauseOption is -pause as replay.Options.Pause: 0 or less is none
// (negative there, where 0 is the default).
func pauseOption(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// pauseAboveFlag is -pause-above, of run and predict.
func pauseAboveFlag(fs *flag.FlagSet) *float64 {
	return fs.Float64("pause-above", replay.DefaultPauseAbove, pauseAboveUsage)
}

// pauseAboveOption is -pause-above as replay.Options.PauseAbove: 0 or less
// is a pause before every signature (negative there, where 0 is the
// default).
func pauseAboveOption(share float64) float64 {
	if share <= 0 {
		return -1
	}
	return share
}
