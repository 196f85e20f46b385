package tier3

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/kreplay/kreplay/internal/cuda"
)

// The elementwise family's kernels: one N-d strided elementwise kernel
// (elementwise.cu) specialised per op, dtypes, operand kinds and vector
// width, which every elementwise op, copy, cast, fill and cat runs on; the
// gather kernel (index.cu) and arange (fill.cu).

//go:embed kernels/ew_common.cu
var ewCommonSource string

//go:embed kernels/elementwise.cu
var ewSource string

// ewBlock is the kernels' block size (EW_BLOCK in the sources).
const ewBlock = 256

// ewMaxDims is the most dimensions a problem may have after coalescing.
const ewMaxDims = 8

// ewCodes maps kreplay dtypes to the kernels' dtype codes (ew_common.cu).
var ewCodes = map[string]string{
	"bool": "EW_BOOL", "u8": "EW_U8", "i8": "EW_I8", "i16": "EW_I16", "i32": "EW_I32", "i64": "EW_I64",
	"f16": "EW_F16", "bf16": "EW_BF16", "f32": "EW_F32", "f64": "EW_F64", "f8e4m3": "EW_F8E4M3", "f8e5m2": "EW_F8E5M2",
}

// ewRawDType is the integer dtype of an element size, for copies that move
// bits (same dtype on both sides, gathers).
func ewRawDType(size int64) string {
	switch size {
	case 1:
		return "u8"
	case 2:
		return "i16"
	case 4:
		return "i32"
	}
	return "i64"
}

// ewCType is the C type values of dtype compute in: float for the 16- and
// 32-bit floating types (PyTorch's opmath type), double, long long, bool,
// and int for the narrower integers.
func ewCType(dtype string) string {
	switch dtype {
	case "f16", "bf16", "f32", "f8e4m3", "f8e5m2":
		return "float"
	case "f64":
		return "double"
	case "i64":
		return "long long"
	case "bool":
		return "bool"
	}
	return "int"
}

// ewOperand is one operand of an elementwise problem: a tensor (broadcast
// to the output's shape), a constant, or nothing.
type ewOperand struct {
	t     *Tensor
	c     ewScalar
	isSet bool // a constant when t is nil
}

func ewTensorOperand(t *Tensor) ewOperand { return ewOperand{t: t, isSet: true} }
func ewConstOperand(c ewScalar) ewOperand { return ewOperand{c: c, isSet: true} }

// ewProblem is out = op(operands) over out's shape.
type ewProblem struct {
	out *Tensor
	in  [3]ewOperand
}

// ewSpec is what the kernel compiles for: the op (EW_<op> in the source),
// the compute C type, alpha (add, sub, rsub, addcmul) and whether the
// operands' dtypes are replaced by integers of their size (bit copies).
type ewSpec struct {
	op    string
	ct    string
	alpha ewScalar
	raw   bool
	// vec forces the vector width (0: the widest the problems allow); a
	// width they do not allow gives a plan with vecFallback set.
	vec int64
	// pt is the traced kernel's strategy (faithful replay, faithful.go).
	pt ptKernel
}

// ewLayout is a problem's iteration space after broadcasting, reordering
// and coalescing: sizes from the outermost dimension in, and strides in
// elements for the output and each operand (nil for constants).
type ewLayout struct {
	sizes   []int64
	strides [4][]int64
}

// ewBroadcastStrides returns t's strides over shape, 0 where t broadcasts.
func ewBroadcastStrides(t *Tensor, shape []int64) ([]int64, error) {
	off := len(shape) - len(t.Shape)
	if off < 0 {
		return nil, fmt.Errorf("%w: shape %v does not broadcast to %v", ErrUnsupported, t.Shape, shape)
	}
	st := make([]int64, len(shape))
	for i, d := range t.Shape {
		switch {
		case d == shape[off+i]:
			st[off+i] = t.Strides[i]
		case d == 1:
			st[off+i] = 0
		default:
			return nil, fmt.Errorf("%w: shape %v does not broadcast to %v", ErrUnsupported, t.Shape, shape)
		}
	}
	return st, nil
}

// ewCoalesce drops size-1 dimensions, orders the rest from the largest
// stride out (by the first operand whose strides tell two dimensions apart,
// broadcast dimensions telling nothing), and merges neighbours that every
// operand steps through as one. strides[k] is nil for a constant operand.
// An empty space becomes one dimension of size 1.
func ewCoalesce(shape []int64, strides [4][]int64) ewLayout {
	var dims []int
	for d, n := range shape {
		if n != 1 {
			dims = append(dims, d)
		}
	}
	// Insertion sort: stable, and the order need not be total.
	outer := func(a, b int) bool {
		for _, st := range strides {
			if st == nil || st[a] == 0 || st[b] == 0 {
				continue
			}
			if st[a] != st[b] {
				return st[a] > st[b]
			}
		}
		return false
	}
	for i := 1; i < len(dims); i++ {
		for j := i; j > 0 && outer(dims[j], dims[j-1]); j-- {
			dims[j], dims[j-1] = dims[j-1], dims[j]
		}
	}
	var l ewLayout
	for _, d := range dims {
		n := len(l.sizes)
		merge := n > 0
		if merge {
			for k, st := range strides {
				if st == nil {
					continue
				}
				if l.strides[k][n-1] != st[d]*shape[d] {
					merge = false
					break
				}
			}
		}
		if merge {
			l.sizes[n-1] *= shape[d]
			for k, st := range strides {
				if st != nil {
					l.strides[k][n-1] = st[d]
				}
			}
			continue
		}
		l.sizes = append(l.sizes, shape[d])
		for k, st := range strides {
			if st != nil {
				l.strides[k] = append(l.strides[k], st[d])
			}
		}
	}
	if len(l.sizes) == 0 {
		l.sizes = []int64{1}
		for k, st := range strides {
			if st != nil {
				l.strides[k] = []int64{0}
			}
		}
	}
	return l
}

// ewMagic returns the multiplier and shift that divide n < 2^31 by d with
// (umulhi(n, magic) + n) >> shift.
func ewMagic(d int64) (magic, shift uint32) {
	if d < 1 || d >= 1<<31 {
		return 0, 0 // unused: such problems index in 64 bits
	}
	s := uint32(0)
	for ; s < 32; s++ {
		if int64(1)<<s >= d {
			break
		}
	}
	m := (uint64(1)<<32)*(uint64(1)<<s-uint64(d))/uint64(d) + 1
	return uint32(m), s
}

// ewVecOK reports whether l can run with v elements per unit: the output
// and every tensor operand contiguous (or, for operands, broadcast) along
// the innermost dimension, units aligned to v*size bytes, at most 16 bytes
// per unit of the narrowest dtype and 32 of the widest, and (the fast
// kernel) at most 16 of the output.
//
// forced is set when the width is the traced kernel's (the faithful
// replay: PyTorch ran that width, so only what kreplay's kernel needs is
// checked). Then the byte bounds count only the tensors loaded or stored
// as vectors (an operand broadcast along the innermost dimension, such as
// a 0-dim f64 scalar beside f16 tensors, loads one element per unit), and
// a one-dimensional space shorter than v, which has no full unit, is
// allowed (kr_ew_pt_lin does it element by element, as PyTorch's
// vectorized kernel does its remainder). The fast kernel's widths are
// chosen as before.
func ewVecOK(l ewLayout, v int64, ptrs [4]cuda.DevicePtr, sizes [4]int64, forced bool) bool {
	if v == 1 {
		return true
	}
	inner := len(l.sizes) - 1
	if len(l.sizes) == 1 && l.sizes[0] < v {
		return forced
	}
	var lo, hi int64 = 1 << 62, 0
	for k := range 4 {
		if l.strides[k] == nil || (forced && k > 0 && l.strides[k][inner] == 0) {
			continue
		}
		lo, hi = min(lo, sizes[k]), max(hi, sizes[k])
	}
	if v*lo > 16 || v*hi > 32 {
		return false
	}
	// kreplay's fast kernel stores at most 16 bytes a unit, so that each
	// store instruction of a warp writes one contiguous run (a unit of
	// 8 f32, two 16-byte stores a thread at a 32-byte stride, halved an
	// f16 to f32 cast's bandwidth: 0.71 of a device copy on an H100,
	// 0.90 with units of 4).
	if !forced && v*sizes[0] > 16 {
		return false
	}
	if len(l.sizes) > 1 && l.sizes[inner]%v != 0 {
		return false
	}
	for k := range 4 {
		st := l.strides[k]
		if st == nil {
			continue
		}
		switch {
		case st[inner] == 1:
			if uint64(ptrs[k])%uint64(v*sizes[k]) != 0 {
				return false
			}
			for _, s := range st[:inner] {
				if s%v != 0 {
					return false
				}
			}
		case st[inner] == 0 && k > 0:
		default:
			return false
		}
	}
	return true
}

// ewParams is the EwParams struct of elementwise.cu.
type ewParams struct {
	ptr   [4]cuda.DevicePtr
	units int64
	tail  int64
	ndim  int32
	dyn   int32 // kr_ew_pt_dyncopy's run-time dtypes: source | destination << 8
	size  [ewMaxDims]int64
	magic [ewMaxDims]uint32
	shift [ewMaxDims]uint32
	st    [4][ewMaxDims]int64
	istr  [4]int64
	cd    [4]float64
	ci    [4]int64
}

// ewParamsSize is sizeof(EwParams).
const ewParamsSize = 536

// ewAppendDivmod appends, little-endian as the device structs lay them
// out, a layout's dimension sizes (int64) and their fast-division magic
// numbers and shifts (uint32).
func ewAppendDivmod(b []byte, size *[ewMaxDims]int64, magic, shift *[ewMaxDims]uint32) []byte {
	le := binary.LittleEndian
	for _, x := range size {
		b = le.AppendUint64(b, uint64(x))
	}
	for _, x := range magic {
		b = le.AppendUint32(b, x)
	}
	for _, x := range shift {
		b = le.AppendUint32(b, x)
	}
	return b
}

// bytes lays the struct out as the device compiler does (8-byte alignment,
// no padding).
func (p *ewParams) bytes() []byte {
	b := make([]byte, 0, ewParamsSize)
	le := binary.LittleEndian
	for _, x := range p.ptr {
		b = le.AppendUint64(b, uint64(x))
	}
	b = le.AppendUint64(b, uint64(p.units))
	b = le.AppendUint64(b, uint64(p.tail))
	b = le.AppendUint32(b, uint32(p.ndim))
	b = le.AppendUint32(b, uint32(p.dyn))
	b = ewAppendDivmod(b, &p.size, &p.magic, &p.shift)
	for _, st := range p.st {
		for _, x := range st {
			b = le.AppendUint64(b, uint64(x))
		}
	}
	for _, x := range p.istr {
		b = le.AppendUint64(b, uint64(x))
	}
	for _, x := range p.cd {
		b = le.AppendUint64(b, math.Float64bits(x))
	}
	for _, x := range p.ci {
		b = le.AppendUint64(b, uint64(x))
	}
	return b
}

// ewPlan is a compiled-kernel choice for a batch of problems.
type ewPlan struct {
	defines map[string]string
	params  []ewParams
	units   int64 // the largest problem's units
	tail    bool
	// vecFallback: spec.vec was not allowed, and the plan uses width 1.
	vecFallback bool
}

// ewMakePlan lays out the problems (all of one kind: same dtypes and
// operand kinds) and picks the widest vector width they all allow.
func ewMakePlan(spec ewSpec, probs []ewProblem) (*ewPlan, error) {
	if len(probs) == 0 {
		return nil, fmt.Errorf("no elementwise problem")
	}
	ct := spec.ct
	if spec.raw {
		ct = "int"
		if probs[0].out.ElemSize() == 8 {
			ct = "long long"
		}
	}
	layouts, sizes, wide, err := ewLayouts(probs)
	if err != nil {
		return nil, err
	}
	// innerZero tells an operand broadcast along the innermost dimension
	// (kind EW_KB when vectorised): all problems of a batch must agree.
	innerZero := func(i, k int) bool {
		st := layouts[i].strides[k+1]
		return st != nil && st[len(st)-1] == 0
	}
	vec := ewVecWidth(spec, probs, layouts, sizes, innerZero)
	var maxBytes int64
	for k := range 4 {
		maxBytes = max(maxBytes, vec*sizes[k])
	}
	unroll := min(max(32/max(maxBytes, 1), 1), 4)

	pl := &ewPlan{defines: map[string]string{
		"EW_OP": "EW_" + strings.ToUpper(spec.op), "EW_CT": ct,
		"EW_VEC": fmt.Sprint(vec), "EW_UNROLL": fmt.Sprint(unroll),
	}, vecFallback: spec.vec > 1 && vec != spec.vec}
	if wide {
		pl.defines["EW_IDX64"] = "1"
	}
	flat := true
	for _, l := range layouts {
		flat = flat && len(l.sizes) == 1
	}
	if flat {
		pl.defines["EW_FLAT"] = "1"
	}
	if err := ewOperandDefines(spec, probs[0], vec, pl.defines, func(k int) bool { return innerZero(0, k) }); err != nil {
		return nil, err
	}
	for i, pr := range probs {
		p, total := ewProblemParams(spec, pr, layouts[i], vec)
		if p.units >= 1<<31 || total >= 1<<31 {
			pl.defines["EW_IDX64"] = "1"
		}
		pl.params = append(pl.params, p)
		pl.units = max(pl.units, p.units)
		pl.tail = pl.tail || p.tail > 0
	}
	return pl, nil
}

// ewDType is the dtype an operand is computed in: its own, or for a raw
// (bytes-moving) kernel the integer of its size.
func ewDType(spec ewSpec, t *Tensor) (string, error) {
	d := t.DType
	if spec.raw {
		d = ewRawDType(t.ElemSize())
	}
	if ewCodes[d] == "" {
		return "", fmt.Errorf("%w: dtype %q in an elementwise kernel", ErrUnsupported, t.DType)
	}
	return d, nil
}

// ewLayouts coalesces each problem's output and operand strides; sizes are
// the element sizes of the output and operands, wide whether any spans
// 2^31 elements or bytes.
func ewLayouts(probs []ewProblem) (layouts []ewLayout, sizes [4]int64, wide bool, err error) {
	layouts = make([]ewLayout, len(probs))
	for i, pr := range probs {
		shape := pr.out.Shape
		var strides [4][]int64
		strides[0] = pr.out.Strides
		if len(strides[0]) != len(shape) {
			return nil, sizes, false, fmt.Errorf("output strides %v for shape %v", pr.out.Strides, shape)
		}
		sizes[0] = pr.out.ElemSize()
		wide = wide || pr.out.Span >= 1<<31 || pr.out.Numel() >= 1<<31
		for k, op := range pr.in {
			if op.t == nil {
				continue
			}
			st, err := ewBroadcastStrides(op.t, shape)
			if err != nil {
				return nil, sizes, false, err
			}
			strides[k+1] = st
			sizes[k+1] = op.t.ElemSize()
			wide = wide || op.t.Span >= 1<<31
		}
		layouts[i] = ewCoalesce(shape, strides)
		if len(layouts[i].sizes) > ewMaxDims {
			return nil, sizes, false, fmt.Errorf("%w: %d dimensions after coalescing (at most %d)", ErrUnsupported, len(layouts[i].sizes), ewMaxDims)
		}
	}
	return layouts, sizes, wide, nil
}

// ewVecWidth picks the widest vector width every problem's layout and
// pointers allow (spec.vec, when set, is the only one tried).
func ewVecWidth(spec ewSpec, probs []ewProblem, layouts []ewLayout, sizes [4]int64, innerZero func(i, k int) bool) int64 {
	widths := []int64{16, 8, 4, 2}
	if spec.vec > 0 {
		widths = []int64{spec.vec}
	}
	for _, v := range widths {
		if v == 1 {
			break
		}
		ok := true
		for i, pr := range probs {
			var ptrs [4]cuda.DevicePtr
			ptrs[0] = pr.out.Ptr
			for k, op := range pr.in {
				if op.t != nil {
					ptrs[k+1] = op.t.Ptr
				}
				if innerZero(i, k) != innerZero(0, k) {
					ok = false
				}
			}
			if !ok || !ewVecOK(layouts[i], v, ptrs, sizes, spec.vec > 1) {
				ok = false
				break
			}
		}
		if ok {
			return v
		}
	}
	return 1
}

// ewOperandDefines sets the output's and each operand's dtype code and
// kind (tensor, broadcast along the innermost dimension, constant, none).
func ewOperandDefines(spec ewSpec, first ewProblem, vec int64, defs map[string]string, innerZero func(k int) bool) error {
	d, err := ewDType(spec, first.out)
	if err != nil {
		return err
	}
	defs["EW_DO"] = ewCodes[d]
	for k, op := range first.in {
		n := fmt.Sprint(k + 1)
		kind, code := "EW_KN", "EW_BOOL"
		switch {
		case op.t != nil:
			d, err := ewDType(spec, op.t)
			if err != nil {
				return err
			}
			code = ewCodes[d]
			kind = "EW_KT"
			if vec > 1 && innerZero(k) {
				kind = "EW_KB"
			}
		case op.isSet:
			kind = "EW_KC"
		}
		defs["EW_K"+n], defs["EW_D"+n] = kind, code
	}
	return nil
}

// ewProblemParams is one problem's kernel parameters, and its element
// count.
func ewProblemParams(spec ewSpec, pr ewProblem, l ewLayout, vec int64) (ewParams, int64) {
	nd := len(l.sizes)
	p := ewParams{ndim: int32(nd)}
	p.ptr[0] = pr.out.Ptr
	for k, op := range pr.in {
		if op.t != nil {
			p.ptr[k+1] = op.t.Ptr
		}
		c := op.c
		if op.t != nil || !op.isSet {
			c = ewScalar{}
		}
		p.cd[k], p.ci[k] = c.f, c.i
	}
	p.cd[3], p.ci[3] = spec.alpha.f, spec.alpha.i
	total := int64(1)
	for _, n := range l.sizes {
		total *= n
	}
	if nd == 1 {
		p.units, p.tail = total/vec, total%vec
	} else {
		p.units = total / vec
	}
	for d := range nd {
		// Innermost first; the innermost counts units.
		n := l.sizes[nd-1-d]
		step := int64(1)
		if d == 0 {
			n /= vec
			step = vec
		}
		p.size[d] = n
		p.magic[d], p.shift[d] = ewMagic(n)
		for k := range 4 {
			if l.strides[k] != nil {
				p.st[k][d] = l.strides[k][nd-1-d] * step
			}
		}
	}
	for k := range 4 {
		if l.strides[k] != nil {
			p.istr[k] = l.strides[k][nd-1]
		}
	}
	return p, total
}

// ewSources returns the elementwise kernel source with defs.
func ewSources(name, code string, defs map[string]string) Source {
	return Source{Name: name, Code: utilSource + "\n" + ewCommonSource + "\n" + code, Defines: defs}
}

// ewGrid returns the blocks for units work items of unroll each per
// thread: enough to cover them, at most as many as fit on the GPU at once
// (the kernels loop over the rest).
func ewGrid(e *Env, f *cuda.Function, units, unroll int64) (uint32, error) {
	need := max((units+ewBlock*unroll-1)/(ewBlock*unroll), 1)
	limit := int64(1 << 20)
	if e.SMs > 0 {
		occ, err := f.MaxActiveBlocksPerSM(ewBlock, 0)
		if err != nil {
			return 0, err
		}
		limit = int64(e.SMs) * int64(max(occ, 1))
	}
	return uint32(min(need, limit)), nil
}

// ewCompile compiles the kernel for a batch of problems and returns the
// launch of all of them (one launch; a batch of several reads its
// parameters from device memory). Problems with no elements launch
// nothing.
func (e *Env) ewCompile(spec ewSpec, probs []ewProblem) (func(s *cuda.Stream) error, error) {
	pl, err := ewMakePlan(spec, probs)
	if err != nil {
		return nil, err
	}
	if pl.units == 0 && !pl.tail {
		return func(*cuda.Stream) error { return nil }, nil
	}
	name := "kr_ew"
	if len(probs) > 1 {
		name = "kr_ew_batched"
	}
	f, err := e.Function(ewSources("elementwise.cu", ewSource, pl.defines), name)
	if err != nil {
		return nil, err
	}
	unroll := int64(1)
	fmt.Sscan(pl.defines["EW_UNROLL"], &unroll)
	gx, err := ewGrid(e, f, pl.units, unroll)
	if err != nil {
		return nil, err
	}
	block := [3]uint32{ewBlock, 1, 1}
	if len(probs) == 1 {
		arg := cuda.RawArg{Data: pl.params[0].bytes(), Align: 8}
		grid := [3]uint32{gx, 1, 1}
		return func(s *cuda.Stream) error { return f.Launch(grid, block, 0, s, arg) }, nil
	}
	var blob []byte
	for i := range pl.params {
		blob = append(blob, pl.params[i].bytes()...)
	}
	buf, err := e.NewTensor([]int64{int64(len(blob))}, []int64{1}, "u8")
	if err != nil {
		return nil, err
	}
	if err := cuda.CopyHtoD(buf.Ptr, blob, e.Stream); err != nil {
		return nil, err
	}
	grid := [3]uint32{gx, uint32(len(probs)), 1}
	return func(s *cuda.Stream) error { return f.Launch(grid, block, 0, s, buf.Ptr) }, nil
}
