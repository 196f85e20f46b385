package replay

import (
	"time"

	"github.com/kreplay/kreplay/energy"
)

// samplerInterval is the period of the NVML sampler that watches the GPU's
// clocks, power and throttle reasons while samples are timed.
const samplerInterval = 10 * time.Millisecond

// startSampler starts the NVML sampler of meters. When it cannot start it
// returns nil and why, which the caller records in its result's
// SamplerErr: without states, throttled samples are neither flagged nor
// left out, and that must show.
func startSampler(meters ...*energy.Device) (*energy.Sampler, string) {
	s, err := energy.StartSampler(samplerInterval, meters...)
	if err != nil {
		return nil, "NVML sampler did not start: " + err.Error()
	}
	return s, ""
}

// stopSampler stops an NVML sampler and returns the states it read of
// the meter's device, in time order, and why there are none: no states
// for a nil sampler (no reason: the caller knows why it has none), or
// when a read failed (the reason, for the result's SamplerErr).
func stopSampler(s *energy.Sampler, m *energy.Device) ([]energy.State, string) {
	if s == nil {
		return nil, ""
	}
	samples, err := s.Stop()
	if err != nil {
		return nil, "NVML reads failed, its states are not used: " + err.Error()
	}
	return energy.DeviceStates(samples, m.Index()), ""
}

// joinSamplerErr keeps the first of a start and a stop reason.
func joinSamplerErr(start, stop string) string {
	if start != "" {
		return start
	}
	return stop
}
