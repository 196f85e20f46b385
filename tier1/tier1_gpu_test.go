package tier1

import (
	"bytes"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/cuda/cudatest"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

// A copy's sets share one host buffer, as a framework's caching host
// allocator hands back one block, and each set's copy still moves its own
// device buffer's bytes: to the host into that buffer, or from it.
func TestGPUCopiesShareHostBuffer(t *testing.T) {
	_, ctx := cudatest.PrimaryContext(t)
	for _, c := range []struct {
		kind signatures.CopyKind
		host string
	}{{signatures.DtoH, "pinned"}, {signatures.HtoD, "pinned"}, {signatures.DtoH, "pageable"}} {
		sig := &signatures.Signature{ID: "t", Tier: signatures.TierMemory, Class: signatures.ClassMemcpy,
			Memory: &signatures.MemoryOp{Kind: c.kind, Bytes: 64, Host: c.host}}
		if err := ctx.Do(func() error {
			s, err := cuda.NewStream()
			if err != nil {
				return err
			}
			defer s.Destroy()
			k, err := New(sig, launch.Options{Sets: 4, Seed: 7}, s)
			if err != nil {
				return err
			}
			defer k.Close()
			if k.Sets() != 4 || k.host == nil || k.host.Pinned() != (c.host == "pinned") {
				t.Errorf("%s %s: %d sets, host buffer %v; want 4 sets, one %s host buffer", c.kind, c.host, k.Sets(), k.host, c.host)
			}
			for set := range k.Sets() {
				if err := k.Launch(s, set); err != nil {
					return err
				}
				dev := make([]byte, 64)
				if err := cuda.CopyDtoH(dev, k.sets[set].dev, s); err != nil {
					return err
				}
				if !bytes.Equal(dev, k.host.Bytes()) {
					t.Errorf("%s %s: set %d: device %x, host %x after the copy", c.kind, c.host, set, dev[:8], k.host.Bytes()[:8])
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}
