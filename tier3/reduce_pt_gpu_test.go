package tier3

import (
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/signatures"
)

// TestGPUReduceFaithful replays reductions with PyTorch's reduce_kernel
// strategy (reduce_pt.go): the traced Llama mean with its traced launch,
// and launches that take the kernel's other paths (rows of threads
// splitting an output, scalar loads, blocks wider than a warp), and
// checks every output against the float64 reference.
func TestGPUReduceFaithful(t *testing.T) {
	sub := gputest.NewSubtests(t)
	type c struct {
		name        string
		sig         *signatures.Signature
		grid, block [3]int64
		strategy    string
	}
	var cases []c
	for _, sig := range rdPTTracedSigs(t) {
		if sig.Label == "mean f32[4,512,4096]" {
			cases = append(cases, c{"traced " + sig.Label, sig, sig.Launch.Grid, sig.Launch.Block, "reduce_kernel<512,1> vec 4"})
			break
		}
	}
	if len(cases) == 0 {
		t.Fatal("no traced Llama mean")
	}
	syn := func(name, op string, grid, block [3]int64, strategy string, ins ...rdIn) {
		sig := rdSig(t, op, ins...)
		sig.Kernel = strings.Replace(rdPTMeanKernel, "MeanOps", "SumOps", 2)
		sig.Launch = &signatures.Launch{Grid: grid, Block: block}
		cases = append(cases, c{name, sig, grid, block, strategy})
	}
	syn("sum f16 rows split", "aten::sum", [3]int64{64, 1, 1}, [3]int64{32, 16, 1}, "reduce_kernel<512,1> vec 4 split-y",
		rdT("c10::Half", 64, 65536), rdL("[-1]"), rdS("False"), rdNone())
	syn("mean f32 short rows scalar", "aten::mean", [3]int64{1250, 1, 1}, [3]int64{32, 16, 1}, "reduce_kernel<512,1> vec 1",
		rdT("float", 20000, 100), rdL("[-1]"), rdS("True"), rdNone())
	syn("sum bf16 wide block", "aten::sum", [3]int64{256, 1, 1}, [3]int64{64, 8, 1}, "reduce_kernel<512,1> vec 4",
		rdT("c10::BFloat16", 2048, 1032), rdL("[-1]"), rdS("False"), rdNone())
	syn("sum f16 wide split", "aten::sum", [3]int64{300, 1, 1}, [3]int64{128, 4, 1}, "reduce_kernel<512,1> vec 4 split-y",
		rdT("c10::Half", 300, 4000), rdL("[-1]"), rdS("False"), rdNone())
	for i, cs := range cases {
		sub.Run(strings.ReplaceAll(cs.name, " ", "_"), func(t *testing.T) {
			launchFaithful(t, cs.sig, uint64(5000+13*i), parseReduce, func(t *testing.T, got string) {
				if got != cs.strategy {
					t.Fatalf("strategy %q, want %q", got, cs.strategy)
				}
			}, checkReduce)
		})
	}
}
