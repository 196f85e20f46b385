package tier3

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
)

// TestPTParse reads the strategies of kernel names as PyTorch's profiler
// records them.
func TestPTParse(t *testing.T) {
	l := func(g, b int64) *signatures.Launch {
		return &signatures.Launch{Grid: [3]int64{g, 1, 1}, Block: [3]int64{b, 1, 1}}
	}
	for _, c := range []struct {
		kernel string
		launch *signatures.Launch
		want   string
	}{
		{"void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<c10::Half> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<c10::Half> const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<c10::Half> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<c10::Half> const&)::{lambda(int)#1})", l(16384, 128), "generic<128,4>"},
		{"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<...>>(int, ...)", l(10, 128), "generic<128,2>"},
		{"void at::native::elementwise_kernel<128, 4, foo>(int, foo)", l(10, 256), "fast"}, // block disagrees with the name
		{"void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::Half>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::Half>, std::array<char*, 3ul>)", l(8192, 128), "vectorized<8>"},
		{"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<bool>, std::array<char*, 1ul> >(int, at::native::FillFunctor<bool>, std::array<char*, 1ul>)", l(1, 128), "vectorized<4>"},
		{"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, ...)", l(16384, 128), "unrolled-cast<float>"},
		{"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#4}::operator()() const::{lambda(bool)#1}, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, ...)", l(1, 128), "unrolled-cast<bool>"},
		{"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#5}::operator()() const::{lambda(long)#1}, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, ...)", l(4, 128), "unrolled-cast<long long>"},
		{"void at::native::unrolled_elementwise_kernel<at::native::BitwiseAndFunctor<bool>, std::array<char*, 3ul>, 4, TrivialOffsetCalculator<2, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<2>, at::native::memory::StoreWithCast<1> >(int, ...)", l(1, 128), "unrolled"}, // no lambda: no run-time cast replay
		{"void at::native::unrolled_elementwise_kernel<foo::{lambda(float)#1}, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadNoCast, at::native::memory::StoreNoCast >(int, ...)", l(4, 128), "unrolled"},
		{"void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>(...)", &signatures.Launch{Grid: [3]int64{264, 2, 1}, Block: [3]int64{512, 1, 1}}, "cat-strided"},
		{"void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, 128, 1>(...)", &signatures.Launch{Grid: [3]int64{264, 2, 1}, Block: [3]int64{512, 1, 1}}, "cat-batched"},
		{"void at::native::(anonymous namespace)::CatArrayBatchedCopy_alignedK_contig<at::native::(anonymous namespace)::OpaqueType<8u>, unsigned int, 2, 128, 1, 16>(...)", &signatures.Launch{Grid: [3]int64{1, 2, 1}, Block: [3]int64{128, 1, 1}}, "cat-batched"},
		{"void at::native::elementwise_kernel_with_index<int, at::native::arange_cuda_out(...)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(long)#1}>(int, ...)", l(1, 64), "with-index"},
		{"void test_kernel<float>(float*)", l(1, 128), "fast"},
		{"void at::native::vectorized_elementwise_kernel<8, foo>(int, foo)", nil, "fast"},
	} {
		sig := &signatures.Signature{Kernel: c.kernel, Launch: c.launch}
		if got := (Config{}).ptParse(sig).strategy(); got != c.want {
			t.Errorf("%.60s: %s, want %s", c.kernel, got, c.want)
		}
	}
	if got := (Config{NoFaithful: true}).ptParse(&signatures.Signature{Kernel: "void at::native::vectorized_elementwise_kernel<8, foo>(int, foo)", Launch: l(1, 128)}); got.kind != ptNone {
		t.Errorf("Faithful off: %s", got.strategy())
	}
}

// TestPTTracedSignatures checks that the traced signatures' kernels of
// the elementwise family are recognised, and that the faithful launch of
// the vectorized and unrolled ones reproduces the traced grid.
func TestPTTracedSignatures(t *testing.T) {
	kinds := map[ptKind]int{}
	for _, s := range ewTracedSigs(t) {
		p := (Config{}).ptParse(s)
		kinds[p.kind]++
		switch {
		case p.kind == ptNone:
			t.Logf("not recognised: %s %.100s", s.Label, s.Kernel)
		case p.kind == ptVectorized || p.kind == ptUnrolled:
			var n int64
			if s.Tensor != nil {
				n = s.Tensor.Numel
			}
			if n == 0 {
				continue
			}
			if _, grid := ptLinEPT(p, n); grid != p.grid[0] {
				t.Errorf("%s: %s grid %d, traced %d", s.Label, p.strategy(), grid, p.grid[0])
			}
		case p.kind == ptGeneric:
			var n int64
			if s.Tensor != nil {
				n = s.Tensor.Numel
			}
			if need := (n + p.nt*p.vt - 1) / (p.nt * p.vt); n > 0 && need != p.grid[0] {
				t.Logf("%s: %s needs grid %d, traced %d", s.Label, p.strategy(), need, p.grid[0])
			}
		}
	}
	t.Log(kinds)
	for _, k := range []ptKind{ptGeneric, ptVectorized, ptUnrolled, ptCat, ptIndexed} {
		if kinds[k] == 0 {
			t.Errorf("no traced %s kernel", k)
		}
	}
}

// TestEwHostFaithful runs the elementwise cases on the host with each of
// PyTorch's strategies that applies to their layout, against the float64
// reference.
func TestEwHostFaithful(t *testing.T) {
	h := newEwHost(t)
	type c = ewCase
	cases := append(ewHostCases(),
		c{"add contiguous odd", "aten::add", []ewTArg{ewT("c10::Half", ewDims(3, 5, 1001)), ewT("c10::Half", ewDims(3, 5, 1001)), ewS("1")}},
		c{"mul by 0-dim", "aten::mul", []ewTArg{ewT("float", ewDims(7, 999)), {typ: "float"}}},
		c{"add scalar", "aten::add", []ewTArg{ewT("c10::Half", ewDims(2, 4096)), ewS("1"), ewS("1")}},
		c{"fill_ f16", "aten::fill_", []ewTArg{ewT("c10::Half", ewDims(4, 1000)), ewS("2.5")}},
		c{"copy_ f32 to f16 contiguous", "aten::copy_", []ewTArg{ewT("c10::Half", ewDims(8, 1024)), ewT("float", ewDims(8, 1024)), ewS("False")}},
		// Traced vectorized cases the replay once refused: a 0-dim operand
		// wider than the vector's tensors, and fewer elements than a vector.
		c{"mul f16 by f64 0-dim", "aten::mul", []ewTArg{ewT("c10::Half", ewDims(1, 3, 4096)), {typ: "double"}}},
		c{"add f16 i64 0-dim", "aten::add", []ewTArg{ewT("c10::Half", ewDims(1, 1, 1000)), {typ: "long int"}, ewS("1")}},
		c{"add i64 one element", "aten::add", []ewTArg{ewT("long int", ewDims(1)), {typ: "long int"}, ewS("1")}},
		c{"eq i64 [1,1]", "aten::eq", []ewTArg{ewT("long int", ewDims(1, 1)), ewT("long int", ewDims(1, 1))}},
		c{"fill_ bool 0-dim", "aten::fill_", []ewTArg{{typ: "bool"}, ewS("True")}},
		c{"fill_ i64 three", "aten::fill_", []ewTArg{ewT("long int", ewDims(3)), ewS("-2")}},
		// Copies between dtypes as unrolled-cast replays them.
		c{"copy_ f16 to f32 contiguous", "aten::copy_", []ewTArg{ewT("float", ewDims(4, 4096)), ewT("c10::Half", ewDims(4, 4096)), ewS("False")}},
		c{"copy_ bool to i64", "aten::copy_", []ewTArg{ewT("long int", ewDims(1, 46)), ewT("bool", ewDims(1, 46)), ewS("False")}},
		c{"copy_ i64 to bool", "aten::copy_", []ewTArg{ewT("bool", ewDims(4, 512)), ewT("long int", ewDims(4, 512)), ewS("False")}},
		c{"copy_ f32 to i64", "aten::copy_", []ewTArg{ewT("long int", ewDims(1, 1, 512)), ewT("float", ewDims(1, 1, 512)), ewS("False")}},
		c{"copy_ bf16 to f32", "aten::copy_", []ewTArg{ewT("float", ewDims(999)), ewT("c10::BFloat16", ewDims(999)), ewS("False")}},
	)
	strategies := []ptKernel{
		{kind: ptGeneric, nt: 128, vt: 4},
		{kind: ptGeneric, nt: 128, vt: 2},
		{kind: ptVectorized, nt: 128, vec: 8},
		{kind: ptVectorized, nt: 128, vec: 4},
		{kind: ptVectorized, nt: 128, vec: 2},
		{kind: ptUnrolled, nt: 128, vec: 1},
		{kind: ptUnrolled, nt: 128, vec: 1, dyn: "float"},
		{kind: ptUnrolled, nt: 128, vec: 1, dyn: "long long"},
		{kind: ptUnrolled, nt: 128, vec: 1, dyn: "bool"},
	}
	for i, x := range cases {
		for j, p := range strategies {
			t.Run(x.name+" "+p.strategy(), func(t *testing.T) {
				sig := ewSig(t, x.op, x.args...)
				pl, err := ewAnalyzeOp(sig)
				if err != nil {
					t.Fatal(err)
				}
				n := ewNumel(pl.shape)
				if n > ewHostMaxNumel {
					t.Skipf("%d elements: GPU only", n)
				}
				// A traced grid of about 8 elements per thread (vectorized
				// and unrolled derive theirs from it), so that the last
				// block is often partial.
				if p.dyn != "" && (pl.code != "COPY" || ptDynOut[pl.outDType] != p.dyn) {
					t.Skipf("a copy into %s has no %s lambda", pl.outDType, p.dyn)
				}
				p.grid = [3]int64{max(n/(128*8), 1), 1, 1}
				p.block = [3]int64{p.nt, 1, 1}
				pl.pt = p
				hp := h.preparePlan(t, pl, uint64(3000+10*i+j), false)
				t.Parallel()
				h.check(t, hp)
			})
		}
	}
}

// ptAnalyzeTraced analyses a traced signature of the elementwise, copy or
// fill family as the builders do, with its traced strategy.
func ptAnalyzeTraced(sig *signatures.Signature) (*ewOpPlan, error) {
	pl, err := ewAnalyzeOp(sig)
	if err != nil {
		return nil, err
	}
	pl.pt = (Config{}).ptParse(sig)
	return pl, nil
}

// ptProblem lays out a plan's operands as ewInstantiate does, at
// 256-byte aligned addresses (as the device allocator gives) that are
// never dereferenced.
func ptProblem(t *testing.T, pl *ewOpPlan) ewProblem {
	t.Helper()
	next := cuda.DevicePtr(1 << 20)
	alloc := func(shape, strides []int64, dtype string) *Tensor {
		if len(strides) != len(shape) {
			strides = ContiguousStrides(shape)
		}
		x := &Tensor{Ptr: next, Shape: shape, Strides: strides, DType: dtype, Span: span(shape, strides)}
		next += cuda.DevicePtr((max(x.Bytes(), 1) + 255) &^ 255)
		return x
	}
	var pr ewProblem
	for k, a := range pl.args {
		switch {
		case a.in != nil:
			pr.in[k] = ewTensorOperand(alloc(a.in.Shape, a.in.Strides, signatures.DType(a.in.Type)))
		case a.isSet:
			pr.in[k] = ewConstOperand(a.c)
		}
	}
	switch {
	case pl.inplace >= 0:
		pr.out = pr.in[pl.inplace].t
	case pl.out != nil:
		pr.out = alloc(pl.out.Shape, pl.out.Strides, pl.outDType)
	default:
		pr.out = alloc(pl.shape, nil, pl.outDType)
	}
	return pr
}

// TestPTTracedPlans builds, without a GPU, the faithful plan of every
// traced signature whose kernel is vectorized_elementwise_kernel or
// unrolled_elementwise_kernel (PyTorch took those paths, so the operands
// allow them) and checks that the traced strategy applies: that the
// replay would not fall back to the fast kernel.
func TestPTTracedPlans(t *testing.T) {
	n := 0
	for _, sig := range ewTracedSigs(t) {
		p := (Config{}).ptParse(sig)
		if p.kind != ptVectorized && p.kind != ptUnrolled {
			continue
		}
		pl, err := ptAnalyzeTraced(sig)
		if err != nil {
			t.Errorf("%s %s: %v", sig.Op, sig.Label, err)
			continue
		}
		spec := ewSpec{op: pl.code, ct: pl.ct, alpha: pl.alpha, raw: pl.raw, pt: pl.pt}
		pp, ok, err := ptMakePlan(spec, ptProblem(t, pl))
		switch {
		case err != nil:
			t.Errorf("%s %s %s: %v", sig.Op, sig.Label, p.strategy(), err)
		case !ok:
			t.Errorf("%s %s %s: the traced strategy does not apply", sig.Op, sig.Label, p.strategy())
		case pp.plan.defines["EW_VEC"] != fmt.Sprint(max(p.vec, 1)):
			t.Errorf("%s %s %s: vector width %s", sig.Op, sig.Label, p.strategy(), pp.plan.defines["EW_VEC"])
		}
		n++
	}
	if n == 0 {
		t.Fatal("no traced vectorized or unrolled signature")
	}
	t.Logf("%d traced signatures", n)
}

// TestPTOutStrides checks the layouts PyTorch gives the results of
// elementwise ops on strided inputs.
func TestPTOutStrides(t *testing.T) {
	for _, c := range []struct {
		shape, strides []int64
		want           string
	}{
		// Llama's rotate_half: -x2 of a transposed slice of q; the trace's
		// cat reads the result with these strides.
		{[]int64{4, 32, 512, 64}, []int64{2097152, 128, 4096, 1}, "[1048576 64 2048 1]"},
		{[]int64{4, 16, 512, 64}, []int64{1572864, 192, 3072, 1}, "[524288 64 1024 1]"},
		{[]int64{2, 3}, []int64{1, 2}, "[1 2]"},
		{[]int64{4, 1, 8}, []int64{8, 99, 1}, "contiguous"},
		{[]int64{4, 8}, []int64{8, 1}, "contiguous"},
		{[]int64{4, 8}, []int64{0, 1}, "contiguous"},
		{[]int64{4, 8}, []int64{2, 2}, "contiguous"},
	} {
		got := "contiguous"
		if st, ok := ptOutStrides(c.shape, c.shape, c.strides); ok {
			got = fmt.Sprint(st)
		}
		if got != c.want {
			t.Errorf("%v %v: %s, want %s", c.shape, c.strides, got, c.want)
		}
	}
	if _, ok := ptOutStrides([]int64{4, 8}, []int64{1, 8}, []int64{1, 1}); ok {
		t.Error("broadcast input taken")
	}
}

// PyTorch's CatArrayBatchedCopy<OpaqueType<2u>, unsigned int, 4, 64, 64>
// takes 3440 bytes of parameters; its sm_90 code (libtorch_cuda 2.11,
// cuobjdump) reads input b's element count at 1032+4b, its contiguity at
// 1288+b, its sizes and strides at 1352+32b, the output's at 3400, the
// dimension at 3432 and the output's stride along it at 3436 (offsets from
// the first parameter). kr_cat_ptmeta's parameters must match.
func TestCatMetaLayout(t *testing.T) {
	m := &ptCatMeta{n: 64, s: 64, out: 0x1000, dim: 2, dimStride: 64,
		size: []int64{1, 16, 47, 64}, strides: []int64{48128, 3008, 64, 1},
		ins: []ptCatIn{
			{in: 0x2000, n: 47104, dimSize: 46, at: 0, contig: false, size: []int64{1, 16, 46, 64}, strides: []int64{47104, 2944, 64, 1}},
			{in: 0x3000, n: 1024, dimSize: 1, at: 46, contig: false, size: []int64{1, 16, 1, 64}, strides: []int64{3072, 192, 3072, 1}},
		}}
	b := m.bytes()
	if len(b) != 3440 {
		t.Fatalf("%d bytes, want 3440", len(b))
	}
	le := binary.LittleEndian
	u32 := func(off int) uint32 { return le.Uint32(b[off:]) }
	for _, c := range []struct {
		what      string
		got, want uint64
	}{
		{"output", le.Uint64(b[0:]), 0x1000},
		{"input 1", le.Uint64(b[8+8:]), 0x3000},
		{"offset 1", uint64(u32(520 + 4)), 46},
		{"dimSize 0", uint64(u32(776)), 46},
		{"nElements 1", uint64(u32(1032 + 4)), 1024},
		{"stride 1 of input 1", uint64(u32(1352 + 32 + 16 + 4)), 192},
		{"output size 2", uint64(u32(3400 + 8)), 47},
		{"concatDim", uint64(u32(3432)), 2},
		{"dimStride", uint64(u32(3436)), 64},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
		}
	}
	if b[1288] != 0 || b[1289] != 0 {
		t.Errorf("contiguity flags %d %d, want 0 0", b[1288], b[1289])
	}
}
