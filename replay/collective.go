package replay

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kreplay/kreplay/energy"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/internal/nccl"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/tier2"
)

// errCollectiveOnDevice is what Device.Prepare says of a collective.
var errCollectiveOnDevice = fmt.Errorf("%w: NCCL collectives replay across GPUs: open them with replay.OpenGroup and use Group.MeasureCollective", ErrNotImplemented)

// DefaultCollectiveTimeout is Options.CollectiveTimeout when it is zero.
const DefaultCollectiveTimeout = time.Minute

// RankResult is one rank's share of a collective measurement. Times are
// per call, in nanoseconds, from CUDA events on the rank's own stream:
// from the batch's first call to its last, including any wait for the
// other ranks.
type RankResult struct {
	Rank   int    `json:"rank"`
	Device int    `json:"device"`
	Name   string `json:"name"`

	// Stats are of this rank's per-call times.
	Stats
	// BusGBps is the bus bandwidth at this rank's median, in GB/s.
	BusGBps float64 `json:"bus_gbps"`
	// Sets is the buffer sets this rank rotated through.
	Sets int `json:"sets"`

	// GPU state sampled through NVML during the samples; nil without NVML.
	GPU       *energy.Summary `json:"gpu,omitempty"`
	Throttled bool            `json:"throttled"`
}

// CollectiveResult is the measurement of one collective signature across
// a Group. Its Result holds, per timed batch, the slowest rank's time per
// call (a collective ends when its last rank does), summarised as
// Device.Measure summarises a signature; Result.Work.Bytes is the bus
// bytes, so Result.GBps is the bus bandwidth.
type CollectiveResult struct {
	Result
	// Op is the collective; Call the NCCL function.
	Op   string `json:"op"`
	Call string `json:"call"`
	// DType, Count: the NCCL data type and each rank's send and receive
	// elements.
	DType     string `json:"dtype"`
	SendElems int64  `json:"send_elems"`
	RecvElems int64  `json:"recv_elems"`
	// Ranks is the communicator's size; TracedRanks what the trace ran on.
	Ranks       int   `json:"ranks"`
	TracedRanks int64 `json:"traced_ranks"`
	// AlgBytes and BusBytes are the sizes the algorithm and bus
	// bandwidths count (tier2.BusBytes documents the formulas).
	AlgBytes int64   `json:"alg_bytes"`
	BusBytes float64 `json:"bus_bytes"`
	// AlgGBps and BusGBps are the bandwidths at the median, in GB/s.
	AlgGBps float64 `json:"alg_gbps"`
	BusGBps float64 `json:"bus_gbps"`
	// PerRank holds each rank's own statistics, in rank order.
	PerRank []RankResult `json:"per_rank"`
	// NCCLVersion is the library's NCCL_VERSION_CODE.
	NCCLVersion int `json:"nccl_version"`
	// GraphErr says why the batches ran as direct calls although graphs
	// were allowed ("" when they ran as graphs or graphs were not asked
	// for).
	GraphErr string `json:"graph_error,omitempty"`
}

// MeasureCollective measures a collective signature across the group with
// the buffers Auto picks (warm: the operand of a collective was just
// written by the kernel before it). See MeasureCollectiveFor.
func (g *Group) MeasureCollective(sig *signatures.Signature, o Options) (*CollectiveResult, error) {
	return g.MeasureCollectiveFor(sig, Auto, o)
}

// collRank is one rank's state during a collective measurement.
type collRank struct {
	k      *tier2.Collective
	t      *timer
	values []float64
}

// MeasureCollectiveFor measures a collective signature on every GPU of the
// group at once, one rank per GPU, with Device.Measure's method: a pause,
// warm-up, batches of calls captured in a CUDA graph (NCCL 2.9 and later;
// direct calls where capture fails, with GraphErr saying why) timed with
// CUDA events on every rank, sampled until the confidence interval of the
// median is within the target or the budget ends. Each step is issued by
// every rank's CUDA goroutine at once, released together by a barrier,
// and the batch size, the graphs and when to stop are decided for all
// ranks together, so every rank makes the same calls. The cache mode
// allocates buffers as for Device.PrepareFor (Cold flushes L2 on every GPU
// before each single-call sample). The signature's traced element count
// and dtype are replayed on this group's communicator even when the trace
// ran on another number of ranks (TracedRanks tells). With
// Options.Energy the collective then runs back to back on every rank for
// a window of whole NVML counter ticks on each GPU (after
// Options.EnergyWarmup), as Device.Measure measures one GPU: RankEnergy
// holds each GPU's energy per call, Energy their sum.
// CUPTI kernel times are not available for collectives (KernelErr says
// so).
func (g *Group) MeasureCollectiveFor(sig *signatures.Signature, cache CacheMode, o Options) (*CollectiveResult, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case sig.Unreplayable != "":
		return nil, sigErr(sig, "prepare", fmt.Errorf("%w: %s", ErrUnreplayable, sig.Unreplayable))
	case sig.PartOf != "":
		return nil, sigErr(sig, "prepare", fmt.Errorf("%w %s", ErrPartOf, sig.PartOf))
	case sig.Class != signatures.ClassCollective || sig.Collective == nil:
		return nil, sigErr(sig, "prepare", fmt.Errorf("%w: class %s", tier2.ErrNotCollective, sig.Class))
	}
	if g.broken != nil {
		return nil, sigErr(sig, "prepare", fmt.Errorf("the group's communicator is unusable: %w", g.broken))
	}
	comms, err := g.commsLocked()
	if err != nil {
		return nil, sigErr(sig, "prepare", err)
	}
	o.defaults()
	cache = cache.For(sig)
	ranks := make([]*collRank, len(g.Devices))
	err = g.onAll(func(rank int, d *Device, _ func() bool) error {
		cr, err := d.prepareCollective(sig, comms[rank], cache)
		ranks[rank] = cr
		return err
	})
	defer g.onAll(func(rank int, d *Device, _ func() bool) error {
		if cr := ranks[rank]; cr != nil {
			cr.t.close()
			return cr.k.Close()
		}
		return nil
	})
	if err != nil {
		return nil, sigErr(sig, "prepare", err)
	}
	r := &CollectiveResult{Result: Result{ID: sig.ID, Label: sig.Label, Cache: cache.String(), Confidence: o.Confidence}}
	if err := g.measureCollective(ranks, cache, o, r); err != nil {
		return nil, sigErr(sig, "measure", err)
	}
	k := ranks[0].k
	r.Op, r.Call, r.Path = string(k.Op()), k.Op().Call(), k.Op().Call()
	r.DType = k.DataType()
	r.SendElems, r.RecvElems = k.Counts()
	r.Ranks, r.TracedRanks = k.Ranks(), sig.Collective.Ranks
	r.AlgBytes, r.BusBytes = k.AlgBytes(), k.BusBytes()
	r.NCCLVersion, _ = nccl.Version()
	if r.MedianNS > 0 {
		r.AlgGBps, r.BusGBps = float64(r.AlgBytes)/r.MedianNS, r.BusBytes/r.MedianNS
	}
	for i := range r.PerRank {
		if m := r.PerRank[i].MedianNS; m > 0 {
			r.PerRank[i].BusGBps = r.BusBytes / m
		}
	}
	return r, nil
}

// prepareCollective builds one rank's kernel and timer. Call inside Do.
func (d *Device) prepareCollective(sig *signatures.Signature, comm *nccl.Comm, cache CacheMode) (*collRank, error) {
	free, _, err := cuda.MemGetInfo()
	if err != nil {
		return nil, err
	}
	opt := launch.Options{Sets: 1, Seed: seedOf(sig.ID), FreeBytes: int64(free) - memoryReserve}
	k, err := tier2.NewCollective(sig, comm, opt, d.stream)
	if err != nil {
		return nil, err
	}
	if cache == Rotating {
		if n := launch.SetsFor(k.Footprint(), d.L2Bytes, opt.FreeBytes/2, maxSets); n > 1 {
			if err := k.Close(); err != nil {
				return nil, err
			}
			opt.Sets = n
			if k, err = tier2.NewCollective(sig, comm, opt, d.stream); err != nil {
				return nil, err
			}
		}
	}
	t := &timer{d: d, k: k, sets: k.Sets()}
	if cache == Warm {
		t.sets = 1
	}
	cr := &collRank{k: k, t: t}
	if t.ev, err = newEvents(); err != nil {
		t.close()
		k.Close()
		return nil, err
	}
	return cr, nil
}

// sampleAll times one batch on every rank: batch calls (the graph when
// there is one), after an L2 flush when flush is set. expect is how long
// the batch should take (0 when unknown); a rank that waits ten times that
// plus wait (Options.CollectiveTimeout) gives up, and the group is marked broken. It
// returns each rank's elapsed time.
func (g *Group) sampleAll(ranks []*collRank, batch int, flush bool, expect, wait time.Duration) ([]time.Duration, error) {
	els := make([]time.Duration, len(ranks))
	if wait <= 0 {
		wait = DefaultCollectiveTimeout
	}
	timeout := wait + 10*expect
	err := g.onAll(func(rank int, d *Device, release func() bool) error {
		t := ranks[rank].t
		if flush {
			if err := d.flushL2(); err != nil {
				return err
			}
		}
		if !release() {
			return errPeerFailed
		}
		el, err := t.ev.around(d.stream, func() error { return t.enqueue(batch) },
			func(end *cuda.Event) error { return waitEvent(end, timeout) })
		els[rank] = el
		return err
	})
	if errors.Is(err, errCollectiveTimeout) {
		g.broken = err
	}
	return els, err
}

// errCollectiveTimeout: a batch did not complete in time on some rank.
var errCollectiveTimeout = errors.New("collective did not complete (a rank never joined?)")

// waitEvent waits for e to complete, polling, for at most timeout.
func waitEvent(e *cuda.Event, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	pause := 10 * time.Microsecond
	for {
		done, err := e.Query()
		if err != nil || done {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: waited %v", errCollectiveTimeout, timeout)
		}
		time.Sleep(pause)
		pause = min(2*pause, time.Millisecond)
	}
}

// captureAll captures batch calls in a graph on every rank. On failure
// every rank drops its graph and the error says which rank failed.
func (g *Group) captureAll(ranks []*collRank, batch int) error {
	err := g.onAll(func(rank int, d *Device, release func() bool) error {
		if !release() {
			return errPeerFailed
		}
		return ranks[rank].t.capture(batch)
	})
	if err != nil {
		g.onAll(func(rank int, d *Device, _ func() bool) error {
			t := ranks[rank].t
			if t.graph != nil {
				t.graph.Destroy()
				t.graph = nil
			}
			return nil
		})
	}
	return err
}

func slowest(els []time.Duration) time.Duration { return slices.Max(els) }

func (g *Group) measureCollective(ranks []*collRank, cache CacheMode, o Options, r *CollectiveResult) error {
	cold := cache == Cold
	r.Sets = ranks[0].t.sets
	r.Work = ranks[0].k.Work()
	r.KernelErr = "CUPTI kernel times are not recorded for collectives (CUPTI's activity records are process-wide)"
	if o.Pause > 0 {
		time.Sleep(o.Pause)
	}
	// Warm-up (the first calls also set up NCCL's connections), and a
	// first estimate of one call from direct calls: the slowest rank's.
	warmEnd := time.Now().Add(o.Warmup)
	est := time.Duration(0)
	for n := 1; ; n = min(2*n, 1024) {
		els, err := g.sampleAll(ranks, n, false, est*time.Duration(n), o.CollectiveTimeout)
		if err != nil {
			return err
		}
		el := slowest(els)
		est = el / time.Duration(n)
		if time.Now().After(warmEnd) && (el > 0 || n == 1024) {
			break
		}
	}
	batch := 1
	if !cold {
		batch = clampBatch(o.MinBatchTime, est, o.MaxBatch)
	}
	capturable := true
	for _, cr := range ranks {
		capturable = capturable && cr.k.Capturable()
	}
	if !o.NoGraph && !cold {
		if !capturable {
			r.GraphErr = "NCCL before 2.9 cannot be captured in a CUDA graph"
		} else if err := g.captureAll(ranks, batch); err != nil {
			r.GraphErr = fmt.Sprintf("capturing %d calls in a graph: %v", batch, err)
		} else {
			// A graph removes launch gaps: grow the batch once if it now runs short.
			els, err := g.sampleAll(ranks, batch, false, est*time.Duration(batch), o.CollectiveTimeout)
			if err != nil {
				return err
			}
			if el := slowest(els); el < o.MinBatchTime/2 && batch < o.MaxBatch {
				batch = clampBatch(o.MinBatchTime, el/time.Duration(batch), o.MaxBatch)
				if err := g.captureAll(ranks, batch); err != nil {
					r.GraphErr = fmt.Sprintf("capturing %d calls in a graph: %v", batch, err)
				}
			}
		}
	}
	r.Batch, r.Graph = batch, ranks[0].t.graph != nil

	var meters []*energy.Device
	for _, d := range g.Devices {
		if d.Meter != nil {
			meters = append(meters, d.Meter)
		}
	}
	var sampler *energy.Sampler
	if len(meters) > 0 && !o.NoNVML {
		sampler, r.SamplerErr = startSampler(meters...)
	}
	var values []float64
	began := time.Now()
	deadline := began.Add(max(o.Budget, o.MinTime))
	expect := est * time.Duration(batch)
	for len(values) < o.MaxSamples {
		if o.Cooldown > 0 {
			time.Sleep(o.Cooldown)
		}
		els, err := g.sampleAll(ranks, batch, cold, expect, o.CollectiveTimeout)
		if err != nil {
			if sampler != nil {
				sampler.Stop()
			}
			return err
		}
		for i, cr := range ranks {
			cr.values = append(cr.values, float64(els[i].Nanoseconds())/float64(batch))
		}
		values = append(values, float64(slowest(els).Nanoseconds())/float64(batch))
		if len(values) < o.MinSamples {
			continue
		}
		if len(values)%5 == 0 || time.Now().After(deadline) {
			r.RelCI = relCI(summarize(values, o.Confidence))
			if r.RelCI <= o.TargetRelCI && time.Since(began) >= o.MinTime {
				r.Converged = true
				break
			}
			if time.Now().After(deadline) {
				break
			}
		}
	}
	var samples []energy.Sample
	if sampler != nil {
		var err error
		if samples, err = sampler.Stop(); err != nil {
			r.SamplerErr = "NVML reads failed, the states read are used: " + err.Error()
		}
	}
	setStats(&r.Result, values, o.Confidence)
	r.Converged = r.Converged || r.RelCI <= o.TargetRelCI
	for i, cr := range ranks {
		d := g.Devices[i]
		rr := RankResult{Rank: i, Device: d.Index, Name: d.Name, Sets: cr.t.sets}
		rr.Stats = statsOf(cr.values, o.Confidence)
		if d.Meter != nil && len(samples) > 0 {
			if states := energy.DeviceStates(samples, d.Meter.Index()); len(states) > 0 {
				s := energy.Summarize(states)
				rr.GPU, rr.Throttled = &s, s.Throttled()
				if rr.Throttled {
					r.Throttled = true
					if r.Reasons == "" {
						r.Reasons = s.ThrottleReasons.String()
					}
				}
				if i == 0 {
					r.GPU = &s
				}
			}
		}
		r.PerRank = append(r.PerRank, rr)
	}
	if o.Energy {
		es, err := g.measureCollectiveEnergy(ranks, r, o)
		if err != nil {
			r.EnergyErr = err.Error()
		} else {
			r.RankEnergy, r.Energy = es, sumEnergy(es)
		}
	}
	return nil
}

// setStats fills a Result's sample statistics from per-call values, all
// of them counted (MedianAllNS is MedianNS).
func setStats(r *Result, values []float64, confidence float64) {
	if len(values) == 0 {
		return
	}
	r.Stats = statsOf(values, confidence)
	r.Samples = len(values)
	r.MedianAllNS = r.MedianNS
}
