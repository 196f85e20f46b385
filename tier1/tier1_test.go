package tier1

import (
	"testing"

	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

// Memsets and copies to the host are paced, other copies are not; all
// are streamed.
func TestPace(t *testing.T) {
	for _, c := range []struct {
		kind   signatures.CopyKind
		paced  bool
		stream bool
	}{
		{"", true, true},
		{signatures.DtoD, false, true},
		{signatures.HtoD, false, true},
		{signatures.DtoH, true, true},
	} {
		k := &Kernel{kind: c.kind, sig: &signatures.Signature{Memory: &signatures.MemoryOp{Host: "pinned"}}}
		if got := launch.PaceOf(k) > 0; got != c.paced {
			t.Errorf("kind %q: paced %v, want %v", c.kind, got, c.paced)
		}
		if got := launch.IsStreamed(k); got != c.stream {
			t.Errorf("kind %q: streamed %v, want %v", c.kind, got, c.stream)
		}
	}
}
