package tier3

import (
	"bytes"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

// Prime rewrites inputs with their own values: every byte of every input
// is the same after it, whatever the tensor's size, alignment and dtype,
// and the op still runs after it.
func TestGPUPrimeKeepsInputs(t *testing.T) {
	sub := gputest.NewSubtests(t)
	sigs := []*signatures.Signature{
		// Two odd-sized f16 inputs (neither a multiple of 16 bytes).
		opSig(t, "aten::add", `[[3,5,7],[3,5,7],[]]`, `[[35,7,1],[35,7,1],[]]`, `["c10::Half","c10::Half","Scalar"]`, `["","","1"]`),
	}
	// Traced ones: a bool mask with a scalar and an f32 row, a broadcast
	// f16 add, int64 indices, and the largest tier-3 input of the traces
	// (Llama-7B's mean over f32[4,512,4096], 32 MiB: more than one
	// kr_touch grid-stride pass).
	for _, label := range []string{
		"where bool[250880] f32[] f32[1,250880]",
		"add f16[4,16,512,512] f16[4,1,512,512]",
		"eq i64[250880,1] i64[1,1]",
		"mean f32[4,512,4096]",
	} {
		found := tracedTier3(t, func(s *signatures.Signature) bool { return s.Label == label })
		if len(found) == 0 {
			t.Fatalf("no traced signature %q", label)
		}
		sigs = append(sigs, found[0])
	}
	for _, sig := range sigs {
		sub.Run(sig.Label, func(t *testing.T) {
			gpuEnv(t, func(dev Device, s *cuda.Stream) {
				k, err := New(sig, dev, launch.Options{Sets: 1, Seed: 9}, s)
				if err != nil {
					t.Fatal(err)
				}
				defer k.Close()
				if k.Approximate() != "" {
					t.Fatalf("approximate: %s", k.Approximate())
				}
				in := k.Instance(0).Inputs
				var before [][]byte
				for _, x := range in {
					b := make([]byte, x.Bytes())
					if err := cuda.CopyDtoH(b, x.Ptr, s); err != nil {
						t.Fatal(err)
					}
					before = append(before, b)
				}
				for i := 0; i < 3; i++ {
					if err := k.Prime(s, 0); err != nil {
						t.Fatal(err)
					}
					if err := k.Launch(s, 0); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.Synchronize(); err != nil {
					t.Fatal(err)
				}
				for i, x := range in {
					b := make([]byte, x.Bytes())
					if err := cuda.CopyDtoH(b, x.Ptr, s); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(b, before[i]) {
						t.Errorf("input %d (%d bytes) changed by Prime", i, len(b))
					}
				}
			})
		})
	}
}
