package replay

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kreplay/kreplay/internal/cupti"
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
	// binary's restores make (launch.AuxMemcpy).
	skip       []string
	skipMemcpy bool
}

func startRecording(d *Device) (*recorder, error) {
	kinds := []cupti.Kind{cupti.KindConcurrentKernel, cupti.KindMemcpy, cupti.KindMemset}
	if err := cupti.Enable(kinds...); err != nil {
		return nil, err
	}
	return &recorder{d: d, kinds: kinds}, nil
}

func (c *recorder) stop() { cupti.Disable(c.kinds...) }

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

// collect reads the records of samples batches of batch invocations, in
// order, and sets the kernel time and the activities run per invocation.
func (c *recorder) collect(r *Result, samples, batch int, confidence float64) error {
	if err := c.d.stream.Synchronize(); err != nil {
		return err
	}
	if err := cupti.Flush(); err != nil {
		return err
	}
	var recs []Ran
	for _, rec := range cupti.Drain() {
		x, ok := ranOf(rec)
		if !ok || (x.Kind == "memset" && c.d.flushN > 0 && x.Bytes == uint64(c.d.flushN)) {
			continue // the L2 flush of cold mode is not the signature's
		}
		if x.Kind == "kernel" && slices.Contains(c.skip, x.Name) || c.skipMemcpy && x.Kind == "memcpy" {
			continue // nor are the primers of the primed mode, or restores
		}
		recs = append(recs, x)
	}
	calls := samples * batch
	if len(recs) == 0 || len(recs)%calls != 0 {
		return fmt.Errorf("CUPTI recorded %d activities for %d invocations", len(recs), calls)
	}
	per := len(recs) / calls
	values := make([]float64, samples)
	for i := range values {
		var sum uint64
		for _, x := range recs[i*batch*per : (i+1)*batch*per] {
			sum += x.DurNS
		}
		values[i] = float64(sum) / float64(batch)
	}
	// The activities of one invocation, with mean durations.
	for j := 0; j < per; j++ {
		x := recs[j]
		var sum uint64
		for i := j; i < len(recs); i += per {
			sum += recs[i].DurNS
		}
		x.DurNS, x.PerCall = sum/uint64(calls), 1
		r.Ran = append(r.Ran, x)
	}
	sum := summarize(values, confidence)
	r.KernelMedianNS, r.KernelLoNS, r.KernelHiNS = sum.Center, sum.Lo, sum.Hi
	return nil
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
			if r.Kind == "kernel" && cupti.SameKernel(sig.Kernel, r.Name) {
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
