package replay

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/kreplay/kreplay/internal/cupti"
	"github.com/kreplay/kreplay/internal/kname"
	"github.com/kreplay/kreplay/signatures"
)

// Ran is one GPU activity a replayed invocation ran, as CUPTI recorded it.
type Ran struct {
	Kind  string `json:"kind"` // "kernel", "memcpy", "memset"
	Name  string `json:"name"` // kernel name (mangled, as CUPTI gives it)
	Bytes uint64 `json:"bytes,omitempty"`
	// DurNS is the mean duration of one run of the activity.
	DurNS uint64 `json:"dur_ns"`
	// PerCall is how many times one invocation runs it.
	PerCall float64 `json:"per_call"`
}

// recorder records, with CUPTI's activity API, the activities of the
// timed batches themselves, so that kernel times and event times come from
// the same launches in the same GPU state.
type recorder struct {
	d     *Device
	kinds []cupti.Kind
	// skip names kernels whose records are not the signature's (the
	// primed mode's primers, the clean flush); skipMemcpy drops copies, which a captured
	// binary's restores make (launch.AuxMemcpy); skipMemset drops memsets
	// the trace records as signatures of their own (launch.AuxMemset).
	skip       []string
	skipMemcpy bool
	skipMemset bool
	stopped    bool
}

func startRecording(d *Device, tm *measureTiming) (*recorder, error) {
	return recordKinds(d, tm, cupti.KindConcurrentKernel, cupti.KindMemcpy, cupti.KindMemset)
}

// recordKinds starts a recorder of kinds on d once no other recorder of
// the process records (cuptiMu; the wait charged to tm's partCUPTIWait,
// the enabling to partCUPTISwitch). Every recorder it returns must be
// stopped.
func recordKinds(d *Device, tm *measureTiming, kinds ...cupti.Kind) (*recorder, error) {
	prev := tm.enter(partCUPTIWait)
	cuptiMu.Lock()
	tm.enter(partCUPTISwitch)
	defer tm.enter(prev)
	if err := cupti.Enable(kinds...); err != nil {
		cupti.Disable(kinds...)
		cuptiMu.Unlock()
		return nil, err
	}
	return &recorder{d: d, kinds: kinds}, nil
}

// cuptiMu lets one recorder at a time record in the process. CUPTI's
// activity API is process-wide: enabling and disabling a kind applies to
// every GPU, and records come only through a flush of every GPU's
// buffers, which hands over another GPU's kernels still in flight as
// incomplete records that CUPTI does not deliver again. So a GPU of a
// Group that is to time its kernels (its warm-up and timed samples) waits
// for the one recording; the other GPUs go on preparing, pausing and
// measuring energy, and their records, which the recording GPU's flushes
// drain too, are dropped (recorder.own). Their kernels are traced while
// another GPU records: that CUPTI's tracing leaves their energy windows
// as one GPU alone measures them has not been checked on a GPU.
var cuptiMu sync.Mutex

// stop ends the recording and lets the next recorder start; a second
// call does nothing.
func (c *recorder) stop() {
	if c.stopped {
		return
	}
	c.stopped = true
	cupti.Disable(c.kinds...)
	cuptiMu.Unlock()
}

// own says whether an activity record is of the recorder's GPU: CUPTI's
// device ID is the CUDA device ordinal.
func (c *recorder) own(r cupti.Record) bool { return r.DeviceID == uint32(c.d.Index) }

// discard drops what was recorded so far (warm-up, graph capture).
func (c *recorder) discard() error {
	if err := c.d.stream.Synchronize(); err != nil {
		return err
	}
	if err := cupti.Flush(); err != nil {
		return err
	}
	cupti.Drain()
	return nil
}

// flush hands k the records of the samples timed since the last flush,
// in order, without what is not the signature's. Call once those samples'
// work has finished.
func (c *recorder) flush(k *kernelTimes, samples int) error {
	if err := c.d.stream.Synchronize(); err != nil {
		return err
	}
	if err := cupti.Flush(); err != nil {
		return err
	}
	var recs []Ran
	for _, rec := range cupti.Drain() {
		if !c.own(rec) {
			continue
		}
		x, ok := ranOf(rec)
		if !ok || (x.Kind == "memset" && c.d.flushN > 0 && x.Bytes == uint64(c.d.flushN)) {
			continue // the L2 flush of cold mode is not the signature's
		}
		if x.Kind == "kernel" && slices.Contains(c.skip, x.Name) || c.skipMemcpy && x.Kind == "memcpy" ||
			c.skipMemset && x.Kind == "memset" {
			continue // nor are the primers of the primed mode, restores, or a library's own memsets
		}
		recs = append(recs, x)
	}
	return k.add(recs, samples)
}

// errMiscounted: the activities CUPTI recorded for timed samples do not
// divide into their invocations (some went unrecorded). A Result's
// KernelErr then begins with its text (miscounted).
var errMiscounted = errors.New("CUPTI recorded activities that do not divide into the invocations")

// miscounted says whether a Result's KernelErr is errMiscounted's.
func miscounted(kernelErr string) bool { return strings.HasPrefix(kernelErr, errMiscounted.Error()) }

// kernelTimes turns the activity records of timed samples, each a batch
// of invocations, handed over in order a flush at a time, into each
// sample's kernel time per invocation (the summed durations of its
// activities over batch) and the activities one invocation runs.
type kernelTimes struct {
	batch int
	// per is the activities of one invocation, known from the first
	// records; ran holds them with their durations summed over calls
	// invocations.
	per    int
	ran    []Ran
	calls  int
	values []float64
	// single holds each invocation's own time (its activities' summed
	// durations), up to maxSingle of them.
	single []float64
}

// maxSingle bounds kernelTimes.single.
const maxSingle = 1 << 20

// add takes the records of the next samples samples.
func (k *kernelTimes) add(recs []Ran, samples int) error {
	calls := samples * k.batch
	switch {
	case len(recs) == 0 && calls == 0:
		return nil
	case k.per == 0 && (len(recs) == 0 || calls == 0 || len(recs)%calls != 0):
		return fmt.Errorf("%w: %d for %d invocations", errMiscounted, len(recs), calls)
	case k.per == 0:
		k.per = len(recs) / calls
		for _, x := range recs[:k.per] {
			x.DurNS, x.PerCall = 0, 1
			k.ran = append(k.ran, x)
		}
	case len(recs) != calls*k.per:
		return fmt.Errorf("%w: %d for %d invocations of %d each", errMiscounted, len(recs), calls, k.per)
	}
	n := k.batch * k.per
	for i := 0; i < samples; i++ {
		var sum, one uint64
		for j, x := range recs[i*n : (i+1)*n] {
			sum += x.DurNS
			one += x.DurNS
			k.ran[j%k.per].DurNS += x.DurNS
			if j%k.per == k.per-1 {
				if len(k.single) < maxSingle {
					k.single = append(k.single, float64(one))
				}
				one = 0
			}
		}
		k.values = append(k.values, float64(sum)/float64(k.batch))
	}
	k.calls += calls
	return nil
}

// activities returns the activities of one invocation, each with its mean
// duration.
func (k *kernelTimes) activities() []Ran {
	if k.calls == 0 {
		return nil
	}
	out := slices.Clone(k.ran)
	for i := range out {
		out[i].DurNS /= uint64(k.calls)
	}
	return out
}

// ranOf converts a CUPTI record.
func ranOf(r cupti.Record) (Ran, bool) {
	x := Ran{Name: r.Name, Bytes: r.Bytes, DurNS: r.Duration()}
	switch r.Kind {
	case cupti.KindKernel, cupti.KindConcurrentKernel:
		x.Kind = "kernel"
	case cupti.KindMemcpy:
		x.Kind, x.Name = "memcpy", "Memcpy "+copyName(r.CopyKind)
	case cupti.KindMemset:
		x.Kind, x.Name = "memset", "Memset"
	default:
		return x, false
	}
	return x, true
}

func copyName(k cupti.MemcpyKind) string {
	switch k {
	case cupti.MemcpyHtoD:
		return "HtoD"
	case cupti.MemcpyDtoH:
		return "DtoH"
	case cupti.MemcpyDtoD:
		return "DtoD"
	}
	return k.String()
}

// sameActivity reports whether ran includes the traced activity of sig.
func sameActivity(sig *signatures.Signature, ran []Ran) bool {
	for _, r := range ran {
		switch sig.Activity {
		case signatures.ActivityKernel:
			if r.Kind == "kernel" && kname.SameKernel(sig.Kernel, r.Name) {
				return true
			}
		case signatures.ActivityMemcpy:
			if r.Kind == "memcpy" && sig.Memory != nil && int64(r.Bytes) == sig.Memory.Bytes &&
				strings.HasSuffix(r.Name, string(sig.Memory.Kind)) {
				return true
			}
		case signatures.ActivityMemset:
			if r.Kind == "memset" && sig.Memory != nil && int64(r.Bytes) == sig.Memory.Bytes {
				return true
			}
		}
	}
	return false
}
