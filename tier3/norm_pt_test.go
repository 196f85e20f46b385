package tier3

import (
	"slices"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/signatures"
)

// lnPTTracedSigs returns the embedded traces' layer norms that ran
// PyTorch's vectorized_layer_norm_kernel.
func lnPTTracedSigs(t testing.TB) []*signatures.Signature {
	t.Helper()
	return tracedTier3(t, func(s *signatures.Signature) bool {
		return strings.Contains(s.Kernel, "vectorized_layer_norm_kernel<")
	})
}

// TestLnPTTraced checks that every traced vectorized layer norm takes the
// faithful path with its traced launch, and that other kernels or layouts
// do not.
func TestLnPTTraced(t *testing.T) {
	sigs := lnPTTracedSigs(t)
	if len(sigs) == 0 {
		t.Fatal("no traced vectorized_layer_norm_kernel")
	}
	for _, sig := range sigs {
		s, err := parseLayerNorm(sig)
		if err != nil {
			t.Fatalf("%s: %v", sig.Label, err)
		}
		x := sig.Inputs[0]
		p, ok := (Config{}).lnPTMake(sig, s, x.Shape, x.Strides)
		if !ok {
			t.Errorf("%s: not faithful (grid %v block %v)", sig.Label, sig.Launch.Grid, sig.Launch.Block)
			continue
		}
		if int64(p.grid[0]) != sig.Launch.Grid[0] || int64(p.block[1]) != sig.Launch.Block[1] || p.shared != uint32(sig.Launch.SharedMem) {
			t.Errorf("%s: grid %v block %v shared %d, traced %v %v %d", sig.Label, p.grid, p.block, p.shared,
				sig.Launch.Grid, sig.Launch.Block, sig.Launch.SharedMem)
		}
		// A layout PyTorch would not vectorize, and another kernel.
		st := slices.Clone(x.Strides)
		st[0] *= 2
		if _, ok := (Config{}).lnPTMake(sig, s, x.Shape, st); ok && x.Shape[0] > 1 {
			t.Errorf("%s: faithful over padded rows", sig.Label)
		}
		other := *sig
		other.Kernel = "void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<c10::Half, float>(...)"
		if _, ok := (Config{}).lnPTMake(&other, s, x.Shape, x.Strides); ok {
			t.Errorf("%s: faithful for another kernel", sig.Label)
		}
	}
}

// TestLnPTCompile compiles the faithful layer norm's variants with NVRTC
// (no GPU needed) and checks that none keeps a stack frame.
func TestLnPTCompile(t *testing.T) {
	checkNoStackFrame(t, nvrtcArch(t), "norm_pt.cu", normPTSource, "kr_ln_pt", []map[string]string{
		{"LP_T": "EW_F16", "LP_HAS_W": "1", "LP_HAS_B": "1"},
		{"LP_T": "EW_BF16", "LP_HAS_W": "1", "LP_HAS_B": "0"},
		{"LP_T": "EW_F32", "LP_HAS_W": "0", "LP_HAS_B": "0"},
	})
}
