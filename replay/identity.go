package replay

import (
	"strings"

	"github.com/kreplay/kreplay/internal/cupti"
	"github.com/kreplay/kreplay/signatures"
)

// Ran is one GPU activity a replayed launch ran, as CUPTI recorded it.
type Ran struct {
	Kind  string `json:"kind"` // "kernel", "memcpy", "memset"
	Name  string `json:"name"` // kernel name (mangled, as CUPTI gives it)
	Bytes uint64 `json:"bytes,omitempty"`
	DurNS uint64 `json:"dur_ns"`
}

// Identify launches p once with CUPTI's activity API enabled and returns
// what ran on the GPU, and whether that includes the activity the trace
// names for the signature (the same kernel, or a copy or memset of the same
// direction and size). Call it after Measure: CUPTI is enabled only here.
func (d *Device) Identify(p *Prepared) ([]Ran, bool, error) {
	var ran []Ran
	err := d.Do(func() error {
		kinds := []cupti.Kind{cupti.KindConcurrentKernel, cupti.KindMemcpy, cupti.KindMemset}
		if err := cupti.Enable(kinds...); err != nil {
			return err
		}
		defer cupti.Disable(kinds...)
		if err := d.stream.Synchronize(); err != nil {
			return err
		}
		if err := cupti.Flush(); err != nil {
			return err
		}
		cupti.Drain()
		if err := p.Kernel.Launch(d.stream, 0); err != nil {
			return err
		}
		if err := d.stream.Synchronize(); err != nil {
			return err
		}
		if err := cupti.Flush(); err != nil {
			return err
		}
		for _, r := range cupti.Drain() {
			x := Ran{Name: r.Name, Bytes: r.Bytes, DurNS: r.Duration()}
			switch r.Kind {
			case cupti.KindKernel, cupti.KindConcurrentKernel:
				x.Kind = "kernel"
			case cupti.KindMemcpy:
				x.Kind, x.Name = "memcpy", "Memcpy "+copyName(r.CopyKind)
			case cupti.KindMemset:
				x.Kind, x.Name = "memset", "Memset"
			default:
				continue
			}
			ran = append(ran, x)
		}
		return nil
	})
	if err != nil {
		return nil, false, sigErr(p.Sig, "identify", err)
	}
	return ran, sameActivity(p.Sig, ran), nil
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
