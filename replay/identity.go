package replay

import (
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

// kernelTime records, with CUPTI's activity API, the activities of
// o.KernelSamples timed batches and takes each batch's summed activity
// durations per invocation as a sample. CUPTI is enabled only here, after
// the event samples, so it does not perturb them.
func (t *timer) kernelTime(o Options, r *Result) error {
	kinds := []cupti.Kind{cupti.KindConcurrentKernel, cupti.KindMemcpy, cupti.KindMemset}
	if err := cupti.Enable(kinds...); err != nil {
		return err
	}
	defer cupti.Disable(kinds...)
	s := t.d.stream
	if err := s.Synchronize(); err != nil {
		return err
	}
	if err := cupti.Flush(); err != nil {
		return err
	}
	cupti.Drain()
	batch := r.Batch
	var values []float64
	type agg struct {
		Ran
		n   int
		dur uint64
	}
	var order []string
	seen := map[string]*agg{}
	for i := 0; i < o.KernelSamples; i++ {
		if _, err := t.sample(batch, r.Cache == Cold.String()); err != nil {
			return err
		}
		if err := cupti.Flush(); err != nil {
			return err
		}
		var sum uint64
		for _, rec := range cupti.Drain() {
			x, ok := ranOf(rec)
			if !ok || (x.Kind == "memset" && t.d.flushN > 0 && x.Bytes == uint64(t.d.flushN)) {
				continue // the L2 flush of cold mode is not the signature's
			}
			sum += x.DurNS
			key := x.Kind + "\x00" + x.Name
			a := seen[key]
			if a == nil {
				a = &agg{Ran: x}
				seen[key] = a
				order = append(order, key)
			}
			a.n++
			a.dur += x.DurNS
		}
		values = append(values, float64(sum)/float64(batch))
	}
	calls := o.KernelSamples * batch
	for _, k := range order {
		a := seen[k]
		x := a.Ran
		x.PerCall = float64(a.n) / float64(calls)
		x.DurNS = a.dur / uint64(max(a.n, 1))
		r.Ran = append(r.Ran, x)
	}
	sum := summarize(values, o.Confidence)
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

// SameActivity reports whether the activities a replay ran include the
// one the trace names for sig: the same kernel, or a copy or memset of the
// same direction and size.
func SameActivity(sig *signatures.Signature, ran []Ran) bool {
	return sameActivity(sig, ran)
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
