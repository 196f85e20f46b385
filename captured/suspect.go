package captured

import (
	"errors"
	"fmt"

	"github.com/kreplay/kreplay/internal/inject"
)

// ErrNotRestorable is wrapped by the error of a producer whose launch the
// replay cannot restore exactly (see suspects); the producer is left out
// of the priming.
var ErrNotRestorable = errors.New("its launch cannot be restored exactly")

// Alignments below which a recorded pointer that is its launch's only
// pointer into its allocation is a suspect (see suspects). A consumer's
// suspect word is kept as recorded, which faults if it was a pointer after
// all: only odd ones are (no element wider than a byte lies there). A
// producer only warms the cache: it is dropped for any such pointer off an
// 8-byte boundary.
const (
	consumerAlign = 2
	producerAlign = 8
)

// suspects returns the indexes in l.Ptrs of the recorded pointers that
// are likely not pointers: packed small fields whose stale padding bytes
// made the 8-byte word fall into a device allocation of the capturing
// process (the recorder asks the driver about every aligned word of the
// parameters). Such a word's value is not a multiple of align, and it is
// the launch's only pointer into its allocation: no other parameter or
// inner pointer shares it.
//
// Re-pointing such a word into a replay buffer rewrites its data bytes.
// PyTorch's dynamic-cast elementwise kernel (gpu_kernel_impl's legacy
// lambda, as in mul i64[8,128] bool[]) keeps its functor byte, its three
// ScalarType bytes and four stale bytes in one word, recorded as
// 0x000000040b040403: re-pointed, a dtype byte becomes an address byte
// and fetch_and_cast asserts (DynamicCast.h), which loses the CUDA
// context. A view off the element size's boundary that is the only tensor
// of its allocation would also be taken for one.
func suspects(l *inject.Launch, align uint64) []int {
	var out []int
	for i, p := range l.Ptrs {
		if p.Value%align != 0 && alone(l, i) {
			out = append(out, i)
		}
	}
	return out
}

// alone reports whether pointer i is the only one of l's parameter and
// inner pointers into its allocation.
func alone(l *inject.Launch, i int) bool {
	base := l.Ptrs[i].Base
	for j, p := range l.Ptrs {
		if j != i && p.Base == base {
			return false
		}
	}
	for _, q := range l.Inner {
		if q.Base == base && q.In != i {
			return false
		}
	}
	return true
}

// suspectText says why pointer i of l is a suspect for align.
func suspectText(l *inject.Launch, i int, align uint64) string {
	p := l.Ptrs[i]
	how := "odd"
	if align > 2 {
		how = fmt.Sprintf("not a multiple of %d", align)
	}
	return fmt.Sprintf("parameter word at %d (%#x) is %s and the launch's only pointer into [%#x, +%d): likely packed fields, not an address",
		p.Off, p.Value, how, p.Base, p.Range)
}

// keepSuspects marks k's suspect words (consumerAlign), which
// groupPointers then leaves out and paramBlob keeps as recorded, and says
// why in k.kept.
func (k *Kernel) keepSuspects() {
	for _, i := range suspects(k.l, consumerAlign) {
		if k.suspect == nil {
			k.suspect = map[int]bool{}
		}
		k.suspect[i] = true
		k.kept = append(k.kept, suspectText(k.l, i, consumerAlign))
	}
}

// checkProducer is nil unless the producer launch l has suspect words
// (producerAlign): then it names the first, wrapping ErrNotRestorable.
func checkProducer(l *inject.Launch) error {
	s := suspects(l, producerAlign)
	if len(s) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrNotRestorable, suspectText(l, s[0], producerAlign))
}
