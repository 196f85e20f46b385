package captured

import (
	"testing"
)

// Footprint, before any kernel is built, is the sizes of the distinct
// allocations a captured launch points into, directly or through its
// buffers' inner pointers, but where only its suspect words point: on
// every signature's launch and context launch of the captured Llama
// prefill.
func TestFootprint(t *testing.T) {
	cb := readCapturedBundle(t)
	if len(cb.sigs) != 24 {
		t.Fatalf("%d signatures with a binary, want 24", len(cb.sigs))
	}
	for _, s := range cb.sigs {
		for _, l := range kernelsOf(s) {
			suspect := map[int]bool{}
			for _, i := range suspects(l, consumerAlign) {
				suspect[i] = true
			}
			sizes := map[uint64]int64{}
			for i, p := range l.Ptrs {
				if !suspect[i] {
					sizes[p.Base] = p.Range
				}
			}
			for _, q := range l.Inner {
				if _, ok := sizes[q.Base]; !ok && !suspect[q.In] {
					sizes[q.Base] = q.Range
				}
			}
			var want int64
			for _, n := range sizes {
				want += n
			}
			if got := Footprint(l); got != want || got <= 0 {
				t.Errorf("%s %s: footprint %d, want %d", s.ID, l.Name, got, want)
			}
		}
	}
}
