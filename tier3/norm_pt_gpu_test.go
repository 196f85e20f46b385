package tier3

import (
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/signatures"
)

// TestGPULayerNormFaithful replays the traced vectorized layer norms with
// PyTorch's strategy and traced launch, plus a weight-only and a no-affine
// variant, and checks y, mean and rstd against the float64 reference.
func TestGPULayerNormFaithful(t *testing.T) {
	sub := gputest.NewSubtests(t)
	type c struct {
		name string
		sig  *signatures.Signature
	}
	var cases []c
	seen := map[string]bool{}
	for _, sig := range lnPTTracedSigs(t) {
		if !seen[sig.Label] {
			seen[sig.Label] = true
			cases = append(cases, c{"traced " + sig.Label, sig})
		}
	}
	kernel := cases[0].sig.Kernel
	syn := func(name string, grid, by int64, ins ...rdIn) {
		sig := rdSig(t, "aten::native_layer_norm", ins...)
		sig.Kernel = kernel
		sig.Launch = &signatures.Launch{Grid: [3]int64{grid, 1, 1}, Block: [3]int64{32, by, 1}, SharedMem: by * 3 / 2 * 4}
		cases = append(cases, c{name, sig})
	}
	syn("f32 weight only 8 warps", 64, 8, rdT("float", 64, 4096), rdL("[4096]"), rdT("float", 4096), rdNone(), rdS("1e-05"))
	syn("bf16 no affine one warp", 100, 1, rdT("c10::BFloat16", 100, 768), rdL("[768]"), rdNone(), rdNone(), rdS("1e-06"))
	for i, cs := range cases {
		sub.Run(strings.ReplaceAll(cs.name, " ", "_"), func(t *testing.T) {
			launchFaithful(t, cs.sig, uint64(6000+11*i), parseLayerNorm, func(t *testing.T, got string) {
				if !strings.HasPrefix(got, "vectorized_layer_norm<") {
					t.Fatalf("strategy %q", got)
				}
			}, func(t *testing.T, spec *lnSpec, inst *Instance, s *cuda.Stream) {
				checkLayerNorm(t, cs.name, spec, inst, s)
			})
		})
	}
}
