package captured

import (
	"errors"
	"fmt"

	"github.com/kreplay/kreplay/internal/cuda"
)

// Shared holds device buffers that the kernels New makes with it
// (Options.Shared) share, one per recorded allocation (its base address
// and size): a kernel then reads what the kernels launched before it
// wrote where the capture's did (the recorded data flow), rather than
// buffers of its own. In the real inference a memory-bound kernel reads
// its producer's output from the L2; on buffers of its own it reads them
// from device memory and runs up to twice as long
// (results/h200/l2-dirty/).
//
// The first kernel made with an allocation fills its buffer as New fills
// its own; a later one writes its snapshots' recorded bytes at its
// pointers and finds the rest as the kernels before it left it, so that
// an input no replayed kernel produces (a token's ids, copied from the
// host) holds what was recorded. A kernel's restores (steering data of at
// most 2 KiB that it changes, such as a persistent GEMM's tile counters)
// are still written before each of its launches, over whatever another
// kernel wrote there. A buffer stays in the Shared once given, also when
// the kernel it was made for fails to build. A Shared is used inside one
// CUDA context; Close frees its buffers once the kernels that share them
// are closed.
type Shared struct {
	bufs  map[sharedKey]cuda.DevicePtr
	bytes int64
}

type sharedKey struct {
	base uint64
	size int64
}

// NewShared returns an empty Shared.
func NewShared() *Shared { return &Shared{bufs: map[sharedKey]cuda.DevicePtr{}} }

// buffer returns the buffer of the allocation at base of size bytes,
// allocating it on first use (fresh).
func (s *Shared) buffer(base uint64, size int64) (buf cuda.DevicePtr, fresh bool, err error) {
	k := sharedKey{base, size}
	if b, ok := s.bufs[k]; ok {
		return b, false, nil
	}
	b, err := cuda.MemAlloc(int(max(size, 1)))
	if err != nil {
		return 0, false, fmt.Errorf("shared buffer of the allocation at %#x, %d bytes: %w", base, size, err)
	}
	s.bufs[k] = b
	s.bytes += size
	return b, true, nil
}

// Buffers is the number of allocations s holds a buffer for.
func (s *Shared) Buffers() int { return len(s.bufs) }

// Bytes is the device memory s's buffers take; 0 for a nil Shared.
func (s *Shared) Bytes() int64 {
	if s == nil {
		return 0
	}
	return s.bytes
}

// Close frees s's buffers. Call it inside the context, after closing the
// kernels made with s.
func (s *Shared) Close() error {
	var errs []error
	for k, b := range s.bufs {
		errs = append(errs, b.Free())
		delete(s.bufs, k)
	}
	s.bytes = 0
	return errors.Join(errs...)
}
