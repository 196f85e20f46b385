package inject

import "fmt"

// Producer is the launch recorded just before one of a captured launch's
// calls, which wrote memory the captured launch then read: run before
// each launch in the primed cache mode, it leaves the captured kernel's
// inputs just written, in the L2, as in the real run, whatever the
// kernels are (a norm after a GEMM, a GEMM after a norm, a decode step's
// small kernels one after another).
type Producer struct {
	// Launch is the producer's recorded launch.
	Launch *Launch `json:"launch"`
	// Alias lists the producer's pointers that pointed into the
	// consumer's memory at capture: {producer pointer, consumer pointer,
	// byte distance from the consumer pointer's value}, indexes into
	// each launch's Ptrs.
	Alias [][3]int64 `json:"alias"`
	// Context marks a launch that ran just before the captured one
	// whether or not it shared its memory (the context cache mode runs
	// these): what it wrote is in the L2, dirty, when the captured
	// kernel starts. Its Alias may be empty.
	Context bool `json:"context,omitempty"`
}

// Check reports whether p fits the consumer launch c.
func (p *Producer) Check(c *Launch) error {
	if p.Launch == nil || len(p.Alias) == 0 && !p.Context {
		return fmt.Errorf("producer without a launch or without shared memory")
	}
	for _, a := range p.Alias {
		if a[0] < 0 || a[0] >= int64(len(p.Launch.Ptrs)) || a[1] < 0 || a[1] >= int64(len(c.Ptrs)) {
			return fmt.Errorf("producer alias %v outside the launches' pointers", a)
		}
	}
	return nil
}

// allocBlock is the PyTorch caching allocator's block granularity
// (kMinBlockSize): every tensor's storage starts on a multiple of it and
// spans whole multiples, so two pointers less than a block apart, the
// lower one on a block boundary, point into the same storage.
const allocBlock = 512

// FindAlias returns the producer's pointers that point into the memory of
// one of the consumer's pointers, at one pair of calls (pp and cp are the
// pointer values of the producer's and the consumer's calls, in the order
// of each launch's Ptrs): the producer's output that the consumer reads,
// as PyTorch passes a tensor from one kernel to the next, or its input
// that the consumer reads too. Each alias is {producer pointer, consumer
// pointer, producer value minus consumer value}: 0 for the same address,
// or within one allocator block (allocBlock) for a view into the same
// storage (rotate_half's x[..., 32:] of the q that the rotary multiply
// read). Pointers into the same allocation elsewhere are left out: where
// a tensor lies in its allocation differs from call to call, and a
// producer pointed near a buffer's end could write past it.
func FindAlias(prod *Launch, pp []uint64, cons *Launch, cp []uint64) [][3]int64 {
	if len(pp) != len(prod.Ptrs) || len(cp) != len(cons.Ptrs) {
		return nil
	}
	var out [][3]int64
	for i, v := range pp {
		best, bestD := -1, int64(0)
		for k, cv := range cp {
			d := int64(v - cv)
			if !sameStorage(v, cv) {
				continue
			}
			if best < 0 || abs(d) < abs(bestD) {
				best, bestD = k, d
			}
			if d == 0 {
				break
			}
		}
		if best >= 0 {
			out = append(out, [3]int64{int64(i), int64(best), bestD})
		}
	}
	return out
}

// sameStorage reports whether two pointer values lie in one allocator
// block: equal, or less than allocBlock apart with the lower on a block
// boundary.
func sameStorage(a, b uint64) bool {
	lo, hi := min(a, b), max(a, b)
	return hi == lo || hi-lo < allocBlock && lo%allocBlock == 0
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
