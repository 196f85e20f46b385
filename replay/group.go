package replay

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/kreplay/kreplay/captured"
	"github.com/kreplay/kreplay/gpu"
	"github.com/kreplay/kreplay/internal/nccl"
	"github.com/kreplay/kreplay/signatures"
)

// Group is several GPUs of this process opened for replay together: one
// Device per GPU, and (on first use) one NCCL communicator spanning them,
// rank i on Devices[i]. It replays collectives across the GPUs
// (MeasureCollective) and spreads independent signatures over them so that
// a suite finishes sooner (RunSet).
//
// Each rank's NCCL calls run on its Device's CUDA goroutine, one thread
// per rank, so no rank's call is inside ncclGroupStart/End: the ranks of
// a step are released together by a barrier and issue their calls
// concurrently, as NCCL requires of one thread per rank. NVLink multicast
// (NVLS) is kept off (NCCL_NVLS_ENABLE=0 unless the environment sets it;
// see internal/nccl).
//
// A Group's methods must not be called concurrently with each other; the
// Devices' own methods may be used between them.
type Group struct {
	// Devices holds the group's GPUs in rank order.
	Devices []*Device

	mu      sync.Mutex
	comms   []*nccl.Comm
	commErr error
	// broken is set when a collective did not complete on every rank in
	// time: the communicators may have work that never ends, so Close
	// aborts them instead of destroying them and no collective runs again.
	broken error
	closed bool
}

// OpenGroup opens the CUDA devices indices (distinct ordinals, rank i on
// indices[i]) for replay together. It does not touch NCCL: the
// communicator is created on the first collective (or by Comms), so a
// Group spreads single-GPU signatures over GPUs on machines without NCCL.
func OpenGroup(indices ...int) (*Group, error) {
	if len(indices) == 0 {
		return nil, errors.New("replay: OpenGroup needs at least one device")
	}
	seen := map[int]bool{}
	for _, i := range indices {
		if seen[i] {
			return nil, fmt.Errorf("replay: device %d appears twice in the group %v", i, indices)
		}
		seen[i] = true
	}
	g := &Group{}
	// One store of snapshots for all: a signature may be prepared on any
	// of the GPUs, and the files read ahead for it (RunSet) must be where
	// that GPU looks. A module image read ahead goes to the first GPU
	// that loads it; another reads it from its file again.
	snaps := captured.NewSnapshots(snapshotsKept * int64(len(indices)))
	for _, i := range indices {
		d, err := Open(i)
		if err != nil {
			g.Close()
			return nil, err
		}
		d.snaps = snaps
		g.Devices = append(g.Devices, d)
	}
	return g, nil
}

// Size returns the number of GPUs (ranks) of the group.
func (g *Group) Size() int { return len(g.Devices) }

// Indices returns the CUDA ordinals of the group's GPUs, in rank order.
func (g *Group) Indices() []int {
	idx := make([]int, len(g.Devices))
	for i, d := range g.Devices {
		idx[i] = d.Index
	}
	return idx
}

// Comms returns the group's communicator, one rank per GPU, creating it
// on first use with ncclCommInitAll (after setting NCCL_NVLS_ENABLE=0
// unless the environment sets it). The call runs on the first GPU's CUDA
// goroutine; NCCL makes each GPU current in turn and restores the first.
// A failure is remembered and returned again.
func (g *Group) Comms() ([]*gpu.Comm, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.commsLocked()
}

func (g *Group) commsLocked() ([]*nccl.Comm, error) {
	if g.closed {
		return nil, errors.New("replay: group closed")
	}
	if g.comms != nil || g.commErr != nil {
		return g.comms, g.commErr
	}
	// NCCL reads its environment once, at its first call.
	nccl.DisableNVLS()
	d0 := g.Devices[0]
	err := d0.Do(func() error {
		comms, err := nccl.CommInitAll(g.Indices())
		// Whatever NCCL left current, the goroutine's context is d0's.
		if serr := d0.ctx.SetCurrent(); err == nil {
			err = serr
		}
		g.comms = comms
		return err
	})
	if err != nil {
		g.commErr = fmt.Errorf("creating the NCCL communicator over GPUs %v: %w", g.Indices(), err)
		return nil, g.commErr
	}
	return g.comms, nil
}

// Close destroys the communicator (each rank on its own GPU's goroutine,
// concurrently; ncclCommAbort instead when a collective did not complete)
// and closes the devices.
func (g *Group) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	var errs []error
	if g.comms != nil {
		errs = append(errs, g.onAll(func(rank int, d *Device, _ func() bool) error {
			c := g.comms[rank]
			if g.broken != nil {
				return c.Abort()
			}
			return c.Destroy()
		}))
		g.comms = nil
	}
	for _, d := range g.Devices {
		errs = append(errs, d.Close())
	}
	return errors.Join(errs...)
}

// errPeerFailed is a rank's error when another rank of the same step
// failed before the barrier, so no rank issued its collective.
var errPeerFailed = errors.New("another rank failed before the collective; not issued")

// barrier releases the ranks of one step together. Every rank arrives
// exactly once; arrive reports whether every rank arrived ready.
type barrier struct {
	n       int
	mu      sync.Mutex
	arrived int
	failed  bool
	release chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, release: make(chan struct{})} }

// arrive records one rank's arrival (ready or not) and waits for the
// others; it reports whether all of them arrived ready.
func (b *barrier) arrive(ready bool) bool {
	b.mu.Lock()
	b.arrived++
	if !ready {
		b.failed = true
	}
	if b.arrived == b.n {
		close(b.release)
	}
	b.mu.Unlock()
	<-b.release
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.failed
}

// onAll runs fn for every rank at once, each on its device's CUDA
// goroutine, and waits for all of them. fn gets release, which it must
// call (at most once) right before making calls that wait for the other
// ranks: release blocks until every rank got there and reports whether
// all did so ready; on false fn must return errPeerFailed without issuing
// anything. A rank whose fn returns (or panics) without calling release
// counts as arrived unready. The error joins the ranks' errors, leaving
// out errPeerFailed where some rank failed for a reason of its own.
func (g *Group) onAll(fn func(rank int, d *Device, release func() bool) error) error {
	n := len(g.Devices)
	b := newBarrier(n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for rank, d := range g.Devices {
		wg.Add(1)
		go func() {
			defer wg.Done()
			arrived := false
			release := func() bool {
				if arrived {
					panic("replay: a rank released twice in one step")
				}
				arrived = true
				return b.arrive(true)
			}
			errs[rank] = d.Do(func() error { return fn(rank, d, release) })
			if !arrived {
				b.arrive(false)
			}
		}()
	}
	wg.Wait()
	return joinRankErrors(g.Indices(), errs)
}

// joinRankErrors names each rank's error, leaving out errPeerFailed when
// another rank has an error of its own.
func joinRankErrors(devices []int, errs []error) error {
	own := slices.ContainsFunc(errs, func(err error) bool { return err != nil && !errors.Is(err, errPeerFailed) })
	var out []error
	for rank, err := range errs {
		if err == nil || (own && errors.Is(err, errPeerFailed)) {
			continue
		}
		out = append(out, fmt.Errorf("rank %d (GPU %d): %w", rank, devices[rank], err))
	}
	return errors.Join(out...)
}

// RunSet measures every signature of a set, like Device.RunSet, using all
// of the group's GPUs, and returns the entries in the set's order.
// Signatures that run on one GPU are spread over the GPUs, one worker
// goroutine per Device taking the next signature as it finishes one, so a
// suite finishes sooner; collectives then run one after the other across
// the whole group (MeasureCollectiveFor) when they were traced on as many
// ranks as the group has GPUs, and get an error in their Entry otherwise.
// Progress lines and Done calls come as signatures finish (from one
// goroutine at a time), so their order varies.
//
// With Options.Energy each single-GPU signature's energy is measured on
// the GPU that ran it, through that Device's meter, while the other GPUs
// run other signatures (each GPU has its own energy counter); a
// collective's is measured on every GPU at once (Result.RankEnergy).
// EnergyShare limits the energy windows as Device.RunSet does.
//
// Each GPU times its signatures' kernels with CUPTI as Device.RunSet
// does, one GPU at a time: CUPTI records for the whole process, so a GPU
// that is to time waits while another records (cuptiMu), and goes on
// preparing, pausing and measuring energy meanwhile. A signature whose
// activities CUPTI recorded only in part is measured again at the end
// (remeasureUnrecorded), Done then called for it a second time.
//
// A GPU whose CUDA context is lost (Device.Lost: a replay on it returned a
// sticky error) takes no more signatures, and the other GPUs go on with
// them; the signatures left when every GPU is lost, and the collectives
// once any is, get the error Device.RunSet gives them.
func (g *Group) RunSet(set *signatures.Set, o SuiteOptions) []Entry {
	parts, todo := o.split(set)
	out := make([]Entry, len(todo))
	withEnergy := o.energyFor(todo)
	var single, colls, now []int
	for i, s := range todo {
		out[i] = newEntry(s, parts[s.ID])
		so := o.withEnergyOf(withEnergy, s.ID)
		switch {
		case s.PartOf != "" || o.skip(&out[i]) || so.reuse(&out[i]):
			now = append(now, i)
		case s.Class == signatures.ClassCollective:
			colls = append(colls, i)
		default:
			single = append(single, i)
		}
	}
	var mu sync.Mutex
	finished := 0
	start := time.Now()
	report := func(i int, dev int) {
		mu.Lock()
		defer mu.Unlock()
		finished++
		e := out[i]
		if o.Done != nil {
			o.Done(e)
		}
		if o.Progress != nil {
			where := "group"
			if dev >= 0 {
				where = fmt.Sprintf("GPU %d", dev)
			}
			fmt.Fprintf(o.Progress, "[%d/%d %s%s %s] %s\n", finished, len(todo), time.Since(start).Round(time.Second), eta(start, finished, len(todo)), where, e.line())
		}
	}
	for _, i := range now {
		report(i, -1) // part of another, left out, or reused from Previous
	}
	var live []*Device
	for _, d := range g.Devices {
		if d.Lost() == nil {
			live = append(live, d)
		}
	}
	var ahead func(i int)
	if len(live) > 0 {
		snaps := live[0].snaps
		ahead = func(i int) { prefetchFiles(snaps, todo[i], o.Cache) }
	}
	left := shardAhead(len(live), single, func(worker, i int) bool {
		d := live[worker]
		d.checkLost(todo[i], measureRecovered(d.runOne, todo[i], o.withEnergyOf(withEnergy, todo[i].ID), &out[i]), o)
		report(i, d.Index)
		return d.Lost() == nil
	}, ahead)
	// Signatures are left only when every GPU is lost; collectives run
	// while none is.
	for _, i := range append(left, colls...) {
		if lost := g.lost(); lost == nil || !lost.notMeasured(&out[i]) {
			g.runCollective(todo[i], o, &out[i])
		}
		report(i, -1)
	}
	// Last, so that a fault in it costs no other measurement.
	if len(live) > 1 {
		g.remeasureUnrecorded(single, todo, parts, out, o, withEnergy)
	}
	o.estimateRest(out, withEnergy)
	o.reportPhases(out)
	return out
}

// lost returns the first of the group's GPUs whose context is lost, or
// nil.
func (g *Group) lost() *Device {
	for _, d := range g.Devices {
		if d.Lost() != nil {
			return d
		}
	}
	return nil
}

// newEntry starts a signature's Entry as Device.RunSet does.
func newEntry(s *signatures.Signature, parts []*signatures.Signature) Entry {
	e := Entry{ID: s.ID, Label: s.Label, Tier: s.Tier, Class: s.Class, Count: s.Count, Kernel: s.Kernel,
		TracedMedianNS: s.TracedNS.Median, TracedTotalNS: s.TracedNS.Total, PartOf: s.PartOf}
	for _, p := range parts {
		// Parts run once per call of the signature they belong to.
		e.TracedMedianNS += p.TracedNS.Median * int64(p.Count) / int64(max(s.Count, 1))
	}
	return e
}

// runCollective measures one collective signature across the group.
func (g *Group) runCollective(s *signatures.Signature, o SuiteOptions, e *Entry) {
	if c := s.Collective; c != nil && c.Ranks > 0 && int(c.Ranks) != len(g.Devices) && s.Unreplayable == "" {
		e.Err = fmt.Sprintf("prepare: traced on %d ranks; this group has %d GPUs", c.Ranks, len(g.Devices))
		return
	}
	r, err := g.MeasureCollectiveFor(s, o.Cache, o.Measure)
	if err != nil {
		e.Err = errText(err)
		return
	}
	e.Result = &r.Result
}

// shard runs run(worker, item) for every item, with workers goroutines
// each taking the next item as soon as it is done with one. A worker
// whose run returns false takes no more items; the items left when every
// worker has stopped (all of them with no workers) are returned, in
// order.
func shard(workers int, items []int, run func(worker, item int) bool) (left []int) {
	return shardAhead(workers, items, run, nil)
}

// shardAhead is shard, calling ahead (when not nil) on a goroutine of its
// own for the item after each one handed to a worker, in order and one
// at a time, so that the work of getting an item ready (reading its
// files) is done before a worker takes it. An item a worker took before
// ahead got to it is passed over, as are all once shardAhead returns
// (it waits for the call in flight).
func shardAhead(workers int, items []int, run func(worker, item int) bool, ahead func(item int)) (left []int) {
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if !run(w, i) {
					return
				}
			}
		}()
	}
	stopped := make(chan struct{})
	go func() {
		wg.Wait()
		close(stopped)
	}()
	look := newLookahead(items, ahead)
	defer func() {
		close(next)
		<-stopped
		look.stop()
	}()
	for k, i := range items {
		select {
		case next <- i:
			look.handed(k)
		case <-stopped:
			return items[k:]
		}
	}
	return nil
}

// remeasureUnrecorded measures again, once, each signature of single
// whose activities CUPTI recorded only in part while the other GPUs
// worked (errMiscounted in Result.KernelErr; its time then an event
// time), on the GPU that ran it (Entry.Device), now that the others are idle. The new
// entry replaces the first where it has a kernel time, and is handed to
// Done and Progress again (a second Done for one ID: the later holds);
// otherwise the first stays, and Progress says so.
// On two H200s one signature of 455 came back so (a cuDNN attention:
// "CUPTI recorded 0 activities for 15 invocations",
// results/h200x2/predict-speed/), which one GPU alone never gave.
func (g *Group) remeasureUnrecorded(single []int, todo []*signatures.Signature, parts map[string][]*signatures.Signature,
	out []Entry, o SuiteOptions, withEnergy map[string]bool) {
	for _, i := range single {
		r := out[i].Result
		if r == nil || !miscounted(r.KernelErr) {
			continue
		}
		d := g.device(out[i].Device)
		if d == nil || d.Lost() != nil {
			continue
		}
		again := newEntry(todo[i], parts[todo[i].ID])
		d.checkLost(todo[i], measureRecovered(d.runOne, todo[i], o.withEnergyOf(withEnergy, todo[i].ID), &again), o)
		if again.Result == nil || again.Result.KernelErr != "" {
			if o.Progress != nil {
				fmt.Fprintf(o.Progress, "[again GPU %d] %s %s: kernels again unrecorded (%s); the first measurement stays\n", d.Index, todo[i].ID, todo[i].Label, againErr(again))
			}
			continue
		}
		out[i] = again
		if o.Done != nil {
			o.Done(again)
		}
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "[again GPU %d] %s (its kernels unrecorded beside the other GPUs' work: %s)\n", d.Index, again.line(), r.KernelErr)
		}
	}
}

// againErr is why a measurement made again has no kernel time.
func againErr(e Entry) string {
	if e.Result == nil {
		return e.Err
	}
	return e.Result.KernelErr
}

// device is the group's GPU of CUDA device index idx; nil for a nil idx
// or a GPU not in the group.
func (g *Group) device(idx *int) *Device {
	for _, d := range g.Devices {
		if idx != nil && d.Index == *idx {
			return d
		}
	}
	return nil
}
