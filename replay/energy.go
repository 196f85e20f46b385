package replay

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kreplay/kreplay/energy"
)

// Energy is a signature's energy per invocation, measured with NVML's
// total-energy counter over a window of whole counter ticks while the
// replay runs back to back in steady state.
type Energy struct {
	// JoulesPerOp is the energy of one invocation; Watts the average power.
	JoulesPerOp float64 `json:"joules_per_op"`
	Watts       float64 `json:"watts"`
	// Seconds and Ops are the window's length and the invocations in it.
	Seconds float64 `json:"seconds"`
	Ops     float64 `json:"ops"`
	// Ticks counts counter updates in the window; TickShare is the energy
	// of one tick over the window's (the measurement's granularity).
	Ticks     int     `json:"ticks"`
	TickShare float64 `json:"tick_share"`
	// Method is "energy-counter" or, on GPUs without one, "power-integral".
	Method string `json:"method"`
	// GPU summarises the NVML samples taken during the window.
	GPU       energy.Summary `json:"gpu"`
	Throttled bool           `json:"throttled"`
}

// ErrNoMeter is returned for energy measurements on a device without NVML.
var ErrNoMeter = errors.New("no NVML energy meter on this device")

// measureEnergy runs batches of the signature back to back (a CUDA graph
// of about 5 ms of launches per call) until the energy window closes. Call
// inside Do, after the timed samples.
func (d *Device) measureEnergy(t *timer, r *Result, o Options) (*Energy, error) {
	if d.Meter == nil {
		return nil, fmt.Errorf("%w: %v", ErrNoMeter, d.NVMLErr)
	}
	per := r.MedianNS
	if per <= 0 {
		return nil, errors.New("no time per invocation to size the energy batches")
	}
	batch := clampBatch(5*time.Millisecond, time.Duration(math.Ceil(per)), 100000)
	if t.k.Capturable() {
		if err := t.capture(batch); err != nil {
			return nil, err
		}
	} else {
		t.graph = nil
	}
	s := t.d.stream
	work := func() error {
		var err error
		if t.graph != nil {
			err = t.graph.Launch(s)
		} else {
			err = t.launchN(batch)
		}
		if err != nil {
			return err
		}
		return s.Synchronize()
	}
	ticks := o.EnergyTicks
	if ticks <= 0 {
		ticks = energy.DefaultMinTicks
	}
	rd, err := d.Meter.Measure(context.Background(), work, energy.MeasureOptions{MinTicks: ticks, Warmup: o.EnergyWarmup})
	if err != nil {
		return nil, err
	}
	e := &Energy{
		Seconds: rd.Seconds, Ops: rd.Calls * float64(batch), Watts: rd.Watts,
		Ticks: rd.Ticks, TickShare: rd.TickEnergyShare, Method: rd.Method.String(),
		GPU: rd.States, Throttled: rd.States.Throttled(),
	}
	if e.Ops > 0 {
		e.JoulesPerOp = rd.Joules / e.Ops
	}
	return e, nil
}
