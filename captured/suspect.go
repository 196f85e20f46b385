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

// suspects returns the indexes in l.Ptrs of the recorded pointers that
// are likely not pointers: packed small fields whose stale padding bytes
// made the 8-byte word fall into a device allocation of the capturing
// process (the recorder asks the driver about every aligned word of the
// parameters). Such a word has an odd value, where no element wider than
// a byte lies, and is the launch's only pointer into its allocation: no
// other parameter or inner pointer shares it.
//
// Re-pointing such a word into a replay buffer rewrites its data bytes.
// PyTorch's dynamic-cast elementwise kernel (gpu_kernel_impl's legacy
// lambda, as in mul i64[8,128] bool[]) keeps its functor byte, its three
// ScalarType bytes and four stale bytes in one word, recorded as
// 0x000000040b040403: re-pointed, a dtype byte becomes an address byte
// and fetch_and_cast asserts (DynamicCast.h), which loses the CUDA
// context. A byte tensor's view at an odd offset, the only tensor of its
// allocation, would also be taken for one: it is then left pointing into
// the capturing process's memory.
func suspects(l *inject.Launch) []int {
	var out []int
	for i, p := range l.Ptrs {
		if p.Value%2 == 1 && alone(l, i) {
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

// suspectText says why pointer i of l is kept as recorded.
func suspectText(l *inject.Launch, i int) string {
	p := l.Ptrs[i]
	return fmt.Sprintf("parameter word at %d (%#x) is odd and the launch's only pointer into [%#x, +%d): packed fields, not an address",
		p.Off, p.Value, p.Base, p.Range)
}

// suspectSet is suspects(l) as a set, nil when there are none.
func suspectSet(l *inject.Launch) map[int]bool {
	var set map[int]bool
	for _, i := range suspects(l) {
		if set == nil {
			set = map[int]bool{}
		}
		set[i] = true
	}
	return set
}

// checkRestorable is nil unless l has suspect words: then it names the
// first, wrapping ErrNotRestorable.
func checkRestorable(l *inject.Launch) error {
	s := suspects(l)
	if len(s) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrNotRestorable, suspectText(l, s[0]))
}
