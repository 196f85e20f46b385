package tier3

import (
	"cmp"
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
)

// Faithful replay of the elementwise family.
//
// kreplay's own elementwise kernel (kr_ew) is fast: vector loads wherever
// the layout allows, magic-number division, a grid sized to the GPU. It
// computes the right values but is often much faster (or slower) than the
// kernel PyTorch ran, so it would not predict the traced time. Unless
// Config.NoFaithful is set, when a signature's traced kernel name says which of
// PyTorch's code paths ran, the op is replayed with that path's loop
// structure and the traced launch shape, still computing the real op:
//
//   elementwise_kernel<NT, VT>       the generic TensorIterator path: NT
//                                    threads, VT elements per thread spaced
//                                    by NT, every element's operand offsets
//                                    decomposed over the (coalesced) shape,
//                                    scalar loads (kr_ew_pt_generic)
//   vectorized_elementwise_kernel<V> the contiguous path: V-element vector
//                                    loads, each thread's vectors spaced by
//                                    the block, the last partial block done
//                                    element by element (kr_ew_pt_lin)
//   unrolled_elementwise_kernel      contiguous with casts: scalar loads,
//                                    elements spaced by the block (kr_ew_pt_lin
//                                    with V = 1); with LoadWithCast and
//                                    StoreWithCast (a copy between dtypes),
//                                    each element fetched and stored through
//                                    a switch on its run-time dtype, in the
//                                    compute type of the kernel's lambda
//                                    (kr_ew_pt_dyncopy)
//   CatArrayBatchedCopy*             cat: one blockIdx.y per input, a
//                                    grid-stride loop over its elements,
//                                    the output offset of each found by
//                                    hardware division over every dimension
//                                    (kr_cat_pt)
//   elementwise_kernel_with_index    arange: the traced grid and block
//
// The elements per thread of the vectorized and unrolled paths (which
// PyTorch picks from the operands' sizes and its version) are read off the
// traced grid: the fewest that let the traced grid cover the elements.
// A signature whose kernel is not recognised, or whose traced path the
// operands do not allow (a vectorized kernel over a layout that is not
// contiguous), runs on the fast kernel. Instance.Strategy says which ran.

//go:embed kernels/cat.cu
var ewCatSource string

// ptKind is one of PyTorch's elementwise code paths.
type ptKind int

const (
	ptNone       ptKind = iota // not recognised: the fast kernel
	ptGeneric                  // elementwise_kernel<NT, VT>
	ptVectorized               // vectorized_elementwise_kernel<V>
	ptUnrolled                 // unrolled_elementwise_kernel
	ptCat                      // CatArrayBatchedCopy (and its _contig, _aligned variants)
	ptIndexed                  // elementwise_kernel_with_index (arange)
)

func (k ptKind) String() string {
	return [...]string{"fast", "generic", "vectorized", "unrolled", "cat-batched", "with-index"}[k]
}

// ptKernel is a traced kernel's strategy and launch shape.
type ptKernel struct {
	kind ptKind
	nt   int64 // threads per block (generic: from the name; others: the traced block)
	vt   int64 // generic: elements per thread, from the name
	vec  int64 // vectorized: the vector width
	// dyn is, for an unrolled kernel with LoadWithCast, the C type its
	// lambda computes in ("float", "long long", "bool": a copy's
	// destination type); "" otherwise.
	dyn string
	// catStrided is set for PyTorch's strided cat (CatArrayBatchedCopy
	// with stride_size > 1, taken when any input is not contiguous), which
	// marks every input non-contiguous and finds each element's place in
	// it through its sizes and strides, contiguous inputs too.
	catStrided bool
	// catMeta is, for CatArrayBatchedCopy<T, unsigned int, Dims, N, S>,
	// {Dims, N, S}: kr_cat_ptmeta takes PyTorch's parameter layout.
	catMeta [3]int64
	grid    [3]int64
	block   [3]int64
}

// strategy names a ptKernel for Instance.Strategy.
func (p ptKernel) strategy() string {
	switch p.kind {
	case ptGeneric:
		return fmt.Sprintf("generic<%d,%d>", p.nt, p.vt)
	case ptVectorized:
		return fmt.Sprintf("vectorized<%d>", p.vec)
	case ptUnrolled:
		if p.dyn != "" {
			return "unrolled-cast<" + p.dyn + ">"
		}
	case ptCat:
		if p.catStrided {
			return "cat-strided"
		}
	}
	return p.kind.String()
}

// ptTemplateInts returns the leading integer template arguments of the
// first template in name ("elementwise_kernel<128, 4, ..." gives 128, 4).
func ptTemplateInts(name string) []int64 {
	var out []int64
	for _, a := range ptTemplateArgs(name) {
		v, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			break
		}
		out = append(out, v)
	}
	return out
}

// ptTemplateArgs returns the top-level template arguments of the first
// template in name ("f<a<1>, b, 2>(x)" gives "a<1>", "b", "2"), or nil.
func ptTemplateArgs(name string) []string {
	i := strings.IndexByte(name, '<')
	if i < 0 {
		return nil
	}
	var args []string
	depth, start := 0, i+1
	for j := i; j < len(name); j++ {
		switch name[j] {
		case '<':
			depth++
		case '>':
			depth--
			if depth == 0 {
				return append(args, strings.TrimSpace(name[start:j]))
			}
		case ',':
			if depth == 1 {
				args = append(args, strings.TrimSpace(name[start:j]))
				start = j + 1
			}
		}
	}
	return nil
}

// ptParse reads the strategy of a signature's traced kernel; kind ptNone
// when c.NoFaithful, the kernel is not one of PyTorch's elementwise
// family, or no launch shape was traced.
func (c Config) ptParse(sig *signatures.Signature) ptKernel {
	var p ptKernel
	if !c.faithful() || sig == nil || sig.Launch == nil {
		return p
	}
	l := sig.Launch
	p.grid, p.block = l.Grid, l.Block
	if p.block[1] != 1 || p.block[2] != 1 || p.grid[2] != 1 || p.block[0] < 32 || p.block[0] > 1024 || p.grid[0] < 1 {
		return ptKernel{}
	}
	name := strings.TrimPrefix(sig.Kernel, "void ")
	name = strings.ReplaceAll(name, "at::native::", "")
	name = strings.ReplaceAll(name, "(anonymous namespace)::", "")
	p.nt = p.block[0]
	switch {
	case strings.HasPrefix(name, "elementwise_kernel_with_index<"):
		p.kind = ptIndexed
	case strings.HasPrefix(name, "elementwise_kernel<"):
		v := ptTemplateInts(name)
		if len(v) < 2 || v[0] != p.block[0] || v[1] < 1 || v[1] > 64 {
			return ptKernel{}
		}
		p.kind, p.nt, p.vt = ptGeneric, v[0], v[1]
	case strings.HasPrefix(name, "vectorized_elementwise_kernel<"):
		v := ptTemplateInts(name)
		if len(v) < 1 || (v[0] != 1 && v[0] != 2 && v[0] != 4 && v[0] != 8 && v[0] != 16) {
			return ptKernel{}
		}
		p.kind, p.vec = ptVectorized, v[0]
	case strings.HasPrefix(name, "unrolled_elementwise_kernel<"):
		p.kind, p.vec = ptUnrolled, 1
		if strings.Contains(name, "LoadWithCast<") && strings.Contains(name, "StoreWithCast<") {
			if m := ptLambdaArg.FindStringSubmatch(name); m != nil {
				p.dyn = ptDynTypes[m[1]]
			}
		}
	case strings.HasPrefix(name, "CatArrayBatchedCopy"):
		p.kind = ptCat
		if args := ptTemplateArgs(name); strings.HasPrefix(name, "CatArrayBatchedCopy<") && len(args) == 5 {
			// <T, IndexType, Dims, batch_size, stride_size>
			var v [3]int64
			ok := args[1] == "unsigned int"
			for j := range v {
				x, err := strconv.ParseInt(args[2+j], 10, 64)
				ok = ok && err == nil && x > 0
				v[j] = x
			}
			if ok && v[0] <= 4 && (v[2] == 1 || v[2] == v[1]) {
				p.catMeta = v
			}
			p.catStrided = ok && v[2] > 1
		}
	default:
		return ptKernel{}
	}
	if p.kind != ptCat && p.grid[1] != 1 {
		return ptKernel{}
	}
	return p
}

// ptLambdaArg finds the argument type of the functor lambda in a kernel
// name ("{lambda(float)#1}").
var ptLambdaArg = regexp.MustCompile(`\{lambda\(([\w:]+)\)#\d+\}`)

// ptDynTypes maps a lambda's argument type to the C type kr_ew_pt_dyncopy
// computes in; a type not here keeps the plain unrolled kernel.
var ptDynTypes = map[string]string{
	"float": "float", "double": "double", "long": "long long", "int": "int", "bool": "bool",
}

// ptDynOut maps a copy's destination dtype to the C type of PyTorch's
// copy lambda for it (direct_copy_kernel dispatches on the destination):
// kr_ew_pt_dyncopy runs only where the traced lambda agrees.
var ptDynOut = map[string]string{"f32": "float", "f64": "double", "i64": "long long", "i32": "int", "bool": "bool"}

// ptScalarType returns the c10::ScalarType code of a kreplay dtype.
func ptScalarType(dtype string) (int32, bool) {
	for code, d := range ewScalarTypes {
		if d == dtype {
			return int32(code), true
		}
	}
	return 0, false
}

// ptDynCall compiles kr_ew_pt_dyncopy's switches as calls rather than
// inlined (EW_PT_DYN_CALL), for a GPU test comparing the two.
var ptDynCall = false

// ptMaxEPT bounds the elements per thread read off a traced grid.
const ptMaxEPT = 64

// ptLinEPT returns the elements per thread of a vectorized or unrolled
// kernel over n elements: the fewest (a multiple of vec) with which the
// traced grid covers n, and the grid that then covers n.
func ptLinEPT(p ptKernel, n int64) (ept, grid int64) {
	vec := max(p.vec, 1)
	per := p.grid[0] * p.nt
	ept = max((n+per-1)/per, 1)
	ept = (ept + vec - 1) / vec * vec
	ept = min(ept, ptMaxEPT/vec*vec)
	return ept, max((n+p.nt*ept-1)/(p.nt*ept), 1)
}

// ptCompile builds the faithful launch of one elementwise problem, or
// returns ok false when the traced strategy does not apply (the caller
// then runs the fast kernel).
func (e *Env) ptCompile(spec ewSpec, pr ewProblem) (launch func(*cuda.Stream) error, ok bool, err error) {
	pp, ok, err := ptMakePlan(spec, pr)
	if !ok || err != nil {
		return nil, ok, err
	}
	if pp.grid == 0 {
		return func(*cuda.Stream) error { return nil }, true, nil
	}
	f, err := e.Function(ewSources("elementwise.cu", ewSource, pp.plan.defines), pp.fn)
	if err != nil {
		return nil, false, err
	}
	arg := cuda.RawArg{Data: pp.plan.params[0].bytes(), Align: 8}
	grid, block := [3]uint32{uint32(pp.grid), 1, 1}, [3]uint32{uint32(pp.block), 1, 1}
	return func(s *cuda.Stream) error { return f.Launch(grid, block, 0, s, arg) }, true, nil
}

// ptPlan is a faithful launch: the kernel's plan, function and shape.
type ptPlan struct {
	plan  *ewPlan
	fn    string
	grid  int64 // 0: nothing to launch
	block int64
}

// ptMakePlan lays out one problem for the traced strategy spec.pt.
func ptMakePlan(spec ewSpec, pr ewProblem) (*ptPlan, bool, error) {
	p := spec.pt
	switch p.kind {
	case ptGeneric:
		spec.vec = 1
	case ptVectorized, ptUnrolled:
		spec.vec = max(p.vec, 1)
	default:
		return nil, false, nil
	}
	pl, err := ewMakePlan(spec, []ewProblem{pr})
	if err != nil {
		return nil, false, err
	}
	if pl.vecFallback {
		return nil, false, nil
	}
	prm := pl.params[0]
	n := prm.units*max(spec.vec, 1) + prm.tail
	pp := &ptPlan{plan: pl, block: p.nt}
	delete(pl.defines, "EW_UNROLL")
	pl.defines["EW_PT_NT"] = fmt.Sprint(p.nt)
	switch p.kind {
	case ptGeneric:
		delete(pl.defines, "EW_FLAT")
		pp.fn = "kr_ew_pt_generic"
		pl.defines["EW_PT_EPT"] = fmt.Sprint(p.vt)
		need := (prm.units + p.nt*p.vt - 1) / (p.nt * p.vt)
		pp.grid = p.grid[0]
		if pp.grid < need {
			pp.grid = need
		}
		if prm.units == 0 {
			pp.grid = 0
		}
	default:
		if prm.ndim != 1 {
			// Not one contiguous run: PyTorch would not have taken this path.
			return nil, false, nil
		}
		pp.fn = "kr_ew_pt_lin"
		if p.kind == ptUnrolled && p.dyn != "" && spec.op == "COPY" && pr.in[0].t != nil && ptDynOut[pr.out.DType] == p.dyn {
			src, ok1 := ptScalarType(pr.in[0].t.DType)
			dst, ok2 := ptScalarType(pr.out.DType)
			if ok1 && ok2 {
				pp.fn = "kr_ew_pt_dyncopy"
				pl.defines["EW_PT_DYN"] = p.dyn
				if ptDynCall {
					pl.defines["EW_PT_DYN_CALL"] = "1"
				}
				pl.params[0].dyn = src | dst<<8
			}
		}
		ept, grid := ptLinEPT(p, n)
		pl.defines["EW_PT_EPT"] = fmt.Sprint(ept)
		pp.grid = grid
		if n == 0 {
			pp.grid = 0
		}
	}
	return pp, true, nil
}

// ptOutStrides returns the strides with which PyTorch's TensorIterator
// allocates the result of shape for an input of the same shape laid out
// with strides: dense, its dimensions ordered as the input's strides
// order them (the neg of a transposed slice comes out transposed, not
// contiguous). ok false when the input's shape differs, the input is
// contiguous, or its strides do not order the dimensions unambiguously
// (zeros or ties other than dimensions of size 1), where the contiguous
// layout is kept.
func ptOutStrides(shape, inShape, strides []int64) ([]int64, bool) {
	if !slices.Equal(shape, inShape) || len(strides) != len(shape) {
		return nil, false
	}
	if (&Tensor{Shape: shape, Strides: strides}).Contiguous() {
		return nil, false
	}
	var dims []int
	for d := range shape {
		if shape[d] == 1 {
			continue
		}
		if strides[d] <= 0 {
			return nil, false
		}
		dims = append(dims, d)
	}
	slices.SortStableFunc(dims, func(a, b int) int { return cmp.Compare(strides[a], strides[b]) })
	for i := 1; i < len(dims); i++ {
		if strides[dims[i]] == strides[dims[i-1]] {
			return nil, false
		}
	}
	out := ContiguousStrides(shape)
	step := int64(1)
	for _, d := range dims {
		out[d] = step
		step *= shape[d]
	}
	return out, true
}
