package signatures

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// BroadcastShape returns the broadcast of shapes, as PyTorch broadcasts
// tensor operands, or false if they do not broadcast.
func BroadcastShape(shapes ...[]int64) ([]int64, bool) {
	n := 0
	for _, s := range shapes {
		n = max(n, len(s))
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		off := n - len(s)
		for i, d := range s {
			switch {
			case out[off+i] == 1:
				out[off+i] = d
			case d != 1 && d != out[off+i]:
				return nil, false
			}
		}
	}
	return out, true
}

// intList parses a profiler int or int-list value: "-1", "[-1]", "[0, 1]".
func intList(v string) ([]int64, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, false
	}
	v = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
	if strings.TrimSpace(v) == "" {
		return []int64{}, true
	}
	var out []int64
	for _, f := range strings.Split(v, ",") {
		x, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return nil, false
		}
		out = append(out, x)
	}
	return out, true
}

func normDim(d int64, rank int) (int64, bool) {
	if d < 0 {
		d += int64(rank)
	}
	return d, d >= 0 && d < int64(max(rank, 1))
}

// shapesOf lists the tensors' shapes.
func shapesOf(tensors []Input) [][]int64 {
	shapes := make([][]int64, len(tensors))
	for i, t := range tensors {
		shapes[i] = t.Shape
	}
	return shapes
}

// broadcastOf is the broadcast shape of the tensors.
func broadcastOf(tensors []Input) ([]int64, bool) { return BroadcastShape(shapesOf(tensors)...) }

// deriveTensor computes the replay parameters of a tier-3 op from its
// inputs. The error says why they cannot be derived.
func deriveTensor(class Class, op string, ins []Input) (*TensorParams, error) {
	var tensors []Input
	p := &TensorParams{}
	for _, in := range ins {
		if in.IsTensor() {
			tensors = append(tensors, in)
			p.DTypes = append(p.DTypes, DType(in.Type))
		}
		for _, t := range in.List {
			tensors = append(tensors, Input{Type: in.Type, Shape: t.Shape, Strides: t.Strides})
		}
	}
	first := func() (Input, error) {
		if len(tensors) == 0 {
			return Input{}, fmt.Errorf("%s has no tensor inputs", op)
		}
		return tensors[0], nil
	}
	switch class {
	case ClassElementwise, ClassCopy:
		if len(tensors) == 0 {
			return nil, fmt.Errorf("%s has no tensor inputs", op)
		}
		out, ok := broadcastOf(tensors)
		if !ok {
			// An empty out= tensor (abs(x, out=torch.empty(0))) is
			// resized to the result, not broadcast with the operands.
			operands := slices.DeleteFunc(slices.Clone(tensors), func(t Input) bool { return len(t.Shape) > 0 && t.Numel() == 0 })
			if out, ok = broadcastOf(operands); !ok || len(operands) == 0 {
				return nil, fmt.Errorf("%s inputs %v do not broadcast", op, shapesOf(tensors))
			}
			tensors = operands
		}
		p.Shape, p.Numel = out, numel(out)
		for _, t := range tensors {
			if !slices.Equal(t.Shape, out) {
				p.Broadcast = true
			}
		}
	case ClassFill:
		if op == "aten::arange" {
			n, err := arangeNumel(ins)
			if err != nil {
				return nil, err
			}
			p.Numel, p.Shape = n, []int64{n}
			break
		}
		t, err := first()
		if err != nil {
			return nil, err
		}
		p.Shape, p.Numel = t.Shape, t.Numel()
	case ClassReduce:
		t, err := first()
		if err != nil {
			return nil, err
		}
		if err := deriveReduce(p, op, t, ins); err != nil {
			return nil, err
		}
	case ClassNorm, ClassSoftmax, ClassScan:
		t, err := first()
		if err != nil {
			return nil, err
		}
		p.Shape, p.Numel = t.Shape, t.Numel()
		if len(ins) > 1 {
			if dims, ok := intList(ins[1].Value); ok {
				p.Dims = dims
			} else if class == ClassNorm && ins[1].Type == "ScalarList" {
				return nil, fmt.Errorf("%s: normalized shape %q unreadable", op, ins[1].Value)
			}
		}
	case ClassCat:
		if len(ins) == 0 || ins[0].List == nil || len(ins[0].List) == 0 {
			return nil, fmt.Errorf("%s has no tensor list input", op)
		}
		var n int64
		for _, t := range ins[0].List {
			n += numel(t.Shape)
		}
		p.DTypes = []string{DType(ins[0].Type)}
		if ins[0].Type == "TensorList" {
			p.DTypes = nil
		}
		p.Numel = n
		if len(ins) > 1 {
			if dims, ok := intList(ins[1].Value); ok {
				p.Dims = dims
			}
		}
	case ClassIndex:
		t, err := first()
		if err != nil {
			return nil, err
		}
		if err := deriveIndex(p, op, t, tensors, ins); err != nil {
			return nil, err
		}
	case ClassAttention:
		if len(tensors) < 3 {
			return nil, fmt.Errorf("%s: want query, key and value", op)
		}
		p.Shape, p.Numel = tensors[0].Shape, tensors[0].Numel()
	default:
		return nil, fmt.Errorf("no replay parameters are known for %s", op)
	}
	p.Bytes = estimateBytes(p, op, tensors)
	return p, nil
}

// deriveReduce sets a reduction's dims (all when none are given), keepdim
// and its output's element count.
func deriveReduce(p *TensorParams, op string, t Input, ins []Input) error {
	if op == "aten::topk" {
		return deriveTopK(p, op, t, ins)
	}
	p.Shape = t.Shape
	rank := len(t.Shape)
	reduced := make([]bool, rank)
	if len(ins) > 1 && (ins[1].Type == "ScalarList" || ins[1].Type == "Scalar") {
		if dims, ok := intList(ins[1].Value); ok {
			for _, d := range dims {
				nd, ok := normDim(d, rank)
				if !ok {
					return fmt.Errorf("%s: dim %d out of range for %v", op, d, t.Shape)
				}
				p.Dims = append(p.Dims, nd)
				if rank > 0 {
					reduced[nd] = true
				}
			}
		}
		if len(ins) > 2 && ins[2].Type == "Scalar" {
			p.KeepDim = ins[2].Value == "True"
		}
	}
	if len(p.Dims) == 0 {
		for i := range reduced {
			reduced[i] = true
		}
	}
	p.Numel = 1
	for i, d := range t.Shape {
		if !reduced[i] {
			p.Numel *= d
		}
	}
	return nil
}

// deriveTopK reads topk(self, k, dim=-1, largest, sorted): the dim it
// selects along and its output's element count (k along that dim). Read
// as other reductions are, its k was taken for a dim.
func deriveTopK(p *TensorParams, op string, t Input, ins []Input) error {
	p.Shape = t.Shape
	if len(ins) < 2 {
		return fmt.Errorf("%s: want self and k", op)
	}
	k, ok := intList(ins[1].Value)
	if !ok || len(k) != 1 || k[0] < 0 {
		return fmt.Errorf("%s: k %q unreadable", op, ins[1].Value)
	}
	dim := int64(-1)
	if len(ins) > 2 && ins[2].Value != "" {
		d, ok := intList(ins[2].Value)
		if !ok || len(d) != 1 {
			return fmt.Errorf("%s: dim %q unreadable", op, ins[2].Value)
		}
		dim = d[0]
	}
	nd, ok := normDim(dim, len(t.Shape))
	if !ok || len(t.Shape) == 0 || t.Shape[nd] < k[0] {
		return fmt.Errorf("%s: k %d along dim %d out of range for %v", op, k[0], dim, t.Shape)
	}
	p.Dims = []int64{nd}
	p.Numel = t.Numel() / max(t.Shape[nd], 1) * k[0]
	return nil
}

// deriveIndex sets the work of an indexing op: the elements it gathers
// or writes (index_select, embedding, gather), else the largest tensor's.
func deriveIndex(p *TensorParams, op string, t Input, tensors, ins []Input) error {
	p.Shape = t.Shape
	switch op {
	case "aten::index_select":
		// index_select(self, dim, index)
		if len(tensors) < 2 || len(ins) < 2 {
			return fmt.Errorf("%s: want self, dim, index", op)
		}
		d, ok := intList(ins[1].Value)
		if !ok || len(d) != 1 {
			return fmt.Errorf("%s: dim %q unreadable", op, ins[1].Value)
		}
		nd, ok := normDim(d[0], len(t.Shape))
		if !ok || len(t.Shape) == 0 || t.Shape[nd] == 0 {
			return fmt.Errorf("%s: dim %d out of range for %v", op, d[0], t.Shape)
		}
		p.Dims = []int64{nd}
		p.Numel = t.Numel() / t.Shape[nd] * tensors[1].Numel()
	case "aten::embedding":
		if len(tensors) < 2 || len(t.Shape) != 2 {
			return fmt.Errorf("%s: want weight[n,d] and indices", op)
		}
		p.Numel = tensors[1].Numel() * t.Shape[1]
	case "aten::gather":
		if len(tensors) < 2 {
			return fmt.Errorf("%s: want self, dim, index", op)
		}
		p.Numel = tensors[1].Numel()
	default:
		// index, scatter, index_put and friends: the largest tensor bounds the work.
		for _, t := range tensors {
			p.Numel = max(p.Numel, t.Numel())
		}
	}
	return nil
}

// arangeNumel reads the element count of arange(end) or arange(start, end[, step]).
func arangeNumel(ins []Input) (int64, error) {
	var nums []float64
	for _, in := range ins {
		if in.Type != "Scalar" && in.Type != "" {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSuffix(in.Value, "."), 64); err == nil {
			nums = append(nums, v)
		}
	}
	var start, end, step float64 = 0, 0, 1
	switch len(nums) {
	case 0:
		return 0, fmt.Errorf("aten::arange: no numeric bounds in the trace")
	case 1:
		end = nums[0]
	case 2:
		start, end = nums[0], nums[1]
	default:
		start, end, step = nums[0], nums[1], nums[2]
	}
	if step == 0 {
		return 0, fmt.Errorf("aten::arange: step 0")
	}
	n := math.Ceil((end - start) / step)
	if n < 0 || n > maxNumel {
		return 0, fmt.Errorf("aten::arange: %v elements", n)
	}
	return int64(n), nil
}

// estimateBytes counts each tensor input read once and the output written once.
func estimateBytes(p *TensorParams, op string, tensors []Input) int64 {
	var b int64
	for _, t := range tensors {
		b += gatheredBytes(op, t, tensors)
	}
	out := int64(2)
	if len(tensors) > 0 {
		if s := DTypeSize(DType(tensors[0].Type)); s > 0 {
			out = s
		}
	}
	return b + p.Numel*out
}

// gatheredBytes is what an op reads of tensor t: all of it, except an
// embedding table ([rows, dim], in an op that names an embedding:
// aten::embedding, or an Inductor kernel that fuses one), of which it
// reads one row per index (the largest integer tensor's elements), at
// most all rows. A compiled Llama prefill's Triton reductions that fuse
// the embedding were charged its whole 525 MB table and their stand-ins
// ran 26 to 121 times too long.
func gatheredBytes(op string, t Input, tensors []Input) int64 {
	size := DTypeSize(DType(t.Type))
	all := t.Numel() * size
	if !strings.Contains(op, "embedding") || len(t.Shape) != 2 || isIntegerType(DType(t.Type)) {
		return all
	}
	var idx int64
	for _, x := range tensors {
		if isIntegerType(DType(x.Type)) {
			idx = max(idx, x.Numel())
		}
	}
	if idx == 0 {
		return all
	}
	return min(all, idx*t.Shape[1]*size)
}

func isIntegerType(dtype string) bool {
	switch dtype {
	case "i64", "i32", "i16", "i8", "u8":
		return true
	}
	return false
}
