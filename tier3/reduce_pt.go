package tier3

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
)

// Faithful replay of PyTorch's reduce_kernel (ATen Reduce.cuh) for sums
// and means over the innermost, contiguous elements of each output, the
// case of the traced models' norms (mean f32[4,512,4096] over the last
// dim). kreplay's own reduction kernel is about 2.4 times faster there
// than PyTorch's, whose warps each load one vector per lane per step; the
// faithful kernel (kernels/reduce_pt.cu) runs the traced launch with
// PyTorch's split of the work, read off the kernel name and launch:
//
//	reduce_kernel<NT, OUT_VEC, ReduceOp<scalar, ops, index, out, VT0, IN_VEC>>
//
// Lanes of a row of threads (block.x) split an output's inputs; the rows
// (block.y) each take an output, or split the inputs too when the traced
// grid has one block per output. The input is loaded IN_VEC elements at a
// time when PyTorch vectorizes it (a single reduced dimension longer than
// 128 elements, contiguous, VT0 >= IN_VEC), else VT0 scalars per step.
// Launches that split an output over blocks (grid.y > 1), vectorize the
// output, or reduce other layouts run on kreplay's kernel.

//go:embed kernels/reduce_pt.cu
var reducePTSource string

// rdPTKernel is a traced reduce_kernel's template arguments and launch.
type rdPTKernel struct {
	nt, outVec, vt0, inVec int64
	grid, block            [3]int64
}

// rdPTParse reads a traced reduce_kernel; ok false when the kernel is not
// one or its template arguments are not found.
func (c Config) rdPTParse(sig *signatures.Signature) (k rdPTKernel, ok bool) {
	if !c.faithful() || sig == nil || sig.Launch == nil {
		return k, false
	}
	name := strings.TrimPrefix(sig.Kernel, "void ")
	name = strings.ReplaceAll(name, "at::native::", "")
	if !strings.HasPrefix(name, "reduce_kernel<") {
		return k, false
	}
	v := ptTemplateInts(name)
	if len(v) < 2 {
		return k, false
	}
	k.nt, k.outVec = v[0], v[1]
	i := strings.Index(name, "ReduceOp<")
	if i < 0 {
		return k, false
	}
	args := rdPTTemplateArgs(name[i+len("ReduceOp<"):])
	if len(args) < 6 {
		return k, false
	}
	var err1, err2 error
	k.vt0, err1 = strconv.ParseInt(args[4], 10, 64)
	k.inVec, err2 = strconv.ParseInt(args[5], 10, 64)
	if err1 != nil || err2 != nil || k.vt0 < 1 || k.vt0 > 16 || k.inVec < 1 || k.inVec > 16 {
		return k, false
	}
	k.grid, k.block = sig.Launch.Grid, sig.Launch.Block
	return k, true
}

// rdPTTemplateArgs splits the template arguments that start s (after the
// opening '<') at the commas outside nested brackets, up to the closing
// '>'.
func rdPTTemplateArgs(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '<', '(':
			depth++
		case '>', ')':
			if depth == 0 {
				return append(out, strings.TrimSpace(s[start:i]))
			}
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return nil
}

// rdPTPlan is a faithful reduce launch.
type rdPTPlan struct {
	defines     map[string]string
	grid, block [3]uint32
	shared      uint32
	outputs, r  int64
	strategy    string
}

// rdPTMake plans the faithful launch of reduction s over an input of the
// given shape and strides; ok false when the traced strategy is not one
// the faithful kernel does.
func rdPTMake(k rdPTKernel, s *reduceSpec, shape, strides []int64) (*rdPTPlan, bool) {
	if s.op != rdSum || s.indices || k.outVec != 1 || k.grid[1] != 1 || k.grid[2] != 1 || k.block[2] != 1 {
		return nil, false
	}
	codes := map[string]string{"f16": "EW_F16", "bf16": "EW_BF16", "f32": "EW_F32"}
	if codes[s.in] == "" || codes[s.out] == "" {
		return nil, false
	}
	bx, by := k.block[0], k.block[1]
	if bx < 1 || by < 1 || bx*by > k.nt || (bx*by)%32 != 0 || bx&(bx-1) != 0 || by&(by-1) != 0 {
		return nil, false
	}
	// The reduced dims must be the innermost ones, and the input
	// contiguous: one run of R elements per output.
	t := &Tensor{Shape: shape, Strides: strides}
	if !t.Contiguous() {
		return nil, false
	}
	red := s.reduced(len(shape))
	r, outputs := int64(1), int64(1)
	inner := true
	for d := len(shape) - 1; d >= 0; d-- {
		if red[d] {
			if !inner {
				return nil, false
			}
			r *= shape[d]
		} else {
			if shape[d] != 1 {
				inner = false
			}
			outputs *= shape[d]
		}
	}
	if r == 0 || outputs == 0 || r*outputs >= 1<<31 {
		return nil, false
	}
	p := &rdPTPlan{outputs: outputs, r: r, block: [3]uint32{uint32(bx), uint32(by), 1}}
	split := false
	switch {
	case by > 1 && k.grid[0] == outputs:
		split = true
	case k.grid[0] == (outputs+by-1)/by:
	default:
		return nil, false
	}
	vec := int64(1)
	if r > 128 && k.vt0 >= k.inVec {
		vec = k.inVec
	}
	if vec > 1 && r%vec != 0 {
		return nil, false // rows not aligned to a vector: PyTorch shifts, kreplay does not
	}
	p.grid = [3]uint32{uint32(k.grid[0]), 1, 1}
	if split || bx > 32 {
		p.shared = uint32(bx * by * 4)
	}
	sp := "0"
	if split {
		sp = "1"
	}
	p.defines = map[string]string{"RP_IN": codes[s.in], "RP_OUT": codes[s.out], "RP_VEC": fmt.Sprint(vec),
		"RP_VT0": fmt.Sprint(k.vt0), "RP_SPLIT_Y": sp}
	p.strategy = fmt.Sprintf("reduce_kernel<%d,%d> vec %d", k.nt, k.outVec, vec)
	if split {
		p.strategy += " split-y"
	}
	return p, true
}

// rdPTBuild builds the faithful instance of a traced reduction, or
// returns nil when its strategy is not one the faithful kernel does.
func rdPTBuild(e *Env, sig *signatures.Signature, s *reduceSpec, x *Tensor) (*Instance, error) {
	k, ok := e.cfg.rdPTParse(sig)
	if !ok {
		return nil, nil
	}
	p, ok := rdPTMake(k, s, x.Shape, x.Strides)
	if !ok {
		return nil, nil
	}
	out, err := e.Output(s.outShape(x.Shape), s.out)
	if err != nil {
		return nil, err
	}
	f, err := e.Function(ewSources("reduce_pt.cu", reducePTSource, p.defines), "kr_reduce_pt")
	if err != nil {
		return nil, err
	}
	scale := float32(1)
	if s.mean {
		scale = 1 / float32(p.r)
	}
	outputs, r := uint32(p.outputs), uint32(p.r)
	inst := &Instance{Inputs: []*Tensor{x}, Outputs: []*Tensor{out}, FLOPs: x.Numel(), Strategy: p.strategy}
	inst.Launch = func(st *cuda.Stream) error {
		return f.Launch(p.grid, p.block, p.shared, st, x.Ptr, out.Ptr, outputs, r, scale)
	}
	return inst, nil
}
