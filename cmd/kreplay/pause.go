package main

import "time"

// pauseUsage documents -pause, of run and predict.
const pauseUsage = "idle `PAUSE` before each signature, so the power state of the last does not carry over (0: none)"

// pauseOption is -pause as replay.Options.Pause: 0 or less is none
// (negative there, where 0 is the default).
func pauseOption(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}
