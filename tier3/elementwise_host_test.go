package tier3

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

// Host runs of the elementwise-family kernels: where a C++ compiler is
// installed, the CUDA sources are built for the host with the shim in
// testdata/ew_host.h and run one thread at a time over host memory, with
// the parameters the Go side computes for the GPU (layouts, vector widths,
// fast division, batches, grid-stride loops). No GPU needed.

//go:embed testdata/ew_host.h
var ewHostShim string

//go:embed testdata/ew_host_main.cc
var ewHostMain string

// ewHostBase is what the host launcher subtracts from a pointer to get an
// arena offset (EW_HOST_BASE).
const ewHostBase = 1 << 40

// ewArena is host memory standing for device memory. Its contents are
// written when a test needs them (ready), so that a subtest can place its
// tensors and register its kernel variant before t.Parallel and hold no
// memory until it runs.
type ewArena struct {
	buf   []byte
	size  int
	fills []func([]byte) error
}

// alloc places a tensor of the given layout in the arena, 256-aligned, with
// random contents (launch.RandomPattern's values).
func (a *ewArena) alloc(t testing.TB, shape, strides []int64, dtype string, seed uint64) *Tensor {
	t.Helper()
	if len(strides) != len(shape) {
		strides = ContiguousStrides(shape)
	}
	x := &Tensor{Shape: shape, Strides: strides, DType: dtype, Span: span(shape, strides)}
	off := (a.size + 255) &^ 255
	n := int(max(x.Bytes(), 1))
	a.size = off + n
	a.fills = append(a.fills, func(buf []byte) error {
		pat, err := launch.RandomPattern(dtype, n, seed)
		copy(buf[off:off+n], pat)
		return err
	})
	x.Ptr = cuda.DevicePtr(ewHostBase + off)
	return x
}

// ready writes the arena's contents.
func (a *ewArena) ready(t testing.TB) {
	t.Helper()
	a.buf = append(a.buf, make([]byte, a.size-len(a.buf))...)
	for _, f := range a.fills {
		if err := f(a.buf); err != nil {
			t.Fatal(err)
		}
	}
	a.fills = nil
}

func (a *ewArena) bytes(x *Tensor) []byte {
	off := int(x.Ptr) - ewHostBase
	return a.buf[off : off+int(x.Bytes())]
}

// values reads a tensor's view as download does.
func (a *ewArena) values(x *Tensor) []float64 {
	return viewValues(a.bytes(x), x)
}

// indices fills an integer tensor's storage with values in [0, limit)
// (after its random contents).
func (a *ewArena) indices(x *Tensor, limit int64, seed uint64) {
	a.fills = append(a.fills, func(buf []byte) error {
		r := rand.New(rand.NewPCG(seed, 7))
		off := int(x.Ptr) - ewHostBase
		raw := buf[off : off+int(x.Bytes())]
		for i := int64(0); i < x.Span; i++ {
			v := r.Int64N(max(limit, 1))
			if x.DType == "i64" {
				binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
			} else {
				binary.LittleEndian.PutUint32(raw[4*i:], uint32(v))
			}
		}
		return nil
	})
}

// untouched fails t if a run changed arena bytes outside the elements of
// the written tensors' views (pre is the arena before the run).
func (a *ewArena) untouched(t *testing.T, pre []byte, written ...*Tensor) {
	t.Helper()
	mask := make([]bool, len(a.buf))
	for _, x := range written {
		es := x.ElemSize()
		base := int64(x.Ptr) - ewHostBase
		idx := make([]int64, len(x.Shape))
		for i := int64(0); i < x.Numel(); i++ {
			var off int64
			for d := range idx {
				off += idx[d] * x.Strides[d]
			}
			for b := int64(0); b < es; b++ {
				mask[base+off*es+b] = true
			}
			for d := len(idx) - 1; d >= 0; d-- {
				idx[d]++
				if idx[d] < x.Shape[d] {
					break
				}
				idx[d] = 0
			}
		}
	}
	for i := range pre {
		if !mask[i] && pre[i] != a.buf[i] {
			t.Fatalf("arena byte %d changed outside the output", i)
		}
	}
}

// ewHost builds (hostBuild) and runs the host launchers of the kernels.
type ewHost struct{ b *hostBuild }

// ewHostBuild is the package's one builder of elementwise launchers, so
// that tests share variants.
var ewHostBuild struct {
	once sync.Once
	b    *hostBuild
}

// newEwHost returns the elementwise host harness, or skips t without a
// C++ compiler.
func newEwHost(t *testing.T) *ewHost {
	t.Helper()
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "g++"
	}
	if _, err := exec.LookPath(cxx); err != nil {
		t.Skipf("no C++ compiler (%s): %v", cxx, err)
	}
	ewHostBuild.once.Do(func() {
		ewHostBuild.b = newHostBuild(t, "ewv", cxx, []string{"-std=c++17", "-O1", "-w", "-DEW_HOST"}, ewHostShim)
	})
	return &ewHost{b: ewHostBuild.b}
}

// Host launcher kernels (EW_HOST_KERNEL).
const (
	ewHostEw = 1 + iota
	ewHostBatched
	ewHostGather
	ewHostArange
	ewHostPTGeneric
	ewHostPTLin
	ewHostCat
	ewHostPTDyn
	ewHostCatMeta
)

// ewHostLaunch is a launch of one launcher variant: its parameters, grid,
// block and extra arguments.
type ewHostLaunch struct {
	v             *hostVariant
	params        []byte
	gx, gy, block int
	extra         []string
}

// prepare registers the launcher of kernel with defs, to be compiled with
// the other variants registered before the first launch, and returns its
// launch with the given parameters and grid, ewBlock threads a block.
func (h *ewHost) prepare(kernel int, defs map[string]string, params []byte, gx, gy int, extra ...string) *ewHostLaunch {
	return h.prepareBlock(kernel, defs, params, gx, gy, ewBlock, extra...)
}

// prepareBlock is prepare with block threads a block.
func (h *ewHost) prepareBlock(kernel int, defs map[string]string, params []byte, gx, gy, block int, extra ...string) *ewHostLaunch {
	src := map[int]string{ewHostEw: ewSource, ewHostBatched: ewSource, ewHostGather: ewIndexSource, ewHostArange: ewFillSource,
		ewHostPTGeneric: ewSource, ewHostPTLin: ewSource, ewHostCat: ewCatSource, ewHostPTDyn: ewSource,
		ewHostCatMeta: ewCatSource}[kernel]
	d := maps.Clone(defs)
	if d == nil {
		d = map[string]string{}
	}
	d["EW_HOST_KERNEL"] = fmt.Sprint(kernel)
	body := strings.ReplaceAll(ewCommonSource+"\n"+src, `extern "C" `, "") + "\n" + ewHostMain
	if len(params) == 0 {
		params = []byte{0}
	}
	return &ewHostLaunch{v: h.b.want(body, d), params: params, gx: gx, gy: gy, block: block, extra: extra}
}

// launch runs l over the arena (which must be ready).
func (h *ewHost) launch(t *testing.T, a *ewArena, l *ewHostLaunch) {
	t.Helper()
	bin, variant := h.b.binary(t, l.v)
	dir := t.TempDir()
	af, pf := filepath.Join(dir, "arena"), filepath.Join(dir, "params")
	if err := os.WriteFile(af, a.buf, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pf, l.params, 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{variant, af, pf, fmt.Sprint(l.gx), fmt.Sprint(l.gy)}, l.extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("EW_HOST_BLOCK=%d", l.block))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("host run: %v\n%s", err, out)
	}
	b, err := os.ReadFile(af)
	if err != nil {
		t.Fatal(err)
	}
	a.buf = b
}

// ewHostGrid is a small grid, so that the grid-stride loops go round.
func ewHostGrid(units, unroll int64) int {
	return int(min(max((units+ewBlock*unroll-1)/(ewBlock*unroll), 1), 3))
}

// ewHostPlan is a plan placed in an arena with its launch (nil when there
// is nothing to run) registered.
type ewHostPlan struct {
	pl     *ewOpPlan
	a      *ewArena
	ins    []*Tensor
	out    *Tensor
	launch *ewHostLaunch
}

// preparePlan places a plan's tensors in an arena and registers its
// kernel's variant (with 64-bit indexing if wide).
func (h *ewHost) preparePlan(t *testing.T, pl *ewOpPlan, seed uint64, wide bool) *ewHostPlan {
	t.Helper()
	hp := &ewHostPlan{pl: pl, a: &ewArena{}}
	a := hp.a
	var pr ewProblem
	for k, arg := range pl.args {
		switch {
		case arg.in != nil:
			x := a.alloc(t, arg.in.Shape, arg.in.Strides, signatures.DType(arg.in.Type), seed+uint64(k))
			pr.in[k] = ewTensorOperand(x)
			hp.ins = append(hp.ins, x)
		case arg.isSet:
			pr.in[k] = ewConstOperand(arg.c)
		}
	}
	switch {
	case pl.inplace >= 0:
		pr.out = pr.in[pl.inplace].t
	case pl.out != nil:
		pr.out = a.alloc(t, pl.out.Shape, pl.out.Strides, pl.outDType, seed+10)
	default:
		pr.out = a.alloc(t, pl.shape, nil, pl.outDType, seed+10)
	}
	hp.out = pr.out
	spec := ewSpec{op: pl.code, ct: pl.ct, alpha: pl.alpha, raw: pl.raw, pt: pl.pt}
	if pl.pt.kind != ptNone {
		pp, ok, err := ptMakePlan(spec, pr)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Skipf("%s does not apply", pl.pt.strategy())
		}
		if wide {
			pp.plan.defines["EW_IDX64"] = "1"
		}
		kernel := map[string]int{"kr_ew_pt_generic": ewHostPTGeneric, "kr_ew_pt_lin": ewHostPTLin, "kr_ew_pt_dyncopy": ewHostPTDyn}[pp.fn]
		t.Logf("%s: %s vec %s ept %s, %d dims, grid %d block %d", pl.pt.strategy(), pp.fn, pp.plan.defines["EW_VEC"],
			pp.plan.defines["EW_PT_EPT"], pp.plan.params[0].ndim, pp.grid, pp.block)
		if pp.grid > 0 {
			hp.launch = h.prepareBlock(kernel, pp.plan.defines, pp.plan.params[0].bytes(), int(pp.grid), 1, int(pp.block))
		}
		return hp
	}
	mp, err := ewMakePlan(spec, []ewProblem{pr})
	if err != nil {
		t.Fatal(err)
	}
	unroll := int64(1)
	fmt.Sscan(mp.defines["EW_UNROLL"], &unroll)
	if wide {
		mp.defines["EW_IDX64"] = "1"
	}
	t.Logf("vec %s unroll %s kinds %s %s %s, %d dims, %d units, tail %d", mp.defines["EW_VEC"], mp.defines["EW_UNROLL"],
		mp.defines["EW_K1"], mp.defines["EW_K2"], mp.defines["EW_K3"], mp.params[0].ndim, mp.params[0].units, mp.params[0].tail)
	if mp.units > 0 || mp.tail {
		hp.launch = h.prepare(ewHostEw, mp.defines, mp.params[0].bytes(), ewHostGrid(mp.units, unroll), 1)
	}
	return hp
}

// check runs a prepared plan on the host and compares its output with the
// reference, and the arena outside the output with what it was.
func (h *ewHost) check(t *testing.T, hp *ewHostPlan) {
	t.Helper()
	a := hp.a
	a.ready(t)
	var before [][]float64
	for _, x := range hp.ins {
		before = append(before, a.values(x))
	}
	pre := slices.Clone(a.buf)
	if hp.launch != nil {
		h.launch(t, a, hp.launch)
	}
	a.untouched(t, pre, hp.out)
	want := ewReference(hp.pl, hp.ins, before, hp.out.Shape)
	ewCompare(t, hp.pl.code, a.values(hp.out), want, hp.pl.outDType)
}

// ewHostMaxNumel bounds the cases run on the host (one thread at a time).
const ewHostMaxNumel = 1 << 21

func ewNumel(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// ewHostCases are layouts of the traced ops shrunk to run quickly on the
// host, with the same structure: transposed views, broadcasts, 0-dim
// operands, odd sizes.
func ewHostCases() []ewCase {
	f16, f32, i64 := "c10::Half", "float", "long int"
	rope := ewT(f16, ewDims(2, 4, 16, 128), 8192, 128, 512, 1)
	return []ewCase{
		{"neg rope view", "aten::neg", []ewTArg{ewT(f16, ewDims(2, 4, 16, 64), 8192, 128, 512, 1)}},
		{"mul rope by cos", "aten::mul", []ewTArg{rope, ewT(f16, ewDims(1, 1, 16, 128), 2048, 2048, 128, 1)}},
		{"add rope halves", "aten::add", []ewTArg{rope, ewT(f16, ewDims(2, 4, 16, 128)), ewS("1")}},
		{"add mask", "aten::add", []ewTArg{ewT(f16, ewDims(2, 4, 32, 32)), ewT(f16, ewDims(2, 1, 32, 32)), ewS("1")}},
		{"mul weight row", "aten::mul", []ewTArg{ewT(f16, ewDims(512)), ewT(f16, ewDims(2, 8, 512))}},
		{"silu odd", "aten::silu", []ewTArg{ewT(f16, ewDims(3, 5, 1001))}},
		{"gelu none", "aten::gelu", []ewTArg{ewT(f16, ewDims(4, 1024)), ewStr("none")}},
		{"gelu tanh bf16", "aten::gelu", []ewTArg{ewT("c10::BFloat16", ewDims(4, 1024)), ewStr("tanh")}},
		{"copy_ f16 to f32", "aten::copy_", []ewTArg{ewT(f32, ewDims(4, 16, 512)), ewT(f16, ewDims(4, 16, 512)), ewS("False")}},
		{"copy_ f32 to f16 odd", "aten::copy_", []ewTArg{ewT(f16, ewDims(3, 1001)), ewT(f32, ewDims(3, 1001)), ewS("False")}},
		{"copy_ transpose", "aten::copy_", []ewTArg{ewT(f16, ewDims(2, 16, 4, 64)), ewT(f16, ewDims(2, 16, 4, 64), 4096, 64, 1024, 1), ewS("False")}},
		{"copy_ qkv slice", "aten::copy_", []ewTArg{ewT(f16, ewDims(2, 4, 16, 64)), ewT(f16, ewDims(2, 4, 16, 64), 12288, 192, 768, 1), ewS("False")}},
		{"copy_ expand", "aten::copy_", []ewTArg{ewT(f16, ewDims(8, 64, 64)), ewT(f16, ewDims(8, 64, 64), 64, 0, 1), ewS("False")}},
		{"eq column", "aten::eq", []ewTArg{ewT(i64, ewDims(25088, 1), 1, 1), ewT(i64, ewDims(1, 1))}},
		{"where mask", "aten::where", []ewTArg{ewT("bool", ewDims(2, 1, 64, 64)), {typ: f16}, {typ: f16}}},
		{"masked_fill", "aten::masked_fill", []ewTArg{ewT(f16, ewDims(2, 4, 32, 32)), ewT("bool", ewDims(2, 1, 32, 32)), ewS("-65504.")}},
		{"pow big", "aten::pow", []ewTArg{ewT(f32, ewDims(2, 64, 512)), ewS("2")}},
		{"div column", "aten::div", []ewTArg{ewT(f32, ewDims(2, 64, 512)), ewT(f32, ewDims(2, 64, 1))}},
		{"sub i64 alpha", "aten::sub", []ewTArg{ewT(i64, ewDims(4, 512), 513, 1), ewT(i64, ewDims(1)), ewS("3")}},
		{"div floor i64", "aten::div", []ewTArg{ewT(i64, ewDims(1000)), ewS("7"), ewStr("floor")}},
		{"div trunc f32", "aten::div", []ewTArg{ewT(f32, ewDims(1000)), ewS("0.25"), ewStr("trunc")}},
		{"copy_ 8-d permute", "aten::copy_", []ewTArg{ewT(f32, ewDims(2, 3, 2, 3, 2, 3, 2, 3)),
			ewT(f32, ewDims(2, 3, 2, 3, 2, 3, 2, 3), 1, 2, 6, 12, 36, 72, 216, 432), ewS("False")}},
		{"fill_ i32 strided", "aten::fill_", []ewTArg{ewT("int", ewDims(33, 7), 1, 33), ewS("-5")}},
		{"copy_ bf16 to f8e4m3", "aten::copy_", []ewTArg{ewT("c10::Float8_e4m3fn", ewDims(64, 2048)), ewT("c10::BFloat16", ewDims(64, 2048)), ewS("False")}},
		{"copy_ f32 to f8e5m2 odd", "aten::copy_", []ewTArg{ewT("c10::Float8_e5m2", ewDims(3, 1001)), ewT(f32, ewDims(3, 1001)), ewS("False")}},
		{"copy_ f8e4m3 to f32", "aten::copy_", []ewTArg{ewT(f32, ewDims(4, 2048)), ewT("c10::Float8_e4m3fn", ewDims(4, 2048)), ewS("False")}},
		{"_to_copy f32 to f8e4m3", "aten::_to_copy", []ewTArg{ewT(f32, ewDims(4, 1024)), ewS("24"), ewNone(), ewNone(), ewNone(), ewS("False"), ewNone()}},
	}
}

// TestEwHostElementwise runs elementwise, copy and fill plans on the host:
// the GPU cases small enough, and shrunk versions of the large ones.
func TestEwHostElementwise(t *testing.T) {
	h := newEwHost(t)
	cases := ewGPUCases()
	for _, x := range ewHostCases() {
		x.name = "host " + x.name
		cases = append(cases, x)
	}
	cases = append(cases, []ewCase{
		{"fill_ half 0-dim", "aten::fill_", []ewTArg{{typ: "c10::Half"}, ewS("-65504.")}},
		{"fill_ bool", "aten::fill_", []ewTArg{ewT("bool", ewDims(2509)), ewS("True")}},
		{"fill_ tensor value", "aten::fill_", []ewTArg{ewT("float", ewDims(4, 512)), {typ: "double"}}},
		{"zero_ strided", "aten::zero_", []ewTArg{ewT("c10::Half", ewDims(4, 512), 1024, 1)}},
		{"_to_copy bool to long", "aten::_to_copy", []ewTArg{ewT("bool", ewDims(4, 512)), ewS("4"), ewNone(), ewNone(), ewNone(), ewS("False"), ewNone()}},
		{"clone strided", "aten::clone", []ewTArg{ewT("c10::Half", ewDims(2, 4, 16, 64), 8192, 128, 512, 1), ewNone()}},
		{"copy_ bool to long", "aten::copy_", []ewTArg{ewT("long int", ewDims(1, 32)), ewT("bool", ewDims(1, 32)), ewS("False")}},
		{"copy_ f64 to bf16", "aten::copy_", []ewTArg{ewT("c10::BFloat16", ewDims(999)), ewT("double", ewDims(999)), ewS("False")}},
		{"copy_ f32 to i32", "aten::copy_", []ewTArg{ewT("int", ewDims(999)), ewT("float", ewDims(999)), ewS("False")}},
		{"copy_ expand inner", "aten::copy_", []ewTArg{ewT("long int", ewDims(4, 1, 1, 512)), ewT("long int", ewDims(4, 1, 1, 512), 1, 0, 0, 0), ewS("False")}},
	}...)
	for i, x := range cases {
		t.Run(x.name, func(t *testing.T) {
			sig := ewSig(t, x.op, x.args...)
			pl, err := ewAnalyzeOp(sig)
			if err != nil {
				t.Fatal(err)
			}
			if ewNumel(pl.shape) > ewHostMaxNumel {
				t.Skipf("%d elements: GPU only", ewNumel(pl.shape))
			}
			hp := h.preparePlan(t, pl, uint64(1000+10*i), false)
			t.Parallel()
			h.check(t, hp)
		})
	}
}

// TestEwHostWide runs some cases with the 64-bit indexing that tensors of
// 2^31 elements or more get.
func TestEwHostWide(t *testing.T) {
	h := newEwHost(t)
	for i, x := range ewHostCases() {
		if !slices.Contains([]string{"mul rope by cos", "silu odd", "copy_ transpose", "eq column", "copy_ 8-d permute"}, x.name) {
			continue
		}
		t.Run(x.name, func(t *testing.T) {
			sig := ewSig(t, x.op, x.args...)
			pl, err := ewAnalyze(sig)
			if err != nil {
				pl, err = ewAnalyzeCopy(sig)
			}
			if err != nil {
				t.Fatal(err)
			}
			hp := h.preparePlan(t, pl, uint64(2000+i), true)
			t.Parallel()
			h.check(t, hp)
		})
	}
}

// TestEwHostCat runs cats (batched copies) on the host.
func TestEwHostCat(t *testing.T) {
	h := newEwHost(t)
	l := func(ts ...[2][]int64) ewTArg { return ewTArg{typ: "TensorList", list: ts} }
	p := func(shape []int64, strides ...int64) [2][]int64 {
		if len(strides) == 0 {
			strides = ContiguousStrides(shape)
		}
		return [2][]int64{shape, strides}
	}
	// More inputs than one faithful launch takes (ptCatBatch).
	var many [][2][]int64
	for j := range ptCatBatch + 3 {
		many = append(many, p(ewDims(2, int64(j%5+1), 3)))
	}
	for i, c := range []struct {
		name   string
		list   ewTArg
		dim    string
		kernel string
	}{
		{"many inputs", l(many...), "1", "OpaqueType<4u>"},
		{"rotary halves", l(p(ewDims(2, 4, 16, 64), 8192, 64, 512, 1), p(ewDims(2, 4, 16, 64), 8192, 128, 512, 1)), "-1", "OpaqueType<2u>"},
		{"kv cache append", l(p(ewDims(0)), p(ewDims(1, 16, 32, 64)), p(ewDims(1, 16, 1, 64), 3072, 192, 3072, 1)), "-2", "OpaqueType<2u>"},
		{"long mask", l(p(ewDims(4, 1), 1, 1), p(ewDims(4, 512), 0, 1)), "-1", "OpaqueType<8u>"},
		{"f32 1-d tails", l(p(ewDims(1000)), p(ewDims(37)), p(ewDims(5))), "0", "OpaqueType<4u>"},
		{"permuted inputs", l(p(ewDims(1, 512, 64), 32768, 1, 512), p(ewDims(1, 512, 64), 32768, 1, 512)), "-1", "OpaqueType<4u>"},
		{"bool dim 0", l(p(ewDims(3, 40)), p(ewDims(5, 40)), p(ewDims(1, 40))), "0", "OpaqueType<1u>"},
		{"single input", l(p(ewDims(7, 9), 1, 7)), "1", "OpaqueType<2u>"},
	} {
		for _, mode := range []string{"", " faithful", " faithful strided", " faithful pytorch-params", " faithful pytorch-params strided"} {
			faithful := mode != ""
			t.Run(c.name+mode, func(t *testing.T) {
				sig := ewSig(t, "aten::cat", c.list, ewS(c.dim))
				sig.Kernel = c.kernel
				pl, err := ewAnalyzeCat(sig)
				if err != nil {
					t.Fatal(err)
				}
				a := &ewArena{}
				out := a.alloc(t, pl.shape, nil, pl.dtype, uint64(i))
				var ins []*Tensor
				for j, part := range pl.parts {
					ins = append(ins, a.alloc(t, part.Shape, part.Strides, pl.dtype, uint64(100*i+j+1)))
				}
				var launches []*ewHostLaunch
				if faithful {
					// CatArrayBatchedCopy with a small grid, so that the
					// grid-stride loop goes round.
					// Strided: every input read through its strides, as
					// PyTorch's strided path does.
					pk := ptKernel{kind: ptCat, grid: [3]int64{3, int64(len(ins)), 1}, block: [3]int64{64, 1, 1},
						catStrided: strings.HasSuffix(mode, " strided")}
					if strings.Contains(mode, "pytorch-params") {
						if len(pl.shape) > 4 {
							t.Skip("PyTorch's batched cat takes up to 4 dimensions")
						}
						pk.catMeta = [3]int64{int64(len(pl.shape)), 64, 1}
						if pk.catStrided {
							pk.catMeta[2] = 64
						}
					}
					cp, ok := ptCatMake(pk, pl.dim, out, ins)
					if !ok || cp == nil {
						t.Fatalf("no faithful cat (ok %v)", ok)
					}
					for _, l := range cp.launches {
						k := ewHostCat
						if l.meta != nil {
							k = ewHostCatMeta
						} else if pk.catMeta[0] != 0 && (pk.catStrided || allContiguous(ins)) {
							t.Fatal("PyTorch's parameters asked for, kr_cat_pt launched")
						}
						launches = append(launches, h.prepareBlock(k, l.defines, l.params(), int(l.grid[0]), int(l.grid[1]), int(l.block[0])))
					}
				} else {
					probs := ewCatProblems(pl, out, ins)
					mp, err := ewMakePlan(ewSpec{op: "COPY", raw: true}, probs)
					if err != nil {
						t.Fatal(err)
					}
					kernel, params := ewHostEw, mp.params[0].bytes()
					if len(probs) > 1 {
						kernel, params = ewHostBatched, nil
						for _, p := range mp.params {
							params = append(params, p.bytes()...)
						}
					}
					unroll := int64(1)
					fmt.Sscan(mp.defines["EW_UNROLL"], &unroll)
					launches = append(launches, h.prepare(kernel, mp.defines, params, ewHostGrid(mp.units, unroll), len(probs)))
				}
				t.Parallel()
				a.ready(t)
				var before [][]float64
				for _, x := range ins {
					before = append(before, a.values(x))
				}
				pre := slices.Clone(a.buf)
				for _, l := range launches {
					h.launch(t, a, l)
				}
				a.untouched(t, pre, out)
				checkCat(t, a.values(out), pl.shape, pl.dim, ins, before)
			})
		}
	}
}

// TestEwHostIndex runs gathers on the host.
func TestEwHostIndex(t *testing.T) {
	h := newEwHost(t)
	f16 := "c10::Half"
	for i, c := range []ewCase{
		{"index_select rows", "aten::index_select", []ewTArg{ewT(f16, ewDims(2508, 64)), ewS("0"), ewT("long int", ewDims(204))}},
		{"index_select one", "aten::index_select", []ewTArg{ewT(f16, ewDims(2508, 64)), ewS("0"), ewT("long int", ewDims(1))}},
		{"index_select 0-dim index", "aten::index_select", []ewTArg{ewT(f16, ewDims(25, 64)), ewS("0"), {typ: "long int"}}},
		{"gather traced layout", "aten::gather", []ewTArg{ewT(f16, ewDims(2508, 128)), ewS("0"), ewT("long int", ewDims(204, 128), 1, 0), ewS("False"), ewT(f16, ewDims(204, 128))}},
		{"embedding", "aten::embedding", []ewTArg{ewT(f16, ewDims(320, 64)), ewT("long int", ewDims(4, 51)), ewS("-1"), ewS("False"), ewS("False")}},
		{"embedding odd width", "aten::embedding", []ewTArg{ewT("float", ewDims(320, 33)), ewT("int", ewDims(7)), ewS("-1"), ewS("False"), ewS("False")}},
		{"index_select last dim", "aten::index_select", []ewTArg{ewT("float", ewDims(8, 100)), ewS("-1"), ewT("int", ewDims(5))}},
		{"index_select middle strided", "aten::index_select", []ewTArg{ewT("bool", ewDims(6, 50, 4), 1, 24, 6), ewS("1"), ewT("long int", ewDims(17))}},
		{"gather dim 1", "aten::gather", []ewTArg{ewT("float", ewDims(64, 32)), ewS("1"), ewT("long int", ewDims(64, 8)), ewS("False")}},
		{"gather 3-d", "aten::gather", []ewTArg{ewT("double", ewDims(5, 6, 7)), ewS("-2"), ewT("long int", ewDims(5, 3, 7)), ewS("False")}},
		{"index one tensor", "aten::index", []ewTArg{ewT("double", ewDims(64, 32), 1, 64), {typ: "", list: [][2][]int64{{ewDims(10), ewDims(1)}}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sig := ewSig(t, c.op, c.args...)
			pl, err := ewAnalyzeIndex(sig)
			if err != nil {
				t.Fatal(err)
			}
			a := &ewArena{}
			src := a.alloc(t, pl.src.Shape, pl.src.Strides, signatures.DType(pl.src.Type), uint64(i))
			idx := a.alloc(t, pl.index.Shape, pl.index.Strides, signatures.DType(pl.index.Type), 1)
			a.indices(idx, pl.limit, uint64(i))
			var out *Tensor
			if pl.out != nil {
				out = a.alloc(t, pl.out.Shape, pl.out.Strides, src.DType, 2)
			} else {
				out = a.alloc(t, pl.shape, nil, src.DType, 2)
			}
			gk, err := ewGatherMake(pl, src, idx, out)
			if err != nil {
				t.Fatal(err)
			}
			if i%2 == 1 {
				gk.defines["EW_IDX64"] = "1" // the 64-bit indexing of huge tensors
			}
			l := h.prepare(ewHostGather, gk.defines, gk.params.bytes(), ewHostGrid(gk.params.units, gk.unroll), 1)
			t.Parallel()
			a.ready(t)
			pre := slices.Clone(a.buf)
			h.launch(t, a, l)
			a.untouched(t, pre, out)
			got := a.values(out)
			sraw, iraw := a.bytes(src), a.bytes(idx)
			pos := make([]int64, len(pl.shape))
			for e := range got {
				var so, io int64
				for d := range pos {
					so += pos[d] * pl.sst[d]
					io += pos[d] * pl.ist[d]
				}
				iv := int64(elem(iraw, io, idx.DType))
				if want := elem(sraw, so+iv*pl.dstride, src.DType); want != got[e] {
					t.Fatalf("element %d = %v, want %v (vec %s)", e, got[e], want, gk.defines["EW_VEC"])
				}
				for d := len(pos) - 1; d >= 0; d-- {
					pos[d]++
					if pos[d] < pl.shape[d] {
						break
					}
					pos[d] = 0
				}
			}
		})
	}
}

// TestEwHostArange runs arange on the host.
func TestEwHostArange(t *testing.T) {
	h := newEwHost(t)
	for _, c := range []struct {
		name string
		args []ewTArg
	}{
		{"traced", []ewTArg{ewS("0"), ewS("2508"), ewS("1"), ewT("long int", ewDims(0))}},
		{"float step", []ewTArg{ewS("0"), ewS("5.5"), ewS("0.5"), ewNone(), ewNone(), ewNone(), ewNone()}},
		{"half descending", []ewTArg{ewS("100"), ewS("-3"), ewS("-3"), ewS("5"), ewNone(), ewNone(), ewNone()}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ar, err := ewAnalyzeArange(ewSig(t, "aten::arange", c.args...))
			if err != nil {
				t.Fatal(err)
			}
			a := &ewArena{}
			out := a.alloc(t, []int64{ar.n}, nil, ar.dtype, 3)
			l := h.prepare(ewHostArange, map[string]string{"EW_DO": ewCodes[ar.dtype]}, nil, 2, 1,
				fmt.Sprint(uint64(out.Ptr)), fmt.Sprint(ar.n), fmt.Sprintf("%.17g", ar.start), fmt.Sprintf("%.17g", ar.step),
				fmt.Sprint(ar.istart), fmt.Sprint(ar.istep))
			t.Parallel()
			a.ready(t)
			pre := slices.Clone(a.buf)
			defer a.untouched(t, pre, out)
			h.launch(t, a, l)
			got := a.values(out)
			for j := range got {
				want := float64(ar.istart + ar.istep*int64(j))
				if ewCategoryOf(ar.dtype) == ewFloatCat {
					want = ewRound(ar.start+ar.step*float64(j), ar.dtype)
				}
				if got[j] != want {
					t.Fatalf("element %d = %v, want %v", j, got[j], want)
				}
			}
		})
	}
}

// allContiguous reports whether every tensor is contiguous.
func allContiguous(ts []*Tensor) bool {
	for _, t := range ts {
		if !t.Contiguous() {
			return false
		}
	}
	return true
}
