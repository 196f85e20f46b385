package replay

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"golang.org/x/perf/benchmath"

	"github.com/kreplay/kreplay/energy"
	"github.com/kreplay/kreplay/gpu"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

// CacheMode is the L2 cache state a measurement runs in. Its zero value,
// CacheDefault, stands for DefaultCacheMode: every function that takes a
// CacheMode resolves it (CacheMode.Resolve), so that a caller that leaves
// the mode unset gets the default, and one that names any mode gets it.
type CacheMode int

// DefaultCacheMode is the cache mode CacheDefault, the zero CacheMode,
// stands for: the one statement of the default, which the command line's
// -cache flags and the benchmarks' KREPLAY_CACHE take too.
const DefaultCacheMode = Context

// Cache modes.
const (
	// CacheDefault, the zero value, is DefaultCacheMode.
	CacheDefault CacheMode = iota
	// Rotating cycles through enough buffer sets to exceed twice the L2
	// size, so operands come from device memory as in a real model whose
	// layers each have their own weights.
	Rotating
	// Warm repeats the launch on the same buffers: operands that fit stay
	// in L2.
	Warm
	// Cold overwrites a buffer twice the L2 size before each sample,
	// outside the timed region, and times one launch per sample. For
	// kernels of a few microseconds this includes launch latency.
	Cold
	// Auto picks per signature what a real forward pass sees: Rotating
	// for GEMMs that read a layer's weights (mm, addmm, linear: every
	// layer has its own, so they come from device memory); Cold for
	// layer norm, whose weights come from device memory too but are too
	// small to rotate out of the L2 (a decode's layer norm traces nearer
	// its cold time than its warm one);
	// Primed for the other tier-3 kernels, whose inputs the kernels before
	// them just wrote; Warm for the rest (attention's bmm and baddbmm,
	// memory ops). A signature replayed by its captured binary runs
	// Rotating where a GEMM's would (its buffers are the allocations it
	// pointed into, so a decode step's weight of 32 MB rotates through
	// three sets), Primed otherwise: its producer, the launch recorded
	// just before it that touched its memory, runs before each launch
	// after a clean flush of the L2 (package captured; Device.cleanL2), or,
	// without one, each launch starts from the clean L2 (see
	// results/h100/capture/README.md for how near traced each runs).
	Auto
	// Primed rotates buffer sets as Rotating does and, before each
	// launch, writes that set's input tensors from twins that hold the
	// same bytes, in argument order (tier 3's kernels: see gpu.Primer
	// and tier3.Kernel.Prime), as the kernels that produced them would
	// have: the inputs are just written, beside what their producer read
	// (an input larger than the L2 keeps only its tail there), the
	// outputs are memory no recent kernel touched, and the L2 holds the
	// dirty lines of earlier launches, written back while the op runs, as
	// in a forward pass. (Warm launches rewrite the same output lines still
	// dirty in L2, so part of the output never reaches device memory:
	// under Nsight Compute, BLOOM-560M's softmax wrote 44 of its 64 MB
	// warm and all of them in the real model.) As in Cold, each sample
	// is one launch after the L2 is overwritten with dirty lines, so that
	// every sample starts from the same state. The replay time (CUPTI)
	// leaves the primers out; the event times (Result.MedianNS) include
	// them, and the energy is measured without them. Kernels that cannot
	// be primed, or a run without CUPTI, run Rotating instead.
	Primed
	// Context is Auto, except that a signature replayed by its captured
	// binary, memory-bound GEMMs included, runs Primed after its context:
	// the launches recorded just before it, whatever memory they touched
	// (signatures.Binary.Context), each with its own buffers where it
	// shares none. What they write is in the L2, dirty, when the kernel
	// starts, as in the real run: a GEMV that streams its weight from
	// device memory writes those lines back while it runs, and slows the
	// more the more of them there are (scripts/gpu/pred_probe.py; see
	// results/h100/plain-traces/README.md). A compute-bound GEMM
	// (ComputeBound) rotates as in Auto: its time is the SM clock's, not
	// the L2's, and a prefill at the power limit runs its GEMMs back to
	// back as the rotating batches do, where one launch after its context
	// runs between pauses (see results/h100/capture/README.md).
	Context
)

// ComputeBoundAI is the arithmetic intensity (FLOPs per byte of operands
// and result) from which the Context mode takes a GEMM for compute-bound.
// A guess, set at about half the ridge point of an H100's 16-bit tensor
// cores over its DRAM bandwidth (989 TFLOP/s over 3.35 TB/s by the data
// sheet, 295 FLOP/B): decode GEMMs of a few rows lie far below it (4-16),
// prefill GEMMs of thousands of tokens far above (about 900).
const ComputeBoundAI = 128

// ComputeBound reports whether sig is a GEMM of at least ComputeBoundAI.
func ComputeBound(sig *signatures.Signature) bool {
	g := sig.GEMM
	if g == nil || sig.Class != signatures.ClassGEMM {
		return false
	}
	w := gemmWork(g)
	return w.Bytes > 0 && float64(w.FLOPs)/float64(w.Bytes) >= ComputeBoundAI
}

// Resolve returns DefaultCacheMode for CacheDefault and c otherwise.
func (c CacheMode) Resolve() CacheMode {
	if c == CacheDefault {
		return DefaultCacheMode
	}
	return c
}

// For returns the cache mode Auto (or Context) picks for a signature,
// after Resolve; other modes return themselves.
func (c CacheMode) For(sig *signatures.Signature) CacheMode {
	c = c.Resolve()
	if c == Context {
		if b := sig.Binary; b != nil && len(b.Context) > 0 && !ComputeBound(sig) {
			return Primed
		}
		c = Auto
	}
	if c != Auto {
		return c
	}
	switch sig.Op {
	case "aten::mm", "aten::addmm", "aten::linear", "aten::matmul", "aten::_addmm_activation", "aten::_scaled_mm":
		if sig.Class == signatures.ClassGEMM {
			return Rotating
		}
	case "aten::native_layer_norm", "aten::layer_norm":
		if sig.Class == signatures.ClassNorm {
			return Cold
		}
	}
	if sig.Tier == signatures.TierKernel {
		return Primed
	}
	return Warm
}

func (c CacheMode) String() string {
	switch c {
	case CacheDefault:
		return "default"
	case Rotating:
		return "rotating"
	case Warm:
		return "warm"
	case Cold:
		return "cold"
	case Auto:
		return "auto"
	case Primed:
		return "primed"
	case Context:
		return "context"
	}
	return fmt.Sprintf("CacheMode(%d)", int(c))
}

// ParseCacheMode parses "rotating", "warm", "cold", "primed", "auto" or
// "context"; "default" and "" give CacheDefault.
func ParseCacheMode(s string) (CacheMode, error) {
	if s == "" {
		return CacheDefault, nil
	}
	for _, c := range []CacheMode{CacheDefault, Rotating, Warm, Cold, Primed, Auto, Context} {
		if c.String() == s {
			return c, nil
		}
	}
	return 0, fmt.Errorf("unknown cache mode %q (want rotating, warm, cold, primed, auto, context or default)", s)
}

// Options tune Measure. The zero value gives the defaults.
type Options struct {
	// TargetRelCI is the relative half-width of the confidence interval of
	// the median at which sampling stops (default 0.01).
	TargetRelCI float64
	// Confidence of the interval (default 0.95).
	Confidence float64
	// MinSamples and MaxSamples bound the sample count (defaults 10, 2000).
	MinSamples, MaxSamples int
	// MinBatchTime is how long one timed batch of launches should last
	// (default 1 ms); MaxBatch caps its launches (default 10000).
	MinBatchTime time.Duration
	MaxBatch     int
	// Budget ends sampling once spent, converged or not (default 2 s).
	Budget time.Duration
	// Pause is an idle time before the warm-up (default 50 ms; negative:
	// none), so that the power and heat of what ran before do not carry
	// over into this measurement through the power limiter. It is taken
	// only where they could (PauseAbove); Result.Paused says whether it
	// was. The collectives' and the timeline's measurements take it
	// always.
	Pause time.Duration
	// PauseAbove is the share of the GPU's power limit (NVML's enforced
	// limit) from which a signature's sampled power makes the next
	// signature measured on the same device take the pause (default
	// DefaultPauseAbove; negative: every signature takes it). The pause
	// is taken too after a throttled sample, after energy windows, and
	// wherever the previous signature's power is not known: the device's
	// first, after a failed measurement or other work on the device
	// (anything run through Device.Do), without NVML's sampler or power
	// limit.
	PauseAbove float64
	// Warmup is how long launches run before timing (default 20 ms).
	Warmup time.Duration
	// MinTime is the least time spent sampling (default none: MinSamples
	// and the confidence target decide). The default protocol is a short
	// burst per signature, in which a heavy GEMM keeps its boost clock as
	// it does inside a traced forward pass; a long MinTime measures it at
	// the power cap instead (see the README's notes on power).
	MinTime time.Duration
	// Cooldown is an idle pause between samples (default none), to
	// measure a heavy kernel without the power cap that back-to-back
	// launches hit.
	Cooldown time.Duration
	// NoGraph times batches of direct launches instead of a CUDA graph.
	NoGraph bool
	// NoNVML skips the NVML sampler.
	NoNVML bool
	// Energy also measures the energy per invocation (Result.Energy), over
	// a window of EnergyTicks NVML counter ticks (default 101: one tick is
	// under 1% of the energy; a tick is about 100 ms on an H100) after
	// EnergyWarmup of back-to-back launches (default 1 s, for the power
	// and clocks of steady state).
	Energy       bool
	EnergyTicks  int
	EnergyWarmup time.Duration
	// NoEnergyDuty keeps the back-to-back energy of a signature whose
	// window ran power-capped, instead of measuring it again duty-cycled
	// under the cap (Energy.Duty).
	NoEnergyDuty bool
	// NoKernelTime skips the CUPTI pass that times the kernels themselves
	// and records which ones ran (see Result.KernelMedianNS).
	NoKernelTime bool
	// ClockProbe also measures the SM clock the replay runs at on the GPU
	// itself (Result.SMClockMHz): after the timed samples, one more run
	// of the samples' batches, about 2 ms of them back to back, under a
	// probe that reads clock64 and %globaltimer as they begin and end.
	// The timed samples run without it.
	ClockProbe bool
	// CollectiveTimeout bounds how long a rank waits for a step of a
	// collective measurement (a batch of calls) beyond ten times the time
	// the batch should take (default DefaultCollectiveTimeout). A rank
	// that waits longer ends the measurement with an error: another rank
	// never joined, and the group's communicator is aborted on Close.
	CollectiveTimeout time.Duration
}

func (o *Options) defaults() {
	if o.TargetRelCI <= 0 {
		o.TargetRelCI = 0.01
	}
	if o.Confidence <= 0 || o.Confidence >= 1 {
		o.Confidence = 0.95
	}
	if o.MinSamples <= 0 {
		o.MinSamples = 10
	}
	if o.MaxSamples < o.MinSamples {
		o.MaxSamples = max(2000, o.MinSamples)
	}
	if o.MinBatchTime <= 0 {
		o.MinBatchTime = time.Millisecond
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 10000
	}
	if o.Budget <= 0 {
		o.Budget = 2 * time.Second
	}
	if o.Warmup <= 0 {
		o.Warmup = 20 * time.Millisecond
	}
	if o.Pause == 0 {
		o.Pause = 50 * time.Millisecond
	}
	if o.PauseAbove == 0 {
		o.PauseAbove = DefaultPauseAbove
	}
	if o.EnergyWarmup == 0 {
		o.EnergyWarmup = time.Second
	}
	if o.CollectiveTimeout <= 0 {
		o.CollectiveTimeout = DefaultCollectiveTimeout
	}
}

// Result is the measurement of one signature. Times are per invocation,
// in nanoseconds.
type Result struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	Path  string `json:"path"`
	// Approximate says why the replay only moves the op's bytes; "" when
	// it computes the real op.
	Approximate string `json:"approximate,omitempty"`
	// Fallback says why a signature planned for a vendor library (cuDNN
	// SDPA) replayed with kreplay's own kernel instead; "" when it did not.
	Fallback string `json:"fallback,omitempty"`
	// Note says what else the replay left out (Prepared.Note).
	Note string `json:"note,omitempty"`
	// Fidelity says how close the replay is to the trace: the same
	// kernel, another one, kreplay's own, a stand-in (Fidelities).
	Fidelity string `json:"fidelity,omitempty"`
	Cache    string `json:"cache"`
	// Batch is the launches per timed sample; Graph tells whether they
	// ran as a CUDA graph; Sets is the buffer sets rotated through.
	Batch int  `json:"batch"`
	Graph bool `json:"graph"`
	Sets  int  `json:"sets"`
	// Samples is how many timed samples the statistics are over (see
	// ThrottledSamples for those left out).
	Samples int `json:"samples"`
	// Paused is true when the idle pause (Options.Pause) came before the
	// warm-up: the previous signature on the device could have left power
	// or heat behind, or nothing was known of it (Options.PauseAbove).
	Paused bool `json:"paused,omitempty"`

	// Stats are of the CUDA event time per invocation, which includes the
	// gaps between launches, with the given confidence; except RelCI,
	// which is of the value the result reports (ReportedNS: the kernel
	// time where CUPTI recorded it, the event time otherwise). Sampling
	// judged the same value at its checks.
	Stats
	Confidence float64 `json:"confidence"`
	// Converged is true when RelCI is within Options.TargetRelCI.
	Converged bool `json:"converged"`
	// ThrottledSamples counts the timed samples that overlap an NVML
	// state with a throttle reason (the power cap, a thermal or hardware
	// slowdown: energy.ClockReasons.Throttled), each state standing for
	// the time nearer to it than to the states beside it. As nvbench
	// does, they are left out of every statistic above and of the kernel
	// time's when at least Options.MinSamples others remain; otherwise
	// ThrottledKept is set and they count. MedianAllNS and
	// KernelMedianAllNS are the medians over all samples, throttled ones
	// included.
	ThrottledSamples  int     `json:"throttled_samples,omitempty"`
	ThrottledKept     bool    `json:"throttled_kept,omitempty"`
	MedianAllNS       float64 `json:"median_all_ns,omitempty"`
	KernelMedianAllNS float64 `json:"kernel_median_all_ns,omitempty"`

	Work gpu.Work `json:"work"`

	// KernelMedianNS is the median over the timed batches of the GPU time
	// of the activities one invocation runs, as CUPTI records them during
	// the same batches (their summed durations, without the gaps between
	// launches): the measure a profiler trace's durations are, and the
	// value the result reports (ReportedNS). KernelLoNS and KernelHiNS
	// bound it. Throttled samples are left out as for the event time
	// (ThrottledSamples). Zero when CUPTI could not record; KernelErr then
	// says why.
	KernelMedianNS float64 `json:"kernel_median_ns,omitempty"`
	KernelLoNS     float64 `json:"kernel_lo_ns,omitempty"`
	KernelHiNS     float64 `json:"kernel_hi_ns,omitempty"`
	KernelErr      string  `json:"kernel_error,omitempty"`
	// SingleMedianNS is the median of single invocations' CUPTI time over
	// all timed batches, throttled ones included. KernelMedianAllNS is the
	// median of the same batches' means: well above this, a few
	// invocations ran long (a 4-byte memset: a trace
	// holds its median, as a profiler records each one).
	SingleMedianNS float64 `json:"single_median_ns,omitempty"`
	// ReportsSingles is true when KernelMedianNS (with KernelLoNS and
	// KernelHiNS) is the median of single invocations, for a kernel the
	// framework issues one at a time on its stream (gpu.Streamed: CUDA
	// memory operations), whose batches run as direct launches.
	ReportsSingles bool `json:"reports_singles,omitempty"`
	// PaceNS is the host time the timed launches of a gpu.Paced kernel
	// (a memset, a copy to the host) waited after each launch, so that
	// each found the GPU idle; 0 when they were not paced (no CUPTI to
	// time them one by one).
	PaceNS int64 `json:"pace_ns,omitempty"`
	// Ran lists the GPU activities one invocation ran, from CUPTI.
	Ran []Ran `json:"ran,omitempty"`

	// Energy is set when Options.Energy asked for it and NVML could
	// measure; EnergyErr says why not otherwise.
	Energy    *Energy `json:"energy,omitempty"`
	EnergyErr string  `json:"energy_error,omitempty"`
	// EnergyHostNS is the host time the energy measurement took: its
	// warm-up, windows and any duty-cycled measurement again.
	EnergyHostNS int64 `json:"energy_host_ns,omitempty"`
	// RankEnergy holds, for a collective, each GPU's energy per call in
	// rank order; Energy is then their sum (Energy.GPUs).
	RankEnergy []Energy `json:"rank_energy,omitempty"`

	// GPU state sampled through NVML during the samples; nil without NVML.
	GPU *energy.Summary `json:"gpu,omitempty"`
	// SamplerErr says why NVML's sampler read no GPU state during the
	// samples although a meter was there and asked for (it did not start,
	// or its reads failed): throttled samples then go unflagged and are
	// not left out. "" when it read, or was not asked to.
	SamplerErr string `json:"sampler_error,omitempty"`
	// SMClockMHz is the effective SM clock measured on the GPU with
	// Options.ClockProbe: SM cycles (clock64) over %globaltimer's
	// nanoseconds while the samples' batches ran once more after the
	// timed ones, for ClockProbeNS. It is the clock the work ran at, which
	// NVML's readings (GPU.MeanSMClockMHz) can overstate, by hundreds of
	// MHz for heavy GEMMs under the power cap. 0 without the probe, or
	// when it failed: ClockErr then says why.
	SMClockMHz   float64 `json:"sm_clock_mhz,omitempty"`
	ClockProbeNS float64 `json:"clock_probe_ns,omitempty"`
	ClockErr     string  `json:"clock_error,omitempty"`
	// Throttled is true when any NVML sample had a power or thermal
	// throttle reason; Reasons names them. ThrottledSamples says what
	// became of the timed samples it overlapped.
	Throttled bool   `json:"throttled"`
	Reasons   string `json:"throttle_reasons,omitempty"`
}

// GBps returns the achieved bandwidth in GB/s.
func (r *Result) GBps() float64 {
	if r.MedianNS <= 0 {
		return 0
	}
	return float64(r.Work.Bytes) / r.MedianNS
}

// TFLOPs returns the achieved rate in TFLOP/s.
func (r *Result) TFLOPs() float64 {
	if r.MedianNS <= 0 {
		return 0
	}
	return float64(r.Work.FLOPs) / r.MedianNS / 1e3
}

// Measure times a prepared signature (see the package documentation for
// the method) and returns per-invocation statistics.
func (d *Device) Measure(p *Prepared, o Options) (*Result, error) {
	return d.measureTimed(p, o, nil)
}

// measureTimed is Measure, charging its host time to tm (when not nil) by
// part.
func (d *Device) measureTimed(p *Prepared, o Options, tm *measureTiming) (*Result, error) {
	o.defaults()
	r := &Result{ID: p.Sig.ID, Label: p.Sig.Label, Path: p.Path, Approximate: p.Approximate, Fallback: p.Fallback, Note: p.Note, Cache: p.Cache.String(), Confidence: o.Confidence}
	err := d.do(func() error {
		defer tm.enter(tm.enter(measureUntimed))
		if err := d.measure(p, o, d.pauseFirst(o, d.powerLimit), r, tm); err != nil {
			return err
		}
		d.rememberPower(r, o)
		return nil
	})
	if err != nil {
		return nil, sigErr(p.Sig, "measure", err)
	}
	r.Fidelity = fidelity(p.Sig, r)
	return r, nil
}

// timer times batches of launches with CUDA events.
type timer struct {
	d     *Device
	k     launch.Kernel
	sets  int
	next  int
	ev    events
	graph *cuda.GraphExec
	batch int
	// prime, when set, primes each launch's inputs (the primed mode).
	prime launch.Primer
	// clean flushes the L2 clean (cleanL2) instead of dirty (flushL2).
	clean bool
	// pace is the host time to wait after each direct launch
	// (gpu.Paced). Only Streamed kernels are paced, and those are
	// never captured in a graph; it is 0 again before the energy windows.
	pace time.Duration
	// tm times the measurement; graphPart is the part its graphs'
	// captures and destruction are charged to.
	tm        *measureTiming
	graphPart measurePart
}

func (t *timer) close() {
	defer t.tm.enter(t.tm.enter(t.graphPart))
	if t.graph != nil {
		t.graph.Destroy()
	}
	t.ev.close()
}

// enqueue enqueues one timed batch of n launches: the captured graph, or
// the launches directly.
func (t *timer) enqueue(n int) error {
	if t.graph != nil {
		return t.graph.Launch(t.d.stream)
	}
	return t.launchN(n)
}

// launchN enqueues n launches directly, rotating buffer sets.
func (t *timer) launchN(n int) error {
	for i := 0; i < n; i++ {
		if t.prime != nil {
			if err := t.prime.Prime(t.d.stream, t.next); err != nil {
				return err
			}
		}
		if err := t.k.Launch(t.d.stream, t.next); err != nil {
			return err
		}
		t.next = (t.next + 1) % t.sets
		spin(t.pace)
	}
	return nil
}

// spin waits d on the host without yielding the thread, which a sleep's
// granularity (tens of µs) would overshoot.
func spin(d time.Duration) {
	if d <= 0 {
		return
	}
	for start := time.Now(); time.Since(start) < d; {
	}
}

// capture builds a graph of n launches, rotating buffer sets.
func (t *timer) capture(n int) error {
	defer t.tm.enter(t.tm.enter(t.graphPart))
	if t.graph != nil {
		t.graph.Destroy()
		t.graph = nil
	}
	var err error
	t.graph, err = captureGraph(t.d.stream, func() error { return t.launchN(n) })
	t.batch = n
	return err
}

// captureGraph captures what launch enqueues on s into a CUDA graph and
// instantiates it. A launch error ends the capture and is the error.
// Call inside Do.
func captureGraph(s *cuda.Stream, launch func() error) (*cuda.GraphExec, error) {
	if err := s.BeginCapture(cuda.CaptureModeThreadLocal); err != nil {
		return nil, err
	}
	lerr := launch()
	g, err := s.EndCapture()
	if lerr != nil {
		if g != nil {
			g.Destroy()
		}
		return nil, lerr
	}
	if err != nil {
		return nil, err
	}
	defer g.Destroy()
	return g.Instantiate()
}

// flushL2 flushes the L2 before a sample: clean (cleanL2) or dirty
// (flushL2).
func (t *timer) flushL2() error {
	if t.clean {
		return t.d.cleanL2()
	}
	return t.d.flushL2()
}

// enqueueSample enqueues one sample's work untimed, as sample runs it:
// the L2 flush when flush is set, then the batch.
func (t *timer) enqueueSample(batch int, flush bool) error {
	if flush {
		if err := t.flushL2(); err != nil {
			return err
		}
	}
	return t.enqueue(batch)
}

// sample times one batch: the graph, or batch direct launches.
func (t *timer) sample(batch int, flush bool) (time.Duration, error) {
	s := t.d.stream
	if flush {
		if err := t.flushL2(); err != nil {
			return 0, err
		}
	}
	return t.ev.around(s, func() error { return t.enqueue(batch) }, nil)
}

// measure measures p into r, taking the pause first when pause is set.
func (d *Device) measure(p *Prepared, o Options, pause bool, r *Result, tm *measureTiming) error {
	k := p.Kernel
	t := &timer{d: d, k: k, sets: k.Sets(), tm: tm, graphPart: partGraphs}
	if p.Cache == Warm {
		t.sets = 1
	}
	defer t.close()
	var err error
	if t.ev, err = newEvents(); err != nil {
		return err
	}
	r.Work = k.Work()
	if pause {
		// Before the recorder: in a Group another GPU may record meanwhile.
		tm.in(partPause, func() { time.Sleep(o.Pause) })
		tm.paused()
		r.Paused = true
	}
	var rec *recorder
	if !o.NoKernelTime {
		var err error
		rec, err = startRecording(d, tm)
		if err != nil {
			r.KernelErr = err.Error()
		} else {
			defer func() {
				if rec != nil {
					tm.in(partCUPTISwitch, rec.stop)
				}
			}()
			if pr, ok := k.(launch.Primer); ok && p.Cache == Primed {
				t.prime = pr
				rec.skip = append(rec.skip, pr.PrimeKernels()...)
			}
			if a, ok := k.(launch.AuxMemcpy); ok && a.AuxMemcpy() {
				rec.skipMemcpy = true
			}
			if a, ok := k.(launch.AuxMemset); ok && a.AuxMemset() {
				rec.skipMemset = true
			}
		}
	}

	if p.Cache == Primed && t.prime == nil {
		r.Cache = Rotating.String() // nothing to prime with, or no CUPTI to leave the primers out
	}
	if c, ok := k.(interface{ Producer() bool }); ok && t.prime != nil {
		// A captured binary: its samples start from a clean L2 (cleanL2),
		// and without a producer that is all (cold).
		if err := d.setupClean(); err != nil {
			return err
		}
		t.clean = true
		if rec != nil {
			rec.skip = append(rec.skip, cleanKernel)
		}
		if !c.Producer() {
			r.Cache = Cold.String()
		} else {
			t.sets = 1 // its producers write set 0; more sets serve the energy windows
		}
	}
	r.Sets = t.sets
	// Cold and primed samples are single launches after an L2 flush; a
	// primed signature that fell back to rotating samples batches.
	cold := p.Cache == Cold || t.prime != nil
	if rec != nil && !cold {
		// Timed one by one by CUPTI, a paced kernel's batch times only
		// set the batch size; without CUPTI they are its time, unpaced.
		t.pace = launch.PaceOf(k)
		r.PaceNS = t.pace.Nanoseconds()
	}
	prev := tm.enter(partWarmup)
	batch, err := t.warmUp(o, cold)
	tm.enter(prev)
	if err != nil {
		return err
	}
	r.Batch, r.Graph = batch, t.graph != nil

	if rec != nil {
		prev := tm.enter(partCUPTI)
		tm.flushed()
		err := rec.discard()
		tm.enter(prev)
		if err != nil {
			return err
		}
	}
	err = d.sampleTimed(t, rec, batch, cold, o, r)
	t.pace = 0 // the clock probe and the energy windows run unpaced
	if rec != nil {
		tm.in(partCUPTISwitch, rec.stop)
		rec = nil
	}
	if err != nil {
		return err
	}
	if o.ClockProbe {
		tm.in(partProbe, func() { d.probeReplayClock(t, batch, cold, r) })
	}
	if o.Energy {
		per := energyOpNS(r, t.prime != nil)
		t.prime = nil // the primers' energy is not the op's
		if p.Cache != Warm {
			t.sets, t.next = k.Sets(), 0
		}
		start := time.Now()
		t.graphPart = partEnergyGraphs
		e, err := d.measureEnergy(t, r, per, o)
		t.graphPart = partGraphs
		if err != nil {
			r.EnergyErr = err.Error()
		}
		r.Energy, r.EnergyHostNS = e, time.Since(start).Nanoseconds()
	}
	return nil
}

// warmUp launches for o.Warmup, estimating one launch's time from direct
// launches, and returns the launches per timed sample: one for cold
// samples, otherwise enough to last o.MinBatchTime, captured in a CUDA
// graph where one can be.
func (t *timer) warmUp(o Options, cold bool) (int, error) {
	warmEnd := time.Now().Add(o.Warmup)
	est := time.Duration(0)
	for n := 1; ; n = min(2*n, 1024) {
		el, err := t.sample(n, false)
		if err != nil {
			return 0, err
		}
		est = el / time.Duration(n)
		if time.Now().After(warmEnd) && el > 0 {
			break
		}
	}
	batch := 1
	if !cold {
		batch = clampBatch(o.MinBatchTime, est, o.MaxBatch)
	}
	if o.NoGraph || cold || !t.k.Capturable() || launch.IsStreamed(t.k) {
		return batch, nil
	}
	if err := t.capture(batch); err != nil {
		return 0, fmt.Errorf("capturing %d launches in a graph: %w", batch, err)
	}
	// A graph removes launch gaps: grow the batch once if it now runs short.
	if el, err := t.sample(batch, false); err == nil && el < o.MinBatchTime/2 && batch < o.MaxBatch {
		batch = clampBatch(o.MinBatchTime, el/time.Duration(batch), o.MaxBatch)
		if err := t.capture(batch); err != nil {
			return 0, err
		}
	}
	return batch, nil
}

// sampleTimed takes the timed samples of batch launches each
// (sampleToTarget), with CUPTI recording them when rec is not nil and
// NVML sampling the GPU's state, and fills r's statistics: the checks
// and the result judge the value r reports (see reported).
func (d *Device) sampleTimed(t *timer, rec *recorder, batch int, cold bool, o Options, r *Result) error {
	tm := t.tm
	defer tm.enter(tm.enter(partSampling))
	rp := &reported{rec: rec, kt: kernelTimes{batch: batch}, minKeep: o.MinSamples, tm: tm}
	var sampler *energy.Sampler
	var startErr string
	if d.Meter != nil && !o.NoNVML {
		prev := tm.enter(partNVML)
		sampler, startErr = startSampler(d.Meter)
		tm.enter(prev)
		if sampler != nil {
			rp.nvml = func() []energy.State { return energy.DeviceStates(sampler.Samples(), d.Meter.Index()) }
		}
	}
	s, err := sampleToTarget(o, func() (float64, error) {
		el, err := t.sample(batch, cold)
		return float64(el.Nanoseconds()) / float64(batch), err
	}, rp.judge)
	tm.sampled(s.values, batch)
	prev := tm.enter(partNVML)
	states, stopErr := stopSampler(sampler, d.Meter)
	tm.enter(prev)
	if err != nil {
		return err
	}
	r.SamplerErr = joinSamplerErr(startErr, stopErr)
	r.GPU, r.Throttled, r.Reasons = gpuSummary(states)
	rp.flush(len(s.values))
	if rp.kernelErr != nil {
		r.KernelErr = rp.kernelErr.Error()
	}
	var throttled []bool
	if sampler != nil {
		throttled = throttledSamples(s.spans, states)
	}
	kernel := rp.kernel()
	setReported(r, s.values, kernel, throttled, o.MinSamples, o.Confidence, o.TargetRelCI)
	if kernel != nil {
		r.Ran = rp.kt.activities()
		if launch.IsStreamed(t.k) {
			reportSingles(r, rp.kt.single, o.Confidence, o.TargetRelCI)
		} else {
			r.SingleMedianNS = median(rp.kt.single, o.Confidence)
		}
	}
	return nil
}

// reported follows, while a signature is sampled, the value its result
// will report, so that the stop rule judges that value: at each check
// the CUPTI records of the samples so far go to the kernel times, which
// are judged where CUPTI records (the event times otherwise), less the
// samples the throttle policy would discard given the NVML states read
// so far.
type reported struct {
	// rec is nil without CUPTI, and once a flush failed (kernelErr).
	rec       *recorder
	kt        kernelTimes
	flushed   int // samples handed to kt
	taken     int // samples taken at the latest check
	kernelErr error
	// nvml returns the NVML states read so far; nil without NVML.
	nvml    func() []energy.State
	minKeep int
	// tm times the flushes (nil times nothing).
	tm *measureTiming
}

// flush hands kt the records of the samples up to n.
func (p *reported) flush(n int) {
	if p.rec == nil || n <= p.flushed {
		return
	}
	defer p.tm.enter(p.tm.enter(partCUPTI))
	p.tm.flushed()
	if err := p.rec.flush(&p.kt, n-p.flushed); err != nil {
		p.rec, p.kernelErr = nil, err
		return
	}
	p.flushed = n
}

// kernel returns the samples' kernel times, or nil when CUPTI did not
// record them all.
func (p *reported) kernel() []float64 {
	if p.kernelErr != nil || p.flushed == 0 {
		return nil
	}
	return p.kt.values
}

// judge is sampleToTarget's judgeFunc. It reads the NVML states of the
// moment; its judging hands kt the records of every sample taken by then
// (the latest check's), so that checks judged together take one flush, and
// judges the first len(values).
func (p *reported) judge(values []float64, spans []span) func() []float64 {
	n := len(values)
	p.taken = n
	var states []energy.State
	if p.nvml != nil {
		states = p.nvml()
	}
	return func() []float64 {
		p.flush(p.taken)
		judged := values
		if k := p.kernel(); len(k) >= n {
			judged = k[:n]
		}
		if p.nvml != nil {
			judged, _, _ = dropThrottled(judged, throttledSamples(spans, states), p.minKeep)
		}
		return judged
	}
}

func clampBatch(target, per time.Duration, maxBatch int) int {
	if per <= 0 {
		return maxBatch
	}
	return max(1, min(maxBatch, int(math.Ceil(float64(target)/float64(per)))))
}

func summarize(values []float64, confidence float64) benchmath.Summary {
	s := benchmath.NewSample(slices.Clone(values), &benchmath.DefaultThresholds)
	return benchmath.AssumeNothing.Summary(s, confidence)
}

func relCI(s benchmath.Summary) float64 {
	if s.Center <= 0 || math.IsInf(s.Lo, 0) || math.IsInf(s.Hi, 0) || math.IsNaN(s.Lo) {
		return math.Inf(1)
	}
	return max(s.Center-s.Lo, s.Hi-s.Center) / s.Center
}

// String formats a result on one line: the median of the value it
// reports (ReportedNS) with its interval, the event time when that is the
// kernel time, the samples, and throttling: "ID LABEL median 12.30µs
// ±0.4% kernel, events 13.10µs (37 samples x 80, rotating, graph)
// THROTTLED sw_power_cap: 3 of 40 samples throttled, discarded (median
// of all 12.41µs)".
func (r *Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %-40.40s median %.2fµs ±%.1f%%", r.ID, r.Label, r.ReportedNS()/1e3, 100*r.RelCI)
	if r.KernelMedianNS > 0 {
		fmt.Fprintf(&b, " kernel, events %.2fµs", r.MedianNS/1e3)
	}
	if n := r.singleNote(); n != "" {
		b.WriteString(", " + n)
	}
	fmt.Fprintf(&b, " (%d samples x %d, %s", r.Samples, r.Batch, r.Cache)
	if r.Graph {
		b.WriteString(", graph")
	}
	b.WriteString(")")
	if r.Throttled {
		fmt.Fprintf(&b, " THROTTLED %s", r.Reasons)
	}
	if n := r.ThrottleNote(); n != "" {
		if !r.Throttled {
			b.WriteString(" throttled")
		}
		fmt.Fprintf(&b, ": %s", n)
		all := r.MedianAllNS
		if r.KernelMedianNS > 0 {
			all = r.KernelMedianAllNS
		}
		if !r.ThrottledKept && all > 0 {
			fmt.Fprintf(&b, " (median of all %.2fµs)", all/1e3)
		}
	}
	if r.SamplerErr != "" {
		fmt.Fprintf(&b, " throttling unchecked: %s", r.SamplerErr)
	}
	return b.String()
}

// reportSingles makes the median of single invocations (with its
// interval) the kernel time r reports, for a gpu.Streamed kernel; the
// batch means' median stays in KernelMedianAllNS.
func reportSingles(r *Result, single []float64, confidence, target float64) {
	if len(single) == 0 {
		return
	}
	sum := summarize(single, confidence)
	r.KernelMedianNS, r.KernelLoNS, r.KernelHiNS = sum.Center, sum.Lo, sum.Hi
	r.SingleMedianNS = sum.Center
	r.RelCI = relCI(sum)
	r.Converged = r.RelCI <= target
	r.ReportsSingles = true
}

// singleNote says "single invocations' median 0.74µs" when that is 5% or
// more away from the median of all batch means (the same samples: the
// kernel time reported may leave throttled ones out); "" otherwise.
func (r *Result) singleNote() string {
	all := r.KernelMedianAllNS
	if all <= 0 {
		all = r.KernelMedianNS
	}
	if r.SingleMedianNS <= 0 || all <= 0 || math.Abs(r.SingleMedianNS/all-1) < 0.05 {
		return ""
	}
	if r.ReportsSingles {
		return fmt.Sprintf("single invocations' median (batch means' %.2fµs)", all/1e3)
	}
	return fmt.Sprintf("single invocations' median %.2fµs", r.SingleMedianNS/1e3)
}

// gpuSummary summarises NVML states: the summary, whether any state was
// throttled, and why. No states give nil.
func gpuSummary(states []energy.State) (*energy.Summary, bool, string) {
	if len(states) == 0 {
		return nil, false, ""
	}
	sum := energy.Summarize(states)
	if !sum.Throttled() {
		return &sum, false, ""
	}
	return &sum, true, sum.ThrottleReasons.String()
}
