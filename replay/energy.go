package replay

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kreplay/kreplay/energy"
	"github.com/kreplay/kreplay/signatures"
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
	// Method is "energy-counter" or, on GPUs without one, "power-integral"
	// (SharedMethod, EstimatedMethod, InterpolatedMethod or a duty-cycled
	// one otherwise).
	Method string `json:"method"`
	// GPU summarises the NVML samples taken during the window (of a sum
	// over GPUs: the first GPU's).
	GPU       energy.Summary `json:"gpu"`
	Throttled bool           `json:"throttled"`
	// Duty is set when the back-to-back window ran power-capped and the
	// energy was measured again under the cap, duty-cycled (see
	// DutyEnergy); nil otherwise.
	Duty *DutyEnergy `json:"duty,omitempty"`
	// Estimated, set for an energy that was not measured (Method
	// EstimatedMethod), says what it was estimated from (EstimateEnergy).
	Estimated string `json:"estimated,omitempty"`
	// DutyErr says why a capped window could not be measured again
	// duty-cycled (the back-to-back energy stands, Throttled set).
	DutyErr string `json:"duty_error,omitempty"`
	// GPUs is, for a collective, the number of GPUs whose energy is summed
	// (0 for a signature replayed on one GPU). A sum's JoulesPerOp and
	// Watts are the totals over the GPUs; Seconds is the longest window,
	// Ops and Ticks the fewest, TickShare the largest; Throttled is set
	// when any GPU was.
	GPUs int `json:"gpus,omitempty"`
	// Shared, set for an energy measured in a window shared with other
	// signatures (Method SharedMethod), says with which and how the
	// window's energy was split (SuiteOptions.SharedEnergy).
	Shared *SharedWindow `json:"shared,omitempty"`
}

// energyOf converts a reading of calls of batch invocations each.
func energyOf(rd energy.Reading, batch int) Energy {
	e := Energy{
		Seconds: rd.Seconds, Ops: rd.Calls * float64(batch), Watts: rd.Watts,
		Ticks: rd.Ticks, TickShare: rd.TickEnergyShare, Method: rd.Method.String(),
		GPU: rd.States, Throttled: rd.States.Throttled(),
	}
	if e.Ops > 0 {
		e.JoulesPerOp = rd.Joules / e.Ops
	}
	return e
}

// sumEnergy sums the energies of the GPUs of one collective (see
// Energy.GPUs); nil for none.
func sumEnergy(es []Energy) *Energy {
	if len(es) == 0 {
		return nil
	}
	s := &Energy{GPUs: len(es), Method: es[0].Method, GPU: es[0].GPU, Ops: es[0].Ops, Ticks: es[0].Ticks}
	for _, e := range es {
		s.JoulesPerOp += e.JoulesPerOp
		s.Watts += e.Watts
		s.Seconds = max(s.Seconds, e.Seconds)
		s.Ops = min(s.Ops, e.Ops)
		s.Ticks = min(s.Ticks, e.Ticks)
		s.TickShare = max(s.TickShare, e.TickShare)
		s.Throttled = s.Throttled || e.Throttled
		if e.Method != s.Method {
			s.Method = "mixed"
		}
	}
	return s
}

// ErrNoMeter is returned for energy measurements on a device without NVML.
var ErrNoMeter = errors.New("no NVML energy meter on this device")

// energyOpNS is the time of one invocation as the energy window launches
// it, which sizes its batches and the duty-cycled gaps: the timed samples'
// median, but for a primed replay the kernel time, since the window runs
// the kernel without the launches that primed each timed invocation (in
// the context mode about 1.5 ms of them before a kernel of a few µs,
// which made batches of a handful of launches and a window mostly idle).
func energyOpNS(r *Result, primed bool) float64 {
	if primed && r.KernelMedianNS > 0 {
		return r.KernelMedianNS
	}
	return r.MedianNS
}

// measureEnergy runs batches of the signature back to back (a CUDA graph
// of about 5 ms of launches per call, per being one launch's time in ns)
// until the energy window closes. Call inside Do, after the timed samples.
func (d *Device) measureEnergy(t *timer, r *Result, per float64, o Options) (*Energy, error) {
	if d.Meter == nil {
		return nil, fmt.Errorf("%w: %v", ErrNoMeter, d.NVMLErr)
	}
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
		if err := t.enqueue(batch); err != nil {
			return err
		}
		return s.Synchronize()
	}
	rd, err := t.tm.meterWindow(o.EnergyWarmup, func() (energy.Reading, error) { return d.energyWindow(work, o) })
	if err != nil {
		return nil, err
	}
	e := energyOf(rd, batch)
	if o.NoEnergyDuty || !powerCapped(rd.States) {
		return &e, nil
	}
	de, err := d.measureDuty(t, per, batch, energyTicks(o), o)
	if err != nil {
		e.DutyErr = err.Error()
		return &e, nil
	}
	de.Duty.BackToBackJoulesPerOp, de.Duty.BackToBackWatts = e.JoulesPerOp, e.Watts
	return de, nil
}

// measureCollectiveEnergy runs batches of the collective (a CUDA graph of
// about 5 ms of calls per rank, or direct calls where the timed batches
// ran without graphs) back to back on every rank at once, each step
// released together as in the timed samples, until every GPU's energy
// window of whole counter ticks has closed (energy.MeasureDevices). It
// returns each GPU's energy per call, in rank order.
func (g *Group) measureCollectiveEnergy(ranks []*collRank, r *CollectiveResult, o Options) ([]Energy, error) {
	meters := make([]*energy.Device, len(g.Devices))
	for i, d := range g.Devices {
		if d.Meter == nil {
			return nil, fmt.Errorf("GPU %d: %w: %v", d.Index, ErrNoMeter, d.NVMLErr)
		}
		meters[i] = d.Meter
	}
	per := r.MedianNS
	if per <= 0 {
		return nil, errors.New("no time per call to size the energy batches")
	}
	batch := clampBatch(5*time.Millisecond, time.Duration(math.Ceil(per)), 100000)
	if r.Graph {
		if err := g.captureAll(ranks, batch); err != nil {
			return nil, fmt.Errorf("capturing %d calls in a graph: %w", batch, err)
		}
	}
	expect := time.Duration(per * float64(batch))
	work := func() error {
		_, err := g.sampleAll(ranks, batch, false, expect, o.CollectiveTimeout)
		return err
	}
	ticks := o.EnergyTicks
	if ticks <= 0 {
		ticks = energy.DefaultMinTicks
	}
	rds, err := energy.MeasureDevices(context.Background(), meters, work, energy.MeasureOptions{MinTicks: ticks, Warmup: o.EnergyWarmup})
	if err != nil {
		return nil, err
	}
	es := make([]Energy, len(rds))
	for i, rd := range rds {
		es[i] = energyOf(rd, batch)
	}
	return es, nil
}

// EstimatedMethod is Energy.Method of an energy estimated by
// EstimateEnergy rather than measured.
const EstimatedMethod = "estimated"

// EstimateEnergy gives each measured entry without an energy of its own an
// estimate: its time per invocation (Result.ReportedNS) times the power of
// the measured entries of its class, Σ J/op·count over Σ time·count (of
// every measured entry when its class has none). Energy.Method is
// EstimatedMethod and Energy.Estimated says from what. It returns how many
// entries it estimated (none when no entry has a measured energy).
//
// The time is the kernel's own, not Result.MedianNS: in the primed and
// context cache modes a timed invocation includes the launches that
// prepare its inputs, which its energy window leaves out (measure.go), and
// for the first launches of an inference that context runs to its end, so
// MedianNS can charge a short kernel a power no GPU draws (see
// results/h100/capture/README.md).
func EstimateEnergy(entries []Entry) int {
	type acc struct {
		joules, seconds float64
		n               int
	}
	byClass := map[signatures.Class]*acc{}
	all := &acc{}
	for _, e := range entries {
		r := e.Result
		if r == nil || r.Energy == nil || r.Energy.Method == EstimatedMethod || e.Interpolated != "" || r.ReportedNS() <= 0 || e.Count <= 0 {
			continue // measured energies only
		}
		for _, a := range []*acc{all, byClass[e.Class]} {
			if a == nil {
				a = &acc{}
				byClass[e.Class] = a
			}
			a.joules += r.Energy.JoulesPerOp * float64(e.Count)
			a.seconds += r.ReportedNS() * 1e-9 * float64(e.Count)
			a.n++
		}
	}
	if all.n == 0 {
		return 0
	}
	n := 0
	for i := range entries {
		e := &entries[i]
		r := e.Result
		if r == nil || r.Energy != nil || r.ReportedNS() <= 0 {
			continue
		}
		a, from := byClass[e.Class], "class "+string(e.Class)
		if a == nil {
			a, from = all, "every class"
		}
		w := a.joules / a.seconds
		r.Energy = &Energy{JoulesPerOp: w * r.ReportedNS() * 1e-9, Watts: w, Method: EstimatedMethod,
			Estimated: fmt.Sprintf("%.0f W, the power of %d measured signatures of %s", w, a.n, from)}
		n++
	}
	return n
}

// energyWindow meters work, called repeatedly, over o.EnergyTicks whole
// counter ticks (energy.DefaultMinTicks when 0) after o.EnergyWarmup.
func (d *Device) energyWindow(work func() error, o Options) (energy.Reading, error) {
	return d.Meter.Measure(context.Background(), work, energy.MeasureOptions{MinTicks: energyTicks(o), Warmup: o.EnergyWarmup})
}

// energyTicks is o's energy window in counter ticks.
func energyTicks(o Options) int {
	if o.EnergyTicks <= 0 {
		return energy.DefaultMinTicks
	}
	return o.EnergyTicks
}
