package tier3

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

// GPU tests of the faithful replay: the embedded traces' signatures, with
// their real kernel names and launch shapes, replayed with PyTorch's
// strategy and checked against the float64 references.

// ptGPUMaxNumel bounds the traced cases checked element by element.
const ptGPUMaxNumel = 1 << 23

// ptTracedByKind returns the traced signatures of the elementwise family
// whose kernel is recognised, one per label and strategy.
func ptTracedByKind(t *testing.T, kinds ...ptKind) []*signatures.Signature {
	seen := map[string]bool{}
	var out []*signatures.Signature
	for _, s := range ewTracedSigs(t) {
		p := (Config{}).ptParse(s)
		key := s.Op + " " + s.Label + " " + p.strategy()
		if !slices.Contains(kinds, p.kind) || seen[key] {
			continue
		}
		if s.Tensor != nil && s.Tensor.Numel > ptGPUMaxNumel {
			continue
		}
		seen[key] = true
		out = append(out, s)
	}
	if len(out) == 0 {
		t.Fatalf("no traced signature of kinds %v", kinds)
	}
	return out
}

// TestGPUFaithfulElementwise replays the traced elementwise ops, copies
// and fills (generic, vectorized and unrolled kernels) and checks every
// element.
func TestGPUFaithfulElementwise(t *testing.T) {
	sub := gputest.NewSubtests(t)
	sigs := ptTracedByKind(t, ptGeneric, ptVectorized, ptUnrolled)
	for i, sig := range sigs {
		p := (Config{}).ptParse(sig)
		sub.Run(fmt.Sprintf("%s %s %s", sig.Op, sig.Label, p.strategy()), func(t *testing.T) {
			ewGPUReplay(t, sig, ewAnalyzeOp, uint64(7000+i), func(pl *ewOpPlan, inst *Instance, before [][]float64, s *cuda.Stream) {
				if inst.Strategy != p.strategy() {
					t.Errorf("strategy %q, want %q", inst.Strategy, p.strategy())
				}
				ewCheckPlan(t, pl, inst, before, s)
			})
		})
	}
}

// TestGPUFaithfulCat replays the traced cats with CatArrayBatchedCopy's
// loop and the traced launch shape, and checks every element.
func TestGPUFaithfulCat(t *testing.T) {
	sub := gputest.NewSubtests(t)
	for i, sig := range ptTracedByKind(t, ptCat) {
		sub.Run(sig.Label, func(t *testing.T) {
			ewGPUReplay(t, sig, ewAnalyzeCat, uint64(8000+i), func(pl *ewCatPlan, inst *Instance, before [][]float64, s *cuda.Stream) {
				if inst.Strategy != ptCat.String() {
					t.Errorf("strategy %q, want %q", inst.Strategy, ptCat.String())
				}
				checkCat(t, download(t, inst.Outputs[0], s), pl.shape, pl.dim, inst.Inputs, before)
			})
		})
	}
}

// TestGPUFaithfulArange replays the traced aranges with their launch
// shape.
func TestGPUFaithfulArange(t *testing.T) {
	sub := gputest.NewSubtests(t)
	for i, sig := range ptTracedByKind(t, ptIndexed) {
		sub.Run(sig.Label, func(t *testing.T) {
			ewGPUReplay(t, sig, ewAnalyzeArange, uint64(9000+i), func(a *ewArange, inst *Instance, _ [][]float64, s *cuda.Stream) {
				if got := inst.Strategy; got != ptIndexed.String() {
					t.Errorf("strategy %q", got)
				}
				ewCheckArange(t, a, download(t, inst.Outputs[0], s))
			})
		})
	}
}

// TestGPUDynCopyTimes logs, for the traced copies between dtypes that
// PyTorch ran as unrolled_elementwise_kernel with LoadWithCast, the time
// of kr_ew_pt_dyncopy with its switches inlined (the default, as PyTorch
// inlines fetch_and_cast) and as calls, beside the traced median. No
// thresholds: the data behind the default (correctness is checked by
// TestGPUFaithfulElementwise).
func TestGPUDynCopyTimes(t *testing.T) {
	sub := gputest.NewSubtests(t)
	for _, sig := range ptTracedByKind(t, ptUnrolled) {
		p := (Config{}).ptParse(sig)
		if p.dyn == "" || sig.Tensor == nil || sig.Tensor.Numel < 1<<16 {
			continue
		}
		sub.Run(sig.Label, func(t *testing.T) {
			gpuEnv(t, func(dev Device, s *cuda.Stream) {
				defer func(c bool) { ptDynCall = c }(ptDynCall)
				var us [2]float64
				for i, call := range []bool{false, true} {
					ptDynCall = call
					k, err := New(sig, dev, launch.Options{Sets: 1, Seed: 5}, s)
					if err != nil {
						t.Fatal(err)
					}
					if got := k.Instance(0).Strategy; got != p.strategy() {
						t.Errorf("strategy %q, want %q", got, p.strategy())
					}
					inst := k.Instance(0)
					var bytes int64
					for _, x := range append(slices.Clone(inst.Inputs), inst.Outputs...) {
						bytes += x.Bytes()
					}
					op, _ := ewBandwidth(t, s, k, bytes)
					us[i] = float64(bytes) / op / 1e3
					k.Close()
				}
				t.Logf("%s %s: inlined %.2f µs (x%.2f), calls %.2f µs (x%.2f), traced %.2f µs", sig.ID, p.strategy(),
					us[0], us[0]*1e3/float64(sig.TracedNS.Median), us[1], us[1]*1e3/float64(sig.TracedNS.Median), float64(sig.TracedNS.Median)/1e3)
			})
		})
	}
}
