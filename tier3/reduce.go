package tier3

import (
	_ "embed"
	"encoding/binary"
	"math"
	"strconv"
	"strings"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
)

//go:embed kernels/reduce.cu
var reduceSource string

func init() {
	Register(buildReduce, "aten::sum", "aten::mean", "aten::prod", "aten::max", "aten::min", "aten::amax",
		"aten::amin", "aten::argmax", "aten::argmin", "aten::any", "aten::all")
}

// rdOp is a reduction, numbered as RD_OP in kernels/reduce.cu.
type rdOp int

const (
	rdSum rdOp = iota
	rdProd
	rdMax
	rdMin
	rdArgmax
	rdArgmin
	rdAny
	rdAll
)

func (o rdOp) isArg() bool { return o == rdArgmax || o == rdArgmin }

// reduceSpec is what a traced reduction computes.
type reduceSpec struct {
	op      rdOp
	mean    bool
	all     bool  // every dim is reduced
	dims    []int // the reduced dims (sorted) when !all
	keepdim bool
	in      string // input dtype
	out     string // dtype of the values output; "" when there is none
	indices bool   // an i64 indices output
}

// parseReduce reads a reduction's arguments from its signature:
//
//	sum, mean, prod (self, dtype) | (self, dim, keepdim, dtype)
//	max, min        (self)        | (self, dim, keepdim) -> values, indices
//	amax, amin, argmax, argmin, any, all (self[, dim[, keepdim]])
func parseReduce(sig *signatures.Signature) (*reduceSpec, error) {
	x := rdArg(sig, 0)
	if !x.IsTensor() {
		return nil, rdUnsupported("%s without a tensor input", sig.Op)
	}
	if n := rdTensorInputs(sig); n != 1 {
		return nil, rdUnsupported("%s with %d tensor inputs is not a reduction", sig.Op, n)
	}
	rank := len(x.Shape)
	s := &reduceSpec{in: signatures.DType(x.Type)}
	if _, err := rdCode(s.in); err != nil {
		return nil, err
	}
	name := strings.TrimPrefix(sig.Op, "aten::")
	var dimIn signatures.Input
	var keepArg, dtypeArg string
	nargs := len(sig.Inputs) - 1
	switch name {
	case "sum", "mean", "prod":
		s.op = map[string]rdOp{"sum": rdSum, "mean": rdSum, "prod": rdProd}[name]
		s.mean = name == "mean"
		if nargs == 1 {
			dtypeArg = rdArg(sig, 1).Value
		} else {
			dimIn, keepArg, dtypeArg = rdArg(sig, 1), rdArg(sig, 2).Value, rdArg(sig, 3).Value
		}
	case "max", "min", "amax", "amin", "argmax", "argmin", "any", "all":
		s.op = map[string]rdOp{"max": rdMax, "min": rdMin, "amax": rdMax, "amin": rdMin,
			"argmax": rdArgmax, "argmin": rdArgmin, "any": rdAny, "all": rdAll}[name]
		dimIn, keepArg = rdArg(sig, 1), rdArg(sig, 2).Value
	default:
		return nil, rdUnsupported("%s is not a reduction kreplay replays", sig.Op)
	}
	dimArg := dimIn.Value
	if (dimIn.Type == "Scalar" || dimIn.Type == "ScalarList") && strings.TrimSpace(dimArg) == "" {
		// A dim was passed but the trace has no concrete value for it.
		return nil, rdUnsupported("%s: the trace records no value for the dim argument", sig.Op)
	}
	var err error
	if s.dims, s.all, err = rdParseDims(dimArg, rank); err != nil {
		return nil, rdUnsupported("%s: %v", sig.Op, err)
	}
	if s.keepdim, err = rdParseBool(keepArg); err != nil {
		return nil, rdUnsupported("%s: %v", sig.Op, err)
	}
	dt, err := rdParseScalarType(dtypeArg)
	if err != nil {
		return nil, err
	}
	switch {
	case s.op == rdSum || s.op == rdProd:
		s.out = s.in
		if !rdIsFloat(s.in) {
			s.out = "i64"
		}
		if dt != "" {
			s.out = dt
		}
		if s.mean && !rdIsFloat(s.out) {
			return nil, rdUnsupported("%s of %s", sig.Op, s.out)
		}
		if dt != "" && rdIsFloat(s.out) != rdIsFloat(s.in) {
			return nil, rdUnsupported("%s of %s into %s", sig.Op, s.in, dt)
		}
	case s.op.isArg():
		s.indices = true
	case s.op == rdAny || s.op == rdAll:
		s.out = "bool"
		if s.in == "u8" {
			s.out = "u8"
		}
	default: // max, min, amax, amin
		s.out = s.in
		s.indices = (name == "max" || name == "min") && nargs >= 1
	}
	if s.indices && !s.all && len(s.dims) != 1 {
		return nil, rdUnsupported("%s with indices over %d dims", sig.Op, len(s.dims))
	}
	if _, err := rdCode(s.out); s.out != "" && err != nil {
		return nil, err
	}
	return s, nil
}

// reduced marks the reduced dims of a rank-dim input.
func (s *reduceSpec) reduced(rank int) []bool {
	r := make([]bool, rank)
	for i := range r {
		r[i] = s.all
	}
	for _, d := range s.dims {
		r[d] = true
	}
	return r
}

// outShape is the shape of the outputs for an input of the given shape.
func (s *reduceSpec) outShape(shape []int64) []int64 {
	out := []int64{}
	for i, red := range s.reduced(len(shape)) {
		switch {
		case !red:
			out = append(out, shape[i])
		case s.keepdim:
			out = append(out, 1)
		}
	}
	return out
}

// rdPlan is the launch plan of a reduction; raw() mirrors struct RdPlan.
type rdPlan struct {
	kept, red []rdDim // after merging; kept in output order except in cols mode
	O, R      int64   // outputs, elements per output
	cols      bool    // rd_cols rather than rd_rows
	V, TPR    int64   // vector width; threads per row (rows mode)
	split     int64   // partial reductions per output (1: none)
	chunk     int64   // elements per partial reduction
	ocontig   bool    // the output offset is the output index
	scale     float64 // mean: 1/R

	grid, block [3]uint32
	finishGrid  uint32
}

// planReduce lays out the reduction of the dims marked in reduced of a
// tensor (shape, strides, element size esize) for a GPU of sms SMs.
// ordered keeps the reduced dims in logical order (arg reductions, whose
// index is a position in that order); otherwise they are sorted by stride
// so that they merge as much as possible.
func planReduce(shape, strides []int64, reduced []bool, esize int64, ordered bool, sms int) (*rdPlan, error) {
	ost := make([]int64, len(shape))
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		if !reduced[i] {
			ost[i] = acc
			acc *= shape[i]
		}
	}
	var kept, red []rdDim
	for i, s := range shape {
		if reduced[i] {
			red = append(red, rdDim{s, strides[i], 0})
		} else {
			kept = append(kept, rdDim{s, strides[i], ost[i]})
		}
	}
	if !ordered {
		// Stable insertion sort by descending input stride.
		for i := 1; i < len(red); i++ {
			for j := i; j > 0 && red[j].in > red[j-1].in; j-- {
				red[j], red[j-1] = red[j-1], red[j]
			}
		}
	}
	p := &rdPlan{kept: rdMergeDims(kept), red: rdMergeDims(red), O: 1, R: 1, split: 1, ocontig: true, scale: 1}
	if len(p.kept) > rdMaxDims || len(p.red) > rdMaxDims {
		return nil, rdUnsupported("reduction over %d kept and %d reduced dims after merging; kernels take %d",
			len(p.kept), len(p.red), rdMaxDims)
	}
	for _, d := range p.kept {
		p.O *= d.size
	}
	for _, d := range p.red {
		p.R *= d.size
	}
	if p.R > 0 {
		p.scale = 1 / float64(p.R)
	} else {
		p.scale = math.NaN()
	}
	p.chunk = max(p.R, 1)
	target := int64(max(sms, 1)) * 2048 // threads that fill the GPU
	minKept := int64(math.MaxInt64)
	for _, d := range p.kept {
		minKept = min(minKept, d.in)
	}
	nr := len(p.red)
	p.cols = len(p.kept) > 0 && (nr == 0 || p.red[nr-1].in > minKept || p.R < 16)
	if !p.cols {
		maxV := max(16/esize, 1)
		p.V = 1
		if nr == 1 && p.red[0].in == 1 {
			p.V = maxV
			for _, d := range p.kept {
				if d.in%maxV != 0 {
					p.V = 1
				}
			}
		}
		// Each thread gets 8 vectors (two rounds of four loads in flight)
		// or, when that leaves the GPU short of threads, fewer: up to 512
		// threads a row. Rows still too few to fill the GPU are split
		// into chunks of about 16 vectors a thread: many more chunks than
		// the GPU holds at once, so the last wave is short.
		vecs := rdCeilDiv(p.R, p.V)
		p.TPR = rdClamp(rdPow2Floor(vecs/8), 4, 512)
		for p.O*p.TPR < target && p.TPR < min(512, rdPow2Floor(vecs)) {
			p.TPR *= 2
		}
		if threads := p.O * p.TPR; 2*threads <= target && vecs >= 16*p.TPR {
			split := min(max(rdCeilDiv(target, threads), rdCeilDiv(vecs, 16*p.TPR)), rdCeilDiv(vecs, 2*p.TPR))
			p.chunk = rdCeilDiv(rdCeilDiv(p.R, split), p.V) * p.V
			p.split = rdCeilDiv(p.R, p.chunk)
		}
		p.grid, p.block = rdRowsLaunch(p.O*p.split, p.TPR, sms)
	} else {
		// Threads along the kept dim with the smallest input stride, moved
		// last; the output keeps its logical layout through the strides.
		best := len(p.kept) - 1
		for i, d := range p.kept {
			if d.in < p.kept[best].in {
				best = i
			}
		}
		if best != len(p.kept)-1 {
			d := p.kept[best]
			p.kept = append(append(p.kept[:best:best], p.kept[best+1:]...), d)
			p.ocontig = false
		}
		maxV := min(max(16/esize, 1), 8)
		inner := p.kept[len(p.kept)-1]
		p.V = 1
		if inner.in == 1 && inner.size%maxV == 0 {
			p.V = maxV
			for _, d := range append(p.kept[:len(p.kept)-1:len(p.kept)-1], p.red...) {
				if d.in%maxV != 0 {
					p.V = 1
				}
			}
		}
		tiles := rdCeilDiv(inner.size, 32*p.V)
		blocks := p.O / max(inner.size, 1) * tiles
		if 2*blocks*256 <= target && p.R >= 8*8 {
			split := min(max(rdCeilDiv(target/256, max(blocks, 1)), rdCeilDiv(p.R, 8*32)), rdCeilDiv(p.R, 8*4), 65535)
			p.chunk = rdCeilDiv(p.R, split)
			p.split = rdCeilDiv(p.R, p.chunk)
		}
		p.grid = [3]uint32{uint32(rdClamp(blocks, 1, int64(max(sms, 1))*64)), uint32(p.split), 1}
		p.block = [3]uint32{32, 8, 1}
	}
	p.finishGrid = uint32(rdClamp(rdCeilDiv(p.O, 8), 1, int64(max(sms, 1))*64))
	return p, nil
}

// raw lays the plan out as struct RdPlan.
func (p *rdPlan) raw() cuda.RawArg {
	var b []byte
	put := func(v int64) { b = binary.LittleEndian.AppendUint64(b, uint64(v)) }
	arrays := func(ds []rdDim, fs ...func(rdDim) int64) {
		put(int64(len(ds)))
		for _, f := range fs {
			for i := 0; i < rdMaxDims; i++ {
				v := int64(1)
				if i < len(ds) {
					v = f(ds[i])
				}
				put(v)
			}
		}
	}
	size := func(d rdDim) int64 { return d.size }
	in := func(d rdDim) int64 { return d.in }
	out := func(d rdDim) int64 { return d.out }
	arrays(p.kept, size, in, out)
	arrays(p.red, size, in)
	put(p.O)
	put(p.R)
	put(p.split)
	put(p.chunk)
	oc := int64(0)
	if p.ocontig {
		oc = 1
	}
	put(oc)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.scale))
	return cuda.RawArg{Data: b, Align: 8}
}

// rdStateSize is sizeof(St) in kernels/reduce.cu.
func rdStateSize(op rdOp, in string) int64 {
	acc := int64(8)
	switch {
	case op == rdAny || op == rdAll:
		acc = 4
	case in == "f16" || in == "bf16" || in == "f32":
		acc = 4
	}
	if op.isArg() {
		return 16
	}
	return acc
}

// reduceDefines are the compile-time definitions of one reduction kernel.
func reduceDefines(s *reduceSpec, p *rdPlan) (map[string]string, error) {
	in, err := rdCode(s.in)
	if err != nil {
		return nil, err
	}
	out := in
	if s.out != "" {
		if out, err = rdCode(s.out); err != nil {
			return nil, err
		}
	}
	op := s.op
	if s.indices && !op.isArg() { // max.dim / min.dim: values and indices
		op = map[rdOp]rdOp{rdMax: rdArgmax, rdMin: rdArgmin}[op]
	}
	mean := "0"
	if s.mean {
		mean = "1"
	}
	tpr, cols := p.TPR, "0"
	if p.cols {
		tpr, cols = 32, "1" // RD_TPR is unused by rd_cols; one value keeps one compilation
	}
	return map[string]string{
		"RD_IN": in, "RD_OUT": out, "RD_OP": strconv.Itoa(int(op)), "RD_MEAN": mean,
		"RD_V": strconv.FormatInt(p.V, 10), "RD_TPR": strconv.FormatInt(tpr, 10), "RD_COLS": cols,
	}, nil
}

func buildReduce(e *Env, sig *signatures.Signature) (*Instance, error) {
	s, err := parseReduce(sig)
	if err != nil {
		return nil, err
	}
	x, err := e.Input(sig.Inputs[0])
	if err != nil {
		return nil, err
	}
	// PyTorch's own strategy where the traced reduce_kernel's is one the
	// faithful kernel does (reduce_pt.go).
	if inst, err := rdPTBuild(e, sig, s, x); err != nil || inst != nil {
		return inst, err
	}
	op := s.op
	if s.indices {
		op = map[rdOp]rdOp{rdMax: rdArgmax, rdMin: rdArgmin, rdArgmax: rdArgmax, rdArgmin: rdArgmin}[op]
	}
	p, err := planReduce(x.Shape, x.Strides, s.reduced(len(x.Shape)), x.ElemSize(), op.isArg(), e.SMs)
	if err != nil {
		return nil, err
	}
	if p.R == 0 && (op == rdMax || op == rdMin || op.isArg()) {
		return nil, rdUnsupported("%s of an empty reduction (an error in PyTorch)", sig.Op)
	}
	if !s.mean {
		p.scale = 1
	}
	inst := &Instance{Inputs: []*Tensor{x}, FLOPs: x.Numel()}
	oshape := s.outShape(x.Shape)
	var vals, idx cuda.DevicePtr
	if s.out != "" {
		t, err := e.Output(oshape, s.out)
		if err != nil {
			return nil, err
		}
		inst.Outputs = append(inst.Outputs, t)
		vals = t.Ptr
	}
	if s.indices {
		t, err := e.Output(oshape, "i64")
		if err != nil {
			return nil, err
		}
		inst.Outputs = append(inst.Outputs, t)
		idx = t.Ptr
	}
	defs, err := reduceDefines(s, p)
	if err != nil {
		return nil, err
	}
	src := rdSource("reduce.cu", reduceSource, defs)
	name := "rd_rows"
	if p.cols {
		name = "rd_cols"
	}
	f, err := e.Function(src, name)
	if err != nil {
		return nil, err
	}
	var fin *cuda.Function
	var part cuda.DevicePtr
	if p.split > 1 {
		if fin, err = e.Function(src, "rd_finish"); err != nil {
			return nil, err
		}
		if part, err = e.alloc(p.O * p.split * rdStateSize(op, s.in)); err != nil {
			return nil, err
		}
	}
	raw := p.raw()
	inst.Launch = func(st *cuda.Stream) error {
		if p.O == 0 {
			return nil
		}
		if err := f.Launch(p.grid, p.block, 0, st, x.Ptr, raw, vals, idx, part); err != nil {
			return err
		}
		if fin == nil {
			return nil
		}
		return fin.Launch([3]uint32{p.finishGrid, 1, 1}, [3]uint32{256, 1, 1}, 0, st, part, raw, vals, idx)
	}
	return inst, nil
}
