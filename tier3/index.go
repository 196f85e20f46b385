package tier3

import (
	_ "embed"
	"encoding/binary"
	"fmt"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
)

// The index family: aten::index_select(self, dim, index),
// aten::gather(self, dim, index), aten::embedding(weight, indices) and
// aten::index(self, indices) with one index tensor on the first dimension,
// all on one gather kernel (index.cu). Indices are random and in range
// (Env.Index). aten::index whose indices the trace does not describe (the
// profiler records the list as "" with no shapes) is not replayed.

//go:embed kernels/index.cu
var ewIndexSource string

func init() {
	Register(buildIndex, "aten::index_select", "aten::gather", "aten::embedding", "aten::index")
}

// ewGatherPlan is a gather read from a signature: out[pos] =
// src[srcOffset(pos) + index[indexOffset(pos)] * dstride] over the output
// shape, with per-dimension source and index strides.
type ewGatherPlan struct {
	src, index *signatures.Input
	out        *signatures.Input // traced out= tensor, or nil for a new contiguous one
	shape      []int64           // output shape
	sst, ist   []int64           // source and index strides over the output's dimensions
	dstride    int64             // source stride of the indexed dimension
	limit      int64             // size of the indexed dimension
}

func ewStridesOf(in *signatures.Input) []int64 {
	if len(in.Strides) == len(in.Shape) {
		return in.Strides
	}
	return ContiguousStrides(in.Shape)
}

func ewDimArg(in signatures.Input, rank int) (int, error) {
	s, err := ewParseScalar(in.Value)
	if err != nil || s.cat != ewIntCat {
		return 0, fmt.Errorf("%w: dim %q", ErrUnsupported, in.Value)
	}
	d := s.i
	if d < 0 {
		d += int64(rank)
	}
	if d < 0 || d >= int64(max(rank, 1)) {
		return 0, fmt.Errorf("%w: dim %d of rank %d", ErrUnsupported, s.i, rank)
	}
	return int(d), nil
}

// ewAnalyzeIndex reads an index-family signature.
func ewAnalyzeIndex(sig *signatures.Signature) (*ewGatherPlan, error) {
	ins := sig.Inputs
	if len(ins) < 2 || !ins[0].IsTensor() {
		return nil, fmt.Errorf("%w: %s without a tensor self", ErrUnsupported, sig.Op)
	}
	self := &ins[0]
	rank := len(self.Shape)
	sst := ewStridesOf(self)
	pl := &ewGatherPlan{src: self}
	isIndex := func(in *signatures.Input) error {
		if !in.IsTensor() {
			return fmt.Errorf("%w: %s index of type %q", ErrUnsupported, sig.Op, in.Type)
		}
		if d := signatures.DType(in.Type); d != "i64" && d != "i32" {
			return fmt.Errorf("%w: %s index of dtype %s", ErrUnsupported, sig.Op, d)
		}
		return nil
	}
	switch sig.Op {
	case "aten::index_select", "aten::gather":
		if len(ins) < 3 {
			return nil, fmt.Errorf("%w: %s with %d inputs", ErrUnsupported, sig.Op, len(ins))
		}
		dim, err := ewDimArg(ins[1], rank)
		if err != nil {
			return nil, err
		}
		idx := &ins[2]
		if err := isIndex(idx); err != nil {
			return nil, err
		}
		pl.index = idx
		if rank == 0 {
			// A 0-dim self: index 0 of a one-element tensor.
			pl.shape, pl.sst, pl.ist = idx.Shape, make([]int64, len(idx.Shape)), ewStridesOf(idx)
			pl.limit = 1
			break
		}
		pl.dstride, pl.limit = sst[dim], self.Shape[dim]
		if sig.Op == "aten::index_select" {
			if len(idx.Shape) > 1 {
				return nil, fmt.Errorf("%w: index_select with a %d-dim index", ErrUnsupported, len(idx.Shape))
			}
			pl.shape = append([]int64(nil), self.Shape...)
			pl.shape[dim] = idx.Numel()
			pl.sst = append([]int64(nil), sst...)
			pl.sst[dim] = 0
			pl.ist = make([]int64, rank)
			if len(idx.Shape) == 1 {
				pl.ist[dim] = ewStridesOf(idx)[0]
			}
		} else {
			if len(idx.Shape) != rank {
				return nil, fmt.Errorf("%w: gather index of rank %d for rank %d", ErrUnsupported, len(idx.Shape), rank)
			}
			for d := range rank {
				if d != dim && idx.Shape[d] > self.Shape[d] {
					return nil, fmt.Errorf("%w: gather index %v larger than self %v", ErrUnsupported, idx.Shape, self.Shape)
				}
			}
			pl.shape = idx.Shape
			pl.sst = append([]int64(nil), sst...)
			pl.sst[dim] = 0
			pl.ist = ewStridesOf(idx)
		}
		pl.out = ewOutArg(ins, 3, pl.shape)
	case "aten::embedding", "aten::index":
		var idx *signatures.Input
		if sig.Op == "aten::embedding" {
			if rank != 2 {
				return nil, fmt.Errorf("%w: embedding weight of rank %d", ErrUnsupported, rank)
			}
			idx = &ins[1]
		} else {
			if len(ins[1].List) != 1 || rank == 0 {
				return nil, fmt.Errorf("%w: aten::index with indices not traced as one tensor", ErrUnsupported)
			}
			t := ins[1].List[0]
			typ := ins[1].Type
			if signatures.DType(typ) != "i32" {
				typ = "long int" // the list's dtype is not traced: int64, as PyTorch's index tensors are
			}
			idx = &signatures.Input{Type: typ, Shape: t.Shape, Strides: t.Strides}
		}
		if err := isIndex(idx); err != nil {
			return nil, err
		}
		pl.index = idx
		ir := len(idx.Shape)
		pl.shape = append(append([]int64(nil), idx.Shape...), self.Shape[1:]...)
		pl.sst = append(make([]int64, ir), sst[1:]...)
		pl.ist = append(append([]int64(nil), ewStridesOf(idx)...), make([]int64, rank-1)...)
		pl.dstride, pl.limit = sst[0], self.Shape[0]
		if sig.Op == "aten::index" {
			pl.out = ewOutArg(ins, 2, pl.shape)
		}
	default:
		return nil, fmt.Errorf("%w: %s is not an index op", ErrUnsupported, sig.Op)
	}
	if pl.out != nil && signatures.DType(pl.out.Type) != signatures.DType(self.Type) {
		pl.out = nil
	}
	if signatures.DTypeSize(signatures.DType(self.Type)) == 0 {
		return nil, fmt.Errorf("%w: %s of dtype %s", ErrUnsupported, sig.Op, self.Type)
	}
	return pl, nil
}

// ewGatherParams is the EwGather struct of index.cu.
type ewGatherParams struct {
	out, src, idx cuda.DevicePtr
	units         int64
	ndim          int32
	size          [ewMaxDims]int64
	magic         [ewMaxDims]uint32
	shift         [ewMaxDims]uint32
	ost, sst, ist [ewMaxDims]int64
	dstride       int64
	limit         int64
}

// ewGatherParamsSize is sizeof(EwGather).
const ewGatherParamsSize = 376

func (p *ewGatherParams) bytes() []byte {
	b := make([]byte, 0, ewGatherParamsSize)
	le := binary.LittleEndian
	for _, x := range []cuda.DevicePtr{p.out, p.src, p.idx} {
		b = le.AppendUint64(b, uint64(x))
	}
	b = le.AppendUint64(b, uint64(p.units))
	b = le.AppendUint32(b, uint32(p.ndim))
	b = le.AppendUint32(b, 0)
	b = ewAppendDivmod(b, &p.size, &p.magic, &p.shift)
	for _, st := range [][ewMaxDims]int64{p.ost, p.sst, p.ist} {
		for _, x := range st {
			b = le.AppendUint64(b, uint64(x))
		}
	}
	b = le.AppendUint64(b, uint64(p.dstride))
	b = le.AppendUint64(b, uint64(p.limit))
	return b
}

// ewGatherLayout coalesces a gather's output space and picks the vector
// width: v output elements per unit where the innermost dimension is
// contiguous in the output and the source, the index constant along it,
// and every unit aligned to v*size bytes (at most 16).
func ewGatherLayout(shape, ost, sst, ist []int64, dstride, size int64, ptrs [2]cuda.DevicePtr) (ewLayout, int64) {
	l := ewCoalesce(shape, [4][]int64{ost, sst, ist, nil})
	inner := len(l.sizes) - 1
	for _, v := range []int64{16, 8, 4, 2} {
		if v*size > 16 || l.sizes[inner]%v != 0 || l.strides[0][inner] != 1 || l.strides[1][inner] != 1 ||
			l.strides[2][inner] != 0 || dstride%v != 0 {
			continue
		}
		ok := true
		for _, p := range ptrs {
			ok = ok && uint64(p)%uint64(v*size) == 0
		}
		for k := range 2 {
			for _, s := range l.strides[k][:inner] {
				ok = ok && s%v == 0
			}
		}
		if ok {
			return l, v
		}
	}
	return l, 1
}

// ewGatherKernel is a gather's kernel choice and parameters.
type ewGatherKernel struct {
	defines map[string]string
	params  ewGatherParams
	unroll  int64
}

// ewGatherMake lays out a gather of src by idx into out.
func ewGatherMake(pl *ewGatherPlan, src, idx, out *Tensor) (*ewGatherKernel, error) {
	size := src.ElemSize()
	l, vec := ewGatherLayout(pl.shape, out.Strides, pl.sst, pl.ist, pl.dstride, size, [2]cuda.DevicePtr{out.Ptr, src.Ptr})
	nd := len(l.sizes)
	if nd > ewMaxDims {
		return nil, fmt.Errorf("%w: a gather over %d dimensions", ErrUnsupported, nd)
	}
	p := ewGatherParams{out: out.Ptr, src: src.Ptr, idx: idx.Ptr, ndim: int32(nd), dstride: pl.dstride, limit: pl.limit}
	total := int64(1)
	for _, n := range l.sizes {
		total *= n
	}
	p.units = total / vec
	for d := range nd {
		n, step := l.sizes[nd-1-d], int64(1)
		if d == 0 {
			n, step = n/vec, vec
		}
		p.size[d] = n
		p.magic[d], p.shift[d] = ewMagic(n)
		p.ost[d] = l.strides[0][nd-1-d] * step
		p.sst[d] = l.strides[1][nd-1-d] * step
		p.ist[d] = l.strides[2][nd-1-d] * step
	}
	k := &ewGatherKernel{params: p, unroll: min(max(32/(vec*size), 1), 4)}
	k.defines = map[string]string{
		"EW_DS": ewCodes[ewRawDType(size)], "EW_DI": ewCodes[idx.DType],
		"EW_VEC": fmt.Sprint(vec), "EW_UNROLL": fmt.Sprint(k.unroll),
	}
	if total >= 1<<31 || out.Span >= 1<<31 || idx.Span >= 1<<31 {
		k.defines["EW_IDX64"] = "1"
	}
	return k, nil
}

func buildIndex(e *Env, sig *signatures.Signature) (*Instance, error) {
	pl, err := ewAnalyzeIndex(sig)
	if err != nil {
		return nil, err
	}
	src, err := e.Input(*pl.src)
	if err != nil {
		return nil, err
	}
	idx, err := e.Index(*pl.index, pl.limit)
	if err != nil {
		return nil, err
	}
	var out *Tensor
	if pl.out != nil {
		out, err = e.Input(*pl.out)
	} else {
		out, err = e.Output(pl.shape, src.DType)
	}
	if err != nil {
		return nil, err
	}
	inst := &Instance{Inputs: []*Tensor{src, idx}, Outputs: []*Tensor{out}, Launch: func(*cuda.Stream) error { return nil }}
	if out.Numel() == 0 {
		return inst, nil
	}
	gk, err := ewGatherMake(pl, src, idx, out)
	if err != nil {
		return nil, err
	}
	f, err := e.Function(ewSources("index.cu", ewIndexSource, gk.defines), "kr_gather")
	if err != nil {
		return nil, err
	}
	gx, err := ewGrid(e, f, gk.params.units, gk.unroll)
	if err != nil {
		return nil, err
	}
	arg := cuda.RawArg{Data: gk.params.bytes(), Align: 8}
	inst.Launch = func(s *cuda.Stream) error {
		return f.Launch([3]uint32{gx, 1, 1}, [3]uint32{ewBlock, 1, 1}, 0, s, arg)
	}
	return inst, nil
}
