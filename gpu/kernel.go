package gpu

import "time"

// Kernel is one signature made launchable: its buffers are allocated and
// filled with random data, and Launch enqueues one invocation.
type Kernel interface {
	// Launch enqueues one invocation on s using buffer set set, where
	// 0 <= set < Sets().
	Launch(s *Stream, set int) error
	// Sets is the number of independent buffer sets allocated, so that
	// successive launches can rotate through more memory than the L2 holds.
	Sets() int
	// Footprint is the device memory one invocation reads and writes, in
	// bytes, for one buffer set.
	Footprint() int64
	// Work is what one invocation does, for throughput figures.
	Work() Work
	// Capturable reports whether Launch may be captured in a CUDA graph
	// (copies to or from pageable host memory may not).
	Capturable() bool
	// Close frees the kernel's device and host resources.
	Close() error
}

// Primer is a Kernel that can leave its inputs in the cache state a real
// forward pass leaves them in: just written by the kernels that produced
// them. Prime is enqueued before each Launch of set in the primed cache
// mode; the activities it runs are named by PrimeKernels and are not the
// signature's.
type Primer interface {
	Kernel
	Prime(s *Stream, set int) error
	PrimeKernels() []string
}

// AuxMemcpy is a Kernel whose Launch also copies memory that is not the
// signature's work (a captured binary restoring the counters it consumes):
// a profiler leaves its copies out of the kernel time.
type AuxMemcpy interface {
	Kernel
	AuxMemcpy() bool
}

// AuxMemset is a Kernel whose Launch also sets memory that the trace
// records as a signature of its own (cuDNN's SDPA plan clears 4 bytes of
// its workspace before its kernel: "Memset 4 B in
// _cudnn_attention_forward"): a replay leaves its memsets out of the
// kernel time, so that the memset is not counted twice.
type AuxMemset interface {
	Kernel
	AuxMemset() bool
}

// Streamed is a Kernel that a framework issues on its stream one call at
// a time, outside any CUDA graph: a CUDA memory operation. Its timed
// batches are direct launches, and its value is the median of single
// invocations, the statistic a trace keeps of each signature: a small
// memset runs slower in a CUDA graph than launched directly, as the trace
// saw it, and its direct launches have a tail that batch means would
// count (see results/h100/capture/README.md).
type Streamed interface {
	Kernel
	Streamed() bool
}

// Paced is a Streamed kernel whose timed invocations must each find the
// GPU idle, as a framework issues it after other work: its replay waits
// Pace on the host after each launch of a timed batch. Queued right
// behind another, small memsets and copies to the host stretch by an
// amount that varies between processes and runs; with a few µs of host
// time between launches their medians are the same in every process and
// match the traces' (see results/h100/memset-pacing/README.md). Memsets
// that a traced run queued shortly after a kernel stretch in part too,
// which a paced replay does not reproduce (signatures/arrival.go).
type Paced interface {
	Streamed
	Pace() time.Duration
}

// PaceOf returns k's Pace, or 0 when k is not a Paced Streamed kernel.
func PaceOf(k Kernel) time.Duration {
	if p, ok := k.(Paced); ok && p.Streamed() {
		return max(p.Pace(), 0)
	}
	return 0
}

// IsStreamed tells whether k is a Streamed kernel that says so.
func IsStreamed(k Kernel) bool {
	s, ok := k.(Streamed)
	return ok && s.Streamed()
}

// Work is what one invocation moves and computes.
type Work struct {
	Bytes int64 // device-memory bytes read plus written
	FLOPs int64 // floating-point operations (0 when not a compute op)
}

// Options tell a tier how to build a Kernel.
type Options struct {
	// Sets is the number of buffer sets to allocate (at least 1).
	Sets int
	// Seed seeds the random input data.
	Seed uint64
	// FreeBytes is the device memory the kernel may use; a signature that
	// needs more fails with an error saying so instead of running the
	// device out of memory.
	FreeBytes int64
}

// SetsFor returns how many buffer sets of footprint bytes rotate through
// more than twice the L2 cache size, capped by maxSets and by the memory
// budget.
func SetsFor(footprint, l2, budget int64, maxSets int) int {
	if footprint <= 0 {
		return 1
	}
	n := int((2*l2)/footprint) + 1
	if budget > 0 {
		n = min(n, int(budget/footprint))
	}
	return max(1, min(n, maxSets))
}
