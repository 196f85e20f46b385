package tier3

import (
	"encoding/binary"
	"fmt"

	"github.com/kreplay/kreplay/internal/cuda"
)

// PyTorch's batched cat (CatArrayBatchedCopy*), replayed by kr_cat_pt and
// kr_cat_ptmeta of kernels/cat.cu: the launches, their parameter blocks
// and the plan of a traced cat. The strategy is read off the traced kernel
// with the rest of the elementwise family (faithful.go).

// ptCatMaxDims is the most dimensions kr_cat_pt takes (EW_CAT_DIMS).
const ptCatMaxDims = 8

// ptCatBatch is the most inputs one launch of kr_cat_pt takes: their
// metadata is passed by value and the parameters of a kernel are limited
// to 4 KB. PyTorch batches 64 or 128; the traced cats have fewer.
const ptCatBatch = 16

// ptCatIn is EwCatIn of cat.cu.
type ptCatIn struct {
	in      cuda.DevicePtr
	n       int64
	dimSize int64
	at      int64 // first place along the cat dimension
	contig  bool
	size    []int64
	strides []int64
}

// ptCatArgs is EwCatArgs of cat.cu: the output and one launch's inputs.
type ptCatArgs struct {
	out     cuda.DevicePtr
	dim     int64
	size    []int64
	strides []int64
	ins     []ptCatIn
}

// bytes lays the arguments out as the device compiler does: every field
// is 8 bytes, so there is no padding.
func (p *ptCatArgs) bytes() []byte {
	le := binary.LittleEndian
	b := le.AppendUint64(nil, uint64(p.out))
	b = le.AppendUint64(b, uint64(p.dim))
	for _, x := range p.size {
		b = le.AppendUint64(b, uint64(x))
	}
	for _, x := range p.strides {
		b = le.AppendUint64(b, uint64(x))
	}
	for _, in := range p.ins {
		b = le.AppendUint64(b, uint64(in.in))
		b = le.AppendUint64(b, uint64(in.n))
		b = le.AppendUint64(b, uint64(in.dimSize))
		b = le.AppendUint64(b, uint64(in.at*p.strides[p.dim])) // first output element
		c := uint64(0)
		if in.contig {
			c = 1
		}
		b = le.AppendUint64(b, c)
		for _, x := range in.size {
			b = le.AppendUint64(b, uint64(x))
		}
		for _, x := range in.strides {
			b = le.AppendUint64(b, uint64(x))
		}
	}
	return b
}

// ptCatMeta is EwCatPtArgs of cat.cu: one launch of kr_cat_ptmeta with
// PyTorch's parameter layout for n inputs and s size-and-stride records.
type ptCatMeta struct {
	n, s      int
	out       cuda.DevicePtr
	ins       []ptCatIn
	size      []int64 // the output's
	strides   []int64
	dim       int
	dimStride int64
}

// bytes lays the parameters out as PyTorch's CatArrayBatchedCopy takes
// them (3440 bytes for n = s = 64).
func (m *ptCatMeta) bytes() []byte {
	le := binary.LittleEndian
	dimsAt := (21*m.n + 3) &^ 3
	meta := make([]byte, (dimsAt+32*m.s+7)&^7)
	dims := func(b []byte, size, strides []int64) {
		for d := range min(len(size), 4) {
			le.PutUint32(b[4*d:], uint32(size[d]))
			le.PutUint32(b[16+4*d:], uint32(strides[d]))
		}
	}
	for i, in := range m.ins {
		le.PutUint64(meta[8*i:], uint64(in.in))
		le.PutUint32(meta[8*m.n+4*i:], uint32(in.at))
		le.PutUint32(meta[12*m.n+4*i:], uint32(in.dimSize))
		le.PutUint32(meta[16*m.n+4*i:], uint32(in.n))
		if in.contig {
			meta[20*m.n+i] = 1
		}
		if m.s > 1 {
			dims(meta[dimsAt+32*i:], in.size, in.strides)
		}
	}
	b := le.AppendUint64(nil, uint64(m.out))
	b = append(b, meta...)
	od := make([]byte, 32)
	dims(od, m.size, m.strides)
	b = append(b, od...)
	b = le.AppendUint32(b, uint32(m.dim))
	return le.AppendUint32(b, uint32(m.dimStride))
}

// ptCatLaunch is one launch of kr_cat_pt (args: up to ptCatBatch inputs)
// or, with meta, of kr_cat_ptmeta.
type ptCatLaunch struct {
	defines map[string]string
	args    ptCatArgs
	meta    *ptCatMeta
	grid    [3]uint32
	block   [3]uint32
}

// kernel is the launch's kernel name.
func (l *ptCatLaunch) kernel() string {
	if l.meta != nil {
		return "kr_cat_ptmeta"
	}
	return "kr_cat_pt"
}

// params is the launch's parameter struct.
func (l *ptCatLaunch) params() []byte {
	if l.meta != nil {
		return l.meta.bytes()
	}
	return l.args.bytes()
}

// ptCatPlan is the faithful launch of a cat.
type ptCatPlan struct {
	launches []ptCatLaunch
}

// ptCatMake lays out a cat of inputs into out (contiguous) for the traced
// CatArrayBatchedCopy p; ok false when it cannot (too many dimensions or
// inputs), and nil with ok true when there is nothing to copy. Inputs are
// batched ptCatBatch to a launch, each launch compiled for its number of
// inputs and the output's dimensions.
func ptCatMake(p ptKernel, dim int, out *Tensor, inputs []*Tensor) (*ptCatPlan, bool) {
	nd := len(out.Shape)
	if p.kind != ptCat || nd > ptCatMaxDims || nd == 0 || len(inputs) > ewMaxBatch {
		return nil, false
	}
	wide := out.Span >= 1<<31
	var ins []ptCatIn
	var at int64
	for _, t := range inputs {
		in := ptCatIn{in: t.Ptr, n: t.Numel(), dimSize: t.Shape[dim], at: at,
			contig: !p.catStrided && t.Contiguous(), size: t.Shape, strides: t.Strides}
		at += t.Shape[dim]
		if in.n == 0 {
			continue
		}
		wide = wide || t.Span >= 1<<31
		ins = append(ins, in)
	}
	if len(ins) == 0 {
		return nil, true
	}
	pl := &ptCatPlan{}
	allContig := true
	for _, in := range ins {
		allContig = allContig && in.contig
	}
	// With one size-and-stride record (S = 1) PyTorch's kernel reads every
	// input as contiguous, and PyTorch takes it only when they all are.
	if m := p.catMeta; m[0] == int64(nd) && !wide && (m[2] > 1 || allContig) {
		// PyTorch's parameters: N inputs a launch.
		n := int(m[1])
		for len(ins) > 0 {
			k := min(len(ins), n)
			pl.launches = append(pl.launches, ptCatLaunch{
				defines: map[string]string{"EW_CAT_BYTES": fmt.Sprint(out.ElemSize()), "EW_CAT_DIMS": fmt.Sprint(nd),
					"EW_CAT_PT_N": fmt.Sprint(n), "EW_CAT_PT_S": fmt.Sprint(m[2])},
				meta: &ptCatMeta{n: n, s: int(m[2]), out: out.Ptr, ins: ins[:k], size: out.Shape, strides: out.Strides,
					dim: dim, dimStride: out.Strides[dim]},
				grid:  [3]uint32{uint32(p.grid[0]), uint32(k), 1},
				block: [3]uint32{uint32(p.block[0]), 1, 1},
			})
			ins = ins[k:]
		}
		return pl, true
	}
	for len(ins) > 0 {
		k := min(len(ins), ptCatBatch)
		l := ptCatLaunch{
			defines: map[string]string{"EW_CAT_BYTES": fmt.Sprint(out.ElemSize()), "EW_CAT_DIMS": fmt.Sprint(nd),
				"EW_CAT_BATCH": fmt.Sprint(k)},
			args:  ptCatArgs{out: out.Ptr, dim: int64(dim), size: out.Shape, strides: out.Strides, ins: ins[:k]},
			grid:  [3]uint32{uint32(p.grid[0]), uint32(k), 1},
			block: [3]uint32{uint32(p.block[0]), 1, 1},
		}
		if wide {
			l.defines["EW_IDX64"] = "1"
		}
		pl.launches = append(pl.launches, l)
		ins = ins[k:]
	}
	return pl, true
}

// ptCat builds the faithful launch of a cat, or returns ok false.
func (e *Env) ptCat(p ptKernel, dim int, out *Tensor, inputs []*Tensor) (func(*cuda.Stream) error, bool, error) {
	pl, ok := ptCatMake(p, dim, out, inputs)
	if !ok {
		return nil, false, nil
	}
	if pl == nil {
		return func(*cuda.Stream) error { return nil }, true, nil
	}
	type call struct {
		f           *cuda.Function
		grid, block [3]uint32
		arg         cuda.RawArg
	}
	var calls []call
	for _, l := range pl.launches {
		f, err := e.Function(ewSources("cat.cu", ewCatSource, l.defines), l.kernel())
		if err != nil {
			return nil, false, err
		}
		calls = append(calls, call{f, l.grid, l.block, cuda.RawArg{Data: l.params(), Align: 8}})
	}
	return func(s *cuda.Stream) error {
		for _, c := range calls {
			if err := c.f.Launch(c.grid, c.block, 0, s, c.arg); err != nil {
				return err
			}
		}
		return nil
	}, true, nil
}
