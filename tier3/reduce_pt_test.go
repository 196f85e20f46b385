package tier3

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/signatures"
)

// rdPTMeanKernel is the Llama-7B prefill trace's mean (RMSNorm) kernel.
const rdPTMeanKernel = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4, 4>)"

// rdPTTracedSigs returns the embedded traces' reductions that ran
// PyTorch's reduce_kernel.
func rdPTTracedSigs(t testing.TB) []*signatures.Signature {
	t.Helper()
	return tracedTier3(t, func(s *signatures.Signature) bool { return strings.Contains(s.Kernel, "reduce_kernel<") })
}

// TestRdPTParse reads reduce_kernel's template arguments from kernel
// names as the profiler records them.
func TestRdPTParse(t *testing.T) {
	l := &signatures.Launch{Grid: [3]int64{128, 1, 1}, Block: [3]int64{32, 16, 1}}
	for _, c := range []struct {
		kernel string
		want   string
	}{
		{rdPTMeanKernel, "512 1 4 4"},
		{"void at::native::reduce_kernel<128, 4, at::native::ReduceOp<bool, at::native::func_wrapper_t<bool, at::native::or_kernel_cuda(at::TensorIterator&)::{lambda()#1}::operator()() const::{lambda()#12}::operator()() const::{lambda(bool, bool)#1}>, unsigned int, bool, 4, 4> >(...)", "128 4 4 4"},
		{"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4, 2> >(...)", "512 1 4 2"},
		{"void at::native::reduce_kernel<512, 1, foo>(foo)", "none"},
		{"void at::native::vectorized_elementwise_kernel<8, foo>(int, foo)", "none"},
	} {
		k, ok := (Config{}).rdPTParse(&signatures.Signature{Kernel: c.kernel, Launch: l})
		got := "none"
		if ok {
			got = fmt.Sprint(k.nt, k.outVec, k.vt0, k.inVec)
		}
		if got != c.want {
			t.Errorf("%.70s: %s, want %s", c.kernel, got, c.want)
		}
	}
	if _, ok := (Config{NoFaithful: true}).rdPTParse(&signatures.Signature{Kernel: rdPTMeanKernel, Launch: l}); ok {
		t.Error("parsed with Faithful off")
	}
}

// TestRdPTPlan checks the faithful plans: the traced Llama mean takes
// PyTorch's launch with 4-float loads and a warp per output, and the
// strategies the kernel does not do are left to kreplay's.
func TestRdPTPlan(t *testing.T) {
	k := func(grid, bx, by int64) rdPTKernel {
		return rdPTKernel{nt: 512, outVec: 1, vt0: 4, inVec: 4, grid: [3]int64{grid, 1, 1}, block: [3]int64{bx, by, 1}}
	}
	mean := &reduceSpec{op: rdSum, mean: true, dims: []int{2}, keepdim: true, in: "f32", out: "f32"}
	sum1 := &reduceSpec{op: rdSum, dims: []int{1}, in: "f16", out: "f16"}
	sum0 := &reduceSpec{op: rdSum, dims: []int{0}, in: "f32", out: "f32"}
	anyS := &reduceSpec{op: rdAny, dims: []int{1}, in: "bool", out: "bool"}
	for _, c := range []struct {
		name    string
		k       rdPTKernel
		s       *reduceSpec
		shape   []int64
		strides []int64
		want    string
	}{
		{"llama mean", k(128, 32, 16), mean, []int64{4, 512, 4096}, nil, "reduce_kernel<512,1> vec 4 grid 128 shared 0"},
		{"split rows", k(64, 32, 16), sum1, []int64{64, 65536}, nil, "reduce_kernel<512,1> vec 4 split-y grid 64 shared 2048"},
		{"short rows scalar", k(1250, 32, 16), sum1, []int64{20000, 64}, nil, "reduce_kernel<512,1> vec 1 grid 1250 shared 0"},
		{"wide block", k(256, 64, 8), sum1, []int64{2048, 1024}, nil, "reduce_kernel<512,1> vec 4 grid 256 shared 2048"},
		{"misaligned rows", k(16, 32, 16), sum1, []int64{256, 301}, nil, "none"},
		{"outer dim", k(128, 32, 16), sum0, []int64{4096, 2048}, nil, "none"},
		{"non-contiguous", k(128, 32, 16), sum1, []int64{2048, 4096}, []int64{1, 2048}, "none"},
		{"grid disagrees", k(100, 32, 16), sum1, []int64{2048, 4096}, nil, "none"},
		{"global reduce", rdPTKernel{nt: 512, outVec: 1, vt0: 4, inVec: 4, grid: [3]int64{1, 31, 1}, block: [3]int64{512, 1, 1}}, sum1, []int64{1, 250880}, nil, "none"},
		{"any", k(128, 32, 16), anyS, []int64{2048, 4096}, nil, "none"},
	} {
		st := stridesOr(c.shape, c.strides)
		got := "none"
		if p, ok := rdPTMake(c.k, c.s, c.shape, st); ok {
			got = fmt.Sprintf("%s grid %d shared %d", p.strategy, p.grid[0], p.shared)
		}
		if got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestRdPTTraced checks that the traced Llama mean takes the faithful
// path with its traced launch.
func TestRdPTTraced(t *testing.T) {
	found := false
	for _, sig := range rdPTTracedSigs(t) {
		k, ok := (Config{}).rdPTParse(sig)
		if !ok {
			t.Errorf("%s: not parsed: %.100s", sig.Label, sig.Kernel)
			continue
		}
		s, err := parseReduce(sig)
		if err != nil {
			t.Logf("%s: %v", sig.Label, err)
			continue
		}
		x := sig.Inputs[0]
		st := x.Strides
		if len(st) != len(x.Shape) {
			st = ContiguousStrides(x.Shape)
		}
		p, ok := rdPTMake(k, s, x.Shape, st)
		t.Logf("%s grid %v block %v: faithful %v", sig.Label, k.grid, k.block, ok)
		if sig.Label == "mean f32[4,512,4096]" {
			found = true
			if !ok || p.strategy != "reduce_kernel<512,1> vec 4" || p.grid != [3]uint32{128, 1, 1} || p.block != [3]uint32{32, 16, 1} {
				t.Errorf("llama mean: %+v %v", p, ok)
			}
		}
	}
	if !found {
		t.Error("the Llama mean signature is not in the embedded traces")
	}
}

// TestRdPTCompile compiles the faithful reduce kernel's variants with
// NVRTC (no GPU needed) and checks that none keeps a stack frame.
func TestRdPTCompile(t *testing.T) {
	checkNoStackFrame(t, nvrtcArch(t), "reduce_pt.cu", reducePTSource, "kr_reduce_pt", []map[string]string{
		{"RP_IN": "EW_F32", "RP_OUT": "EW_F32", "RP_VEC": "4", "RP_VT0": "4", "RP_SPLIT_Y": "0"},
		{"RP_IN": "EW_F16", "RP_OUT": "EW_F16", "RP_VEC": "4", "RP_VT0": "4", "RP_SPLIT_Y": "1"},
		{"RP_IN": "EW_BF16", "RP_OUT": "EW_F32", "RP_VEC": "1", "RP_VT0": "4", "RP_SPLIT_Y": "0"},
	})
}
