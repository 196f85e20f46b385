package tier3

import (
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/launch"
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
			gpuEnv(t, func(dev Device, s *cuda.Stream) {
				spec, err := parseLayerNorm(cs.sig)
				if err != nil {
					t.Fatal(err)
				}
				k, err := New(cs.sig, dev, launch.Options{Sets: 1, Seed: uint64(6000 + 11*i)}, s)
				if err != nil {
					t.Fatal(err)
				}
				defer k.Close()
				inst := k.Instance(0)
				if !strings.HasPrefix(inst.Strategy, "vectorized_layer_norm<") {
					t.Fatalf("strategy %q", inst.Strategy)
				}
				if err := k.Launch(s, 0); err != nil {
					t.Fatal(err)
				}
				if err := s.Synchronize(); err != nil {
					t.Fatal(err)
				}
				x := download(t, inst.Inputs[0], s)
				var w, b []float64
				next := 1
				if spec.hasW {
					w = download(t, inst.Inputs[next], s)
					next++
				}
				if spec.hasB {
					b = download(t, inst.Inputs[next], s)
				}
				y, mean, rstd := inst.Outputs[0], inst.Outputs[1], inst.Outputs[2]
				wy, wm, wr := refLayerNorm(x, spec.n, w, b, spec.eps)
				checkClose(t, cs.name+" y", download(t, y, s), wy, y.DType)
				checkClose(t, cs.name+" mean", download(t, mean, s), wm, "f32")
				checkClose(t, cs.name+" rstd", download(t, rstd, s), wr, "f32")
			})
		})
	}
}
