package energy

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Window-sizing defaults for [MeasureOptions].
const (
	// DefaultMinTicks is the default least number of counter ticks in a
	// window: 101, so that one average tick is under 1% of the energy
	// measured (TickEnergyShare = 1/101). At about 100 ms a tick on an H100
	// that is a window of a little over 10 s.
	DefaultMinTicks = 101
	// DefaultMaxDuration bounds a measurement when the window cannot close.
	DefaultMaxDuration = 5 * time.Minute
	// DefaultPollInterval is how often the energy counter is read.
	DefaultPollInterval = time.Millisecond
	// NominalTick is the update period of NVML's total-energy counter
	// observed on an H100 with driver 580. It sizes the power-integral
	// fallback window so that it lasts as long as a counter window would.
	NominalTick = 100 * time.Millisecond
	// stallTimeout: a counter that has not changed for this long (thirty
	// nominal ticks) is treated as broken.
	stallTimeout = 30 * NominalTick
)

// MeasureOptions size and tune a measurement window. The zero value means
// all defaults.
type MeasureOptions struct {
	// MinTicks is the least number of counter ticks the window spans
	// (default DefaultMinTicks = 101, so one tick is < 1% of the energy).
	MinTicks int
	// MinDuration is the least length of the window (default 0: MinTicks
	// alone decides).
	MinDuration time.Duration
	// Warmup is how long work runs before the window may open (default 0).
	// Use it to let clocks, temperature and the power cap settle.
	Warmup time.Duration
	// MaxDuration aborts a measurement whose window has not closed this long
	// after it started (default DefaultMaxDuration).
	MaxDuration time.Duration
	// PollInterval is how often the counter is read (default
	// DefaultPollInterval = 1 ms). The window's time is uncertain by about
	// one poll interval plus one NVML call; see Reading.TimeUncertainty.
	PollInterval time.Duration
	// SampleInterval is the period of the State sampler that runs during
	// the measurement and fills Reading.States (default
	// DefaultSampleInterval = 10 ms). Negative turns it off, except for the
	// power-integral fallback, which needs it and then uses the default.
	SampleInterval time.Duration
}

func (o MeasureOptions) withDefaults() MeasureOptions {
	if o.MinTicks <= 0 {
		o.MinTicks = DefaultMinTicks
	}
	if o.MinDuration < 0 {
		o.MinDuration = 0
	}
	if o.Warmup < 0 {
		o.Warmup = 0
	}
	if o.MaxDuration <= 0 {
		o.MaxDuration = DefaultMaxDuration
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.SampleInterval == 0 {
		o.SampleInterval = DefaultSampleInterval
	}
	return o
}

// Method says how a [Reading]'s energy was obtained.
type Method uint8

const (
	// MethodEnergyCounter: difference of NVML's total-energy counter
	// between two observed ticks.
	MethodEnergyCounter Method = iota + 1
	// MethodPowerIntegral: fallback for GPUs without the counter;
	// trapezoid integral of sampled power.
	MethodPowerIntegral
)

// String returns "energy-counter", "power-integral" or "unknown".
func (m Method) String() string {
	switch m {
	case MethodEnergyCounter:
		return "energy-counter"
	case MethodPowerIntegral:
		return "power-integral"
	}
	return "unknown"
}

// Reading is the energy over one measurement window.
//
// With MethodEnergyCounter the window starts and ends at observed changes
// of the counter, so Joules is the exact counter difference (1 mJ
// resolution) with no partial tick at either end. The time of each change
// is taken midway between the last read with the old value and the first
// with the new, so Seconds is off by at most TimeUncertainty (about one poll
// interval plus NVML call latency in all, ~1 ms against ~10 s by default),
// assuming the counter lags the energy it reports by a constant delay.
//
// Calls is the number of work calls attributed to the window: calls wholly
// inside count 1, the two calls cut by the window edges count by the
// fraction of their time inside. If a call does not spend its energy evenly
// over its time this misattributes at most one call's worth at each edge,
// a relative error below 2/Calls in JoulesPerCall; with calls much shorter
// than the window it is negligible.
type Reading struct {
	// Method is how Joules was obtained.
	Method Method
	// Start and End bound the window.
	Start, End time.Time
	// Joules is the energy in the window; Seconds its length; Watts their
	// ratio, the average power.
	Joules, Seconds, Watts float64
	// Ticks is the number of counter changes in the window (for
	// MethodPowerIntegral: intervals between power samples).
	Ticks int
	// TickEnergyShare is the energy of one average tick over the total,
	// 1/Ticks: check it against the rule that one tick be under 1% of the
	// energy measured.
	TickEnergyShare float64
	// TimeUncertainty bounds the error of Seconds (MethodEnergyCounter).
	TimeUncertainty time.Duration
	// Calls is the number of work calls in the window, fractional at the
	// edges; CompleteCalls those wholly inside. Both are 0 for IdlePower.
	Calls         float64
	CompleteCalls int
	// JoulesPerCall = Joules/Calls and SecondsPerCall = Seconds/Calls.
	JoulesPerCall, SecondsPerCall float64
	// PowerSource is the power reading integrated by MethodPowerIntegral.
	PowerSource PowerSource
	// States summarises the states sampled inside the window (zero when
	// sampling was turned off): throttling, clocks, power.
	States Summary
}

// String is a one-line summary for logs.
func (r Reading) String() string {
	s := fmt.Sprintf("%.3f J in %.3f s = %.1f W (%s, %d ticks)", r.Joules, r.Seconds, r.Watts, r.Method, r.Ticks)
	if r.Calls > 0 {
		s += fmt.Sprintf(", %.2f calls, %.4g J/call", r.Calls, r.JoulesPerCall)
	}
	return s
}

// meterSource is what a measurement reads; *Device implements it.
type meterSource interface {
	stateReader
	EnergyCounter() (uint64, error)
}

// Measure runs work repeatedly, back to back, and measures the energy it
// uses over a window aligned to ticks of the total-energy counter. The
// window opens at the first tick observed after opts.Warmup and closes at
// the first tick that is at least opts.MinTicks ticks and opts.MinDuration
// after it; the loop then stops after the call in progress. A goroutine
// reads the counter every opts.PollInterval meanwhile.
//
// work must keep the GPU in a steady state and must not return before the
// GPU work it submitted has finished (synchronise), or energy and calls
// will not correspond. An error from work, ctx or NVML ends the measurement
// with that error.
//
// GPUs without the counter (NVML_ERROR_NOT_SUPPORTED) are measured by
// integrating sampled power over a window of at least
// max(MinDuration, MinTicks×NominalTick); Reading.Method says which.
func (d *Device) Measure(ctx context.Context, work func() error, opts MeasureOptions) (Reading, error) {
	if work == nil {
		return Reading{}, errors.New("energy: Measure needs a work function")
	}
	return measure(ctx, d, work, opts)
}

// IdlePower measures the mean power while this process runs nothing on the
// GPU: the energy counter's difference over whole ticks, from the first tick
// observed after the call to the first tick at least window later (so it
// takes window plus up to two ticks, about 200 ms). A window of 0 means one
// tick. Other processes' work counts too. The result's Watts is the idle
// power; on GPUs without the counter it falls back as [Device.Measure] does.
func (d *Device) IdlePower(ctx context.Context, window time.Duration) (Reading, error) {
	return measure(ctx, d, nil, MeasureOptions{MinTicks: 1, MinDuration: window})
}

// MeasureDevices is [Device.Measure] for several GPUs at once: work runs
// back to back (it should keep every GPU busy, e.g. one step of a
// collective on all of them, and return when all have finished), and each
// GPU's energy is measured over its own window aligned to its own
// counter's ticks, with the calls attributed to that window. The loop
// stops when every GPU's window has closed. The readings are in the order
// of devs. If any GPU lacks the energy counter, every GPU is measured by
// integrating sampled power, as Measure falls back for one.
func MeasureDevices(ctx context.Context, devs []*Device, work func() error, opts MeasureOptions) ([]Reading, error) {
	if work == nil {
		return nil, errors.New("energy: MeasureDevices needs a work function")
	}
	if len(devs) == 0 {
		return nil, errors.New("energy: MeasureDevices needs at least one device")
	}
	srcs := make([]meterSource, len(devs))
	for i, d := range devs {
		if d == nil {
			return nil, errors.New("energy: MeasureDevices given a nil device")
		}
		srcs[i] = d
	}
	return measureAll(ctx, srcs, work, opts)
}

// measure is Measure for any meterSource; work == nil measures idle.
func measure(ctx context.Context, src meterSource, work func() error, opts MeasureOptions) (Reading, error) {
	rs, err := measureAll(ctx, []meterSource{src}, work, opts)
	if err != nil {
		return Reading{}, err
	}
	return rs[0], nil
}

// measureAll measures every source over its own window while work runs;
// work == nil measures idle.
func measureAll(ctx context.Context, srcs []meterSource, work func() error, opts MeasureOptions) ([]Reading, error) {
	opts = opts.withDefaults()
	for _, src := range srcs {
		if _, err := src.EnergyCounter(); err != nil {
			if errors.Is(err, ErrNotSupported) {
				return measurePower(ctx, srcs, work, opts)
			}
			return nil, err
		}
	}

	var smp *Sampler
	if opts.SampleInterval > 0 {
		readers := make([]stateReader, len(srcs))
		for i, src := range srcs {
			readers[i] = src
		}
		smp = startSampler(opts.SampleInterval, readers)
	}
	start := time.Now()
	rule := windowRule{notBefore: start.Add(opts.Warmup), minTicks: opts.MinTicks, minDur: opts.MinDuration}
	ps := make([]*poller, len(srcs))
	for i, src := range srcs {
		ps[i] = startPoller(ctx, src, rule, start, opts)
	}
	calls, werr := runWork(ctx, work, allDone(ps), time.Time{})
	var samples []Sample
	var perrs []error
	for i, p := range ps {
		if _, err := p.stop(); err != nil {
			perrs = append(perrs, gpuErr(srcs, i, err))
		}
	}
	if smp != nil {
		samples, _ = smp.Stop() // sampling errors only thin the summary
	}
	if werr != nil {
		return nil, werr
	}
	if len(perrs) > 0 {
		return nil, errors.Join(perrs...)
	}
	out := make([]Reading, len(srcs))
	for i, src := range srcs {
		r, err := counterReading(ps[i].ticks, calls, rule)
		if err != nil {
			return nil, gpuErr(srcs, i, err)
		}
		r.States = Summarize(statesIn(DeviceStates(samples, src.Index()), r.Start, r.End))
		out[i] = r
	}
	return out, nil
}

// gpuErr names the GPU of an error when several are measured.
func gpuErr(srcs []meterSource, i int, err error) error {
	if len(srcs) == 1 {
		return err
	}
	return fmt.Errorf("GPU %d: %w", srcs[i].Index(), err)
}

// allDone returns a channel closed when every poller has ended, or as soon
// as one ended with an error (so that the work stops at once).
func allDone(ps []*poller) <-chan struct{} {
	if len(ps) == 1 {
		return ps[0].done
	}
	ended := make(chan error, len(ps))
	for _, p := range ps {
		go func() {
			<-p.done
			ended <- p.err
		}()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range ps {
			if err := <-ended; err != nil {
				return
			}
		}
	}()
	return done
}

// measurePower is the fallback for GPUs without an energy counter.
func measurePower(ctx context.Context, srcs []meterSource, work func() error, opts MeasureOptions) ([]Reading, error) {
	interval := opts.SampleInterval
	if interval <= 0 {
		interval = DefaultSampleInterval
	}
	minDur := max(opts.MinDuration, time.Duration(opts.MinTicks)*NominalTick)
	readers := make([]stateReader, len(srcs))
	for i, src := range srcs {
		readers[i] = src
	}
	smp := startSampler(interval, readers)
	start := time.Now()
	notBefore := start.Add(opts.Warmup)
	// Run until the window must be complete: a sample at or after notBefore
	// plus minDur, with room for a few late or skipped samples.
	deadline := notBefore.Add(minDur + 5*interval + 50*time.Millisecond)
	if deadline.Sub(start) > opts.MaxDuration {
		smp.Stop()
		return nil, fmt.Errorf("energy: power-integral window of %v exceeds MaxDuration %v", minDur, opts.MaxDuration)
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	calls, werr := runWork(ctx, work, timer.C, deadline)
	samples, serr := smp.Stop()
	if werr != nil {
		return nil, werr
	}
	out := make([]Reading, len(srcs))
	for i, src := range srcs {
		states := DeviceStates(samples, src.Index())
		r, err := powerReading(states, calls, notBefore, minDur)
		if err != nil {
			return nil, gpuErr(srcs, i, errors.Join(err, serr))
		}
		r.States = Summarize(statesIn(states, r.Start, r.End))
		out[i] = r
	}
	return out, nil
}

// runWork calls work back to back until done is ready (or, when until is
// set, the clock passes it), recording each call's span. With work == nil
// it just waits.
func runWork[T any](ctx context.Context, work func() error, done <-chan T, until time.Time) ([]callSpan, error) {
	if work == nil {
		select {
		case <-done:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var calls []callSpan
	for {
		select {
		case <-done:
			return calls, nil
		case <-ctx.Done():
			return calls, ctx.Err()
		default:
		}
		if !until.IsZero() && !time.Now().Before(until) {
			return calls, nil
		}
		s := time.Now()
		err := work()
		calls = append(calls, callSpan{start: s, end: time.Now()})
		if err != nil {
			return calls, fmt.Errorf("energy: work call %d: %w", len(calls), err)
		}
	}
}

// poller reads the energy counter in a goroutine until the window rule is
// met (done is closed), an error occurs, or stop is called.
type poller struct {
	done  chan struct{} // closed when the goroutine ends
	quit  chan struct{} // closed by stop
	ticks []tick
	err   error
}

func startPoller(ctx context.Context, src meterSource, rule windowRule, start time.Time, opts MeasureOptions) *poller {
	p := &poller{done: make(chan struct{}), quit: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.err = p.run(ctx, src, rule, start, opts)
	}()
	return p
}

func (p *poller) run(ctx context.Context, src meterSource, rule windowRule, start time.Time, opts MeasureOptions) error {
	var tr tickTracker
	defer func() { p.ticks = tr.ticks }()
	open := -1
	lastChange := start
	t := time.NewTicker(opts.PollInterval)
	defer t.Stop()
	for {
		mj, err := src.EnergyCounter()
		now := time.Now()
		if err != nil {
			return err
		}
		changed, err := tr.add(counterRead{t: now, mj: mj})
		if err != nil {
			return err
		}
		if changed {
			lastChange = now
			j := len(tr.ticks) - 1
			if open < 0 && rule.opens(tr.ticks[j]) {
				open = j
			} else if open >= 0 && rule.closes(tr.ticks, open, j) {
				return nil
			}
		}
		if now.Sub(lastChange) > stallTimeout {
			return fmt.Errorf("energy: energy counter did not change for %v", now.Sub(lastChange).Round(time.Millisecond))
		}
		if now.Sub(start) > opts.MaxDuration {
			return fmt.Errorf("energy: window not closed within MaxDuration %v (%d ticks seen)", opts.MaxDuration, len(tr.ticks))
		}
		select {
		case <-t.C:
		case <-p.quit:
			return errors.New("energy: measurement stopped before the window closed")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// stop ends the poller if still running and returns its ticks and error.
func (p *poller) stop() ([]tick, error) {
	select {
	case <-p.done:
	default:
		close(p.quit)
		<-p.done
	}
	return p.ticks, p.err
}

// statesIn returns the states with Time in [from, to].
func statesIn(states []State, from, to time.Time) []State {
	var out []State
	for _, s := range states {
		if !s.Time.Before(from) && !s.Time.After(to) {
			out = append(out, s)
		}
	}
	return out
}
