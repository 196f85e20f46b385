// Package tier1 replays CUDA memory operations: memcpy (host to device,
// device to host, device to device, from pageable or pinned host memory as
// traced) and memset, with the traced byte counts.
package tier1

import (
	"errors"
	"fmt"
	"time"

	"github.com/kreplay/kreplay/gpu"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

// ErrNotMemoryOp is returned for signatures that are not tier 1.
var ErrNotMemoryOp = errors.New("not a tier-1 memory op")

// memSet is one buffer set: a device buffer, and a host or second device
// buffer for copies.
type memSet struct {
	dev  cuda.DevicePtr
	dev2 cuda.DevicePtr
	host *cuda.HostBuffer
}

// Kernel is a memcpy or memset made launchable.
type Kernel struct {
	sig   *signatures.Signature
	kind  signatures.CopyKind // "" for memset
	bytes int64
	sets  []memSet
}

var (
	_ launch.Kernel = (*Kernel)(nil)
	_ launch.Paced  = (*Kernel)(nil)
)

// pace is the host time between a memset's or a copy to the host's
// timed launches. Queued right behind another memory operation, both
// stretch, by an amount that differs between processes; 3 µs of host
// time between launches, like a synchronize after each, gives the same
// time in every process (see results/h100/memset-pacing/README.md).
const pace = 3 * time.Microsecond

// New allocates the buffers of a tier-1 signature and fills them with
// random data. It must run with the device's context current.
func New(sig *signatures.Signature, opt gpu.Options, s *gpu.Stream) (*Kernel, error) {
	if sig.Tier != signatures.TierMemory || sig.Memory == nil {
		return nil, fmt.Errorf("%s: %w", sig.ID, ErrNotMemoryOp)
	}
	if sig.Unreplayable != "" {
		return nil, errors.New(sig.Unreplayable)
	}
	k := &Kernel{sig: sig, bytes: sig.Memory.Bytes}
	switch sig.Class {
	case signatures.ClassMemset:
	case signatures.ClassMemcpy:
		k.kind = sig.Memory.Kind
		switch k.kind {
		case signatures.HtoD, signatures.DtoH, signatures.DtoD:
		default:
			return nil, fmt.Errorf("memcpy kind %q is not replayed", k.kind)
		}
	default:
		return nil, fmt.Errorf("%s: class %s: %w", sig.ID, sig.Class, ErrNotMemoryOp)
	}
	sets := max(opt.Sets, 1)
	if need := int64(sets) * k.Footprint(); opt.FreeBytes > 0 && need > opt.FreeBytes {
		return nil, fmt.Errorf("needs %d bytes of device memory, %d available", need, opt.FreeBytes)
	}
	n := int(max(k.bytes, 1)) // a zero-byte op still gets a valid pointer
	for i := 0; i < sets; i++ {
		var m memSet
		var err error
		if m.dev, err = cuda.MemAlloc(n); err != nil {
			k.Close()
			return nil, err
		}
		k.sets = append(k.sets, m)
		last := &k.sets[len(k.sets)-1]
		if err := launch.FillRandom(m.dev, int64(n), "bytes", opt.Seed+uint64(i), s); err != nil {
			k.Close()
			return nil, err
		}
		switch {
		case k.kind == signatures.DtoD:
			if last.dev2, err = cuda.MemAlloc(n); err != nil {
				k.Close()
				return nil, err
			}
		case k.kind != "":
			if sig.Memory.Host == "pageable" {
				last.host, err = cuda.PageableAlloc(n)
			} else {
				last.host, err = cuda.HostAlloc(n)
			}
			if err != nil {
				k.Close()
				return nil, err
			}
			b := last.host.Bytes()
			for j := range b {
				b[j] = byte(j*131 + i + 1)
			}
		}
	}
	return k, nil
}

// Launch enqueues the copy or memset on s.
func (k *Kernel) Launch(s *gpu.Stream, set int) error {
	m := k.sets[set]
	n := int(k.bytes)
	switch k.kind {
	case "":
		return cuda.MemsetD8Async(m.dev, 0x5a, n, s)
	case signatures.HtoD:
		return cuda.MemcpyHtoDAsync(m.dev, m.host.Ptr(), n, s)
	case signatures.DtoH:
		return cuda.MemcpyDtoHAsync(m.host.Ptr(), m.dev, n, s)
	default:
		return cuda.MemcpyDtoDAsync(m.dev2, m.dev, n, s)
	}
}

// Sets returns the number of buffer sets.
func (k *Kernel) Sets() int { return len(k.sets) }

// Footprint is the device memory one invocation touches.
func (k *Kernel) Footprint() int64 {
	if k.kind == signatures.DtoD {
		return 2 * k.bytes
	}
	return k.bytes
}

// Work counts device bytes read plus written.
func (k *Kernel) Work() gpu.Work { return gpu.Work{Bytes: k.Footprint()} }

// Capturable is false for copies from or to pageable host memory, which
// CUDA graphs cannot hold.
func (k *Kernel) Capturable() bool {
	return k.kind == "" || k.kind == signatures.DtoD || k.sig.Memory.Host != "pageable"
}

// Streamed is true: frameworks issue memory operations directly on a
// stream (gpu.Streamed).
func (k *Kernel) Streamed() bool { return true }

// Pace is pace for a memset and for a copy to the host (gpu.Paced): a
// framework issues its memsets after other work, not queued behind one
// another, and waits for what it copies to the host (tensor.item(),
// .cpu()) before it goes on. Other copies are not paced.
func (k *Kernel) Pace() time.Duration {
	if k.kind == "" || k.kind == signatures.DtoH {
		return pace
	}
	return 0
}

// Close frees the buffers.
func (k *Kernel) Close() error {
	var errs []error
	for _, m := range k.sets {
		if m.dev != 0 {
			errs = append(errs, m.dev.Free())
		}
		if m.dev2 != 0 {
			errs = append(errs, m.dev2.Free())
		}
		if m.host != nil {
			errs = append(errs, m.host.Free())
		}
	}
	k.sets = nil
	return errors.Join(errs...)
}
