package replay

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The host probes measure, on the replay GPU, the constants of the host
// model of a whole inference (docs/whole-inference.md, section 3):
//
//   - SubmitNS, from a driver launch call's enter to its kernel's start on
//     an idle GPU, and WakeNS, from the GPU finishing to the host's return
//     from cuStreamSynchronize, both from CUPTI's activity records, where
//     the driver call's enter and return and the kernel's start and end
//     are on one clock;
//   - QueueGapNS, the gap between kernels queued back to back on one
//     stream, from the CUPTI records of tiny kernels launched behind a
//     kernel that holds the stream until all of them are queued;
//   - Graph, the host's cost of launching a CUDA graph (cuGraphLaunch's
//     duration on the host, for one kernel and for 256), for the what-if
//     of the same inference under CUDA graphs;
//   - WaitPowerW, the GPU's power while it waits for the host between
//     short kernels (active idle), from NVML energy-counter windows of a
//     short kernel launched after each host gap, less the kernels' own
//     energy and time taken from a back-to-back window of the same kernel
//     (measured as the replays measure theirs, Device.measureEnergy).
//
// CUPTI's tracing sits on the launch path it measures: HostProbe.RoundTrip
// (launch plus synchronize, timed on the host without CUPTI) against
// HostProbe.TracedRoundTrip (the same rounds traced) says how much it adds.

// HostProbeOptions tune MeasureHost. The zero value means every default;
// with them the whole probe takes about 7 s, nearly all of it the energy
// windows.
type HostProbeOptions struct {
	// Rounds is how many launch-and-wait rounds SubmitNS, WakeNS and
	// CopyWakeNS are each taken from (default 200).
	Rounds int `json:"rounds"`
	// IdleGap is the host's pause before each round, after the previous
	// one returned, so that every launch meets an idle GPU (default
	// 50 µs).
	IdleGap time.Duration `json:"idle_gap_ns"`
	// WakeKernel is how long the kernel of each round runs (default
	// 20 µs): long enough that the host is inside its wait before the
	// GPU finishes, so that the wake is the host's and not a late call.
	WakeKernel time.Duration `json:"wake_kernel_ns"`
	// QueueKernels is how many tiny kernels are queued back to back for
	// QueueGapNS (default 500).
	QueueKernels int `json:"queue_kernels"`
	// WaitKernel is the short kernel launched after each host gap in the
	// power windows (default 2 µs).
	WaitKernel time.Duration `json:"wait_kernel_ns"`
	// Gaps are the host gaps after each launch of the power windows, one
	// window each (default 20 µs); WaitPowerW is the first gap's.
	Gaps []time.Duration `json:"gaps_ns"`
	// Ticks is the least number of energy-counter ticks (about 100 ms
	// each) of each power window (default 20).
	Ticks int `json:"ticks"`
	// IdleTicks is the length of the idle window, in nominal ticks
	// (default 10).
	IdleTicks int `json:"idle_ticks"`
	// Warmup is how long each power window's launches run before the
	// window may open (default 200 ms).
	Warmup time.Duration `json:"warmup_ns"`
	// NoPower skips the power windows: WaitPowerW and IdleW stay 0.
	NoPower bool `json:"no_power,omitempty"`
}

// Defaults of HostProbeOptions.
const (
	DefaultHostRounds       = 200
	DefaultHostIdleGap      = 50 * time.Microsecond
	DefaultHostWakeKernel   = 20 * time.Microsecond
	DefaultHostQueueKernels = 500
	DefaultHostWaitKernel   = 2 * time.Microsecond
	DefaultHostGap          = 20 * time.Microsecond
	DefaultHostTicks        = 20
	DefaultHostIdleTicks    = 10
	DefaultHostWarmup       = 200 * time.Millisecond
)

// withDefaults fills the zero fields and checks the others, naming the
// first bad one.
func (o HostProbeOptions) withDefaults() (HostProbeOptions, error) {
	ints := []struct {
		name string
		v    *int
		def  int
		min  int
	}{
		{"Rounds", &o.Rounds, DefaultHostRounds, 3},
		{"QueueKernels", &o.QueueKernels, DefaultHostQueueKernels, 3},
		{"Ticks", &o.Ticks, DefaultHostTicks, 1},
		{"IdleTicks", &o.IdleTicks, DefaultHostIdleTicks, 1},
	}
	for _, f := range ints {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < f.min {
			return o, fmt.Errorf("host probe: %s is %d, at least %d", f.name, *f.v, f.min)
		}
	}
	durs := []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"IdleGap", &o.IdleGap, DefaultHostIdleGap},
		{"WakeKernel", &o.WakeKernel, DefaultHostWakeKernel},
		{"WaitKernel", &o.WaitKernel, DefaultHostWaitKernel},
		{"Warmup", &o.Warmup, DefaultHostWarmup},
	}
	for _, f := range durs {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < 0 {
			return o, fmt.Errorf("host probe: %s is %v, negative", f.name, *f.v)
		}
	}
	if len(o.Gaps) == 0 {
		o.Gaps = []time.Duration{DefaultHostGap}
	}
	for i, g := range o.Gaps {
		if g <= 0 {
			return o, fmt.Errorf("host probe: Gaps[%d] is %v, not positive", i, g)
		}
	}
	return o, nil
}

// Spread summarises a sample of times in ns.
type Spread struct {
	N        int     `json:"n"`
	MedianNS float64 `json:"median_ns"`
	P10NS    float64 `json:"p10_ns"`
	P90NS    float64 `json:"p90_ns"`
	MinNS    float64 `json:"min_ns"`
	MaxNS    float64 `json:"max_ns"`
}

// HostProbe is what MeasureHost measured. Times are in ns, powers in W.
type HostProbe struct {
	// Device is the GPU's name.
	Device string `json:"device"`
	// SubmitNS is the median, over the rounds, of a launch call's enter to
	// its kernel's start, the GPU idle. It holds the driver's launch path
	// and CUPTI's tracing of it (RoundTrip against TracedRoundTrip bounds
	// what the tracing adds).
	SubmitNS float64 `json:"submit_ns"`
	// QueueGapNS is the mean gap between kernels queued back to back on
	// one stream: (span − Σ durations)/(n − 1) (Queue).
	QueueGapNS float64 `json:"queue_gap_ns"`
	// WakeNS is the median, over the rounds the host waited in, of the
	// kernel's end to the host's return from cuStreamSynchronize (the
	// call's return in CUPTI's record).
	WakeNS float64 `json:"wake_ns"`
	// CopyWakeNS is the same for the .item() pattern: a copy of 8 bytes
	// to pageable host memory (cuMemcpyDtoHAsync) then cuStreamSynchronize,
	// from the copy's end on the GPU to the host's return.
	CopyWakeNS float64 `json:"copy_wake_ns"`
	// WaitPowerW is the GPU's power while it waits for the host between
	// short kernels (Wait[0].WaitPowerW); IdleW the power with nothing
	// launched, measured after the wait windows.
	WaitPowerW float64 `json:"wait_power_w"`
	IdleW      float64 `json:"idle_w"`

	// Submit, Launch (the launch call's own duration), Wake and CopyWake
	// summarise the rounds.
	Submit   Spread `json:"submit"`
	Launch   Spread `json:"launch"`
	Wake     Spread `json:"wake"`
	CopyWake Spread `json:"copy_wake"`
	// RoundTrip is the host's time for a launch and cuStreamSynchronize of
	// the round kernel without CUPTI; TracedRoundTrip the same from the
	// traced rounds (launch enter to synchronize return). Their difference
	// is what CUPTI's tracing adds to a round.
	RoundTrip       Spread `json:"round_trip"`
	TracedRoundTrip Spread `json:"traced_round_trip"`
	// Late counts rounds (of both kinds) whose host entered its wait only
	// after the kernel had ended: they are left out of Wake and CopyWake.
	Late int `json:"late"`
	// Rounds and CopyRounds are the raw rounds.
	Rounds     []HostRound `json:"rounds"`
	CopyRounds []HostRound `json:"copy_rounds"`
	// Queue is the queued kernels' run.
	Queue QueueProbe `json:"queue"`
	// Graph is the host's cost of launching a CUDA graph.
	Graph GraphLaunch `json:"graph"`

	// Kernel is the back-to-back energy window of the wait kernel (a CUDA
	// graph of launches, as replays measure energy): JoulesPerOp and
	// Seconds/Ops are one kernel's share, subtracted from the wait
	// windows. Nil with NoPower.
	Kernel *Energy `json:"kernel,omitempty"`
	// Wait holds one window per gap of the options.
	Wait []WaitWindow `json:"wait,omitempty"`
	// Idle is the idle window.
	Idle *Energy `json:"idle,omitempty"`
	// PowerLimitW is NVML's power limit, 0 where unknown.
	PowerLimitW float64 `json:"power_limit_w,omitempty"`

	// Options are the options as run, defaults filled in.
	Options HostProbeOptions `json:"options"`
}

// MeasureHost measures the host model's constants on d (see HostProbe):
// it compiles its kernels with NVRTC, runs the traced rounds and the
// queued kernels with CUPTI recording driver calls, kernels and copies,
// then, unless o.NoPower, the energy windows on d's meter. CUPTI's
// activity recording is process-wide: run MeasureHost alone, not while d
// or another Device replays. ctx ends the wait and idle windows (the
// back-to-back window runs as the replays' does, to its end). It returns
// the first error of a failed step, with what was measured before it.
func MeasureHost(ctx context.Context, d *Device, o HostProbeOptions) (HostProbe, error) {
	if d == nil {
		return HostProbe{}, errors.New("host probe: no device")
	}
	o, err := o.withDefaults()
	if err != nil {
		return HostProbe{}, err
	}
	p := HostProbe{Device: d.Name, Options: o}
	if !o.NoPower && d.Meter == nil {
		return p, fmt.Errorf("host probe: %w: %v", ErrNoMeter, d.NVMLErr)
	}
	err = d.Do(func() error {
		k, err := d.newHostKernel()
		if err != nil {
			return err
		}
		defer k.close()
		if err := d.measureRounds(k, o, &p); err != nil {
			return err
		}
		if err := d.measureQueue(k, o, &p); err != nil {
			return err
		}
		if err := d.measureGraphLaunch(k, o, &p); err != nil {
			return err
		}
		if o.NoPower {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		return d.measureHostPower(ctx, k, o, &p)
	})
	if err != nil {
		return p, fmt.Errorf("host probe on %s: %w", d.Name, err)
	}
	return p, nil
}
