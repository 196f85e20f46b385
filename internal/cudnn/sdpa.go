package cudnn

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// SDPA describes one scaled dot-product attention forward as PyTorch 2.11
// hands it to cudnn-frontend 1.18 (aten/src/ATen/native/cudnn/MHA.cpp,
// build_graph): half or bfloat16 I/O with float intermediates and
// compute, attn_scale a float passed by value, an optional additive bias,
// a causal mask aligned top-left, no dropout, and the softmax stats (the
// logsumexp) as an output only when the op returns it (is_inference is
// !compute_log_sumexp).
type SDPA struct {
	DType DataType // DataHalf or DataBFloat16
	// Q, K, V and O are [batch, heads, seq, head dim] with their strides
	// in elements, as PyTorch passes them: a dimension of one whose stride
	// is 0 gets the product of the strides after it
	// (fixSizeOneDimStrideSDPA), which FixSizeOneStrides does.
	Q, K, V, O Shape
	// Bias, when not nil, is attn_bias as PyTorch passes it (its own dims,
	// broadcasting to [batch, heads, queries, keys], and strides), of
	// BiasType.
	Bias     *Shape
	BiasType DataType
	Causal   bool
	// Stats: the graph writes the softmax stats, float [b, h, s_q, 1].
	Stats bool
	Scale float32
}

// Shape is a tensor's dims and strides in elements.
type Shape struct{ Dims, Strides [4]int64 }

// FixSizeOneStrides returns strides where each dimension of one with
// stride 0 has the product of the strides after it, as PyTorch's
// fixSizeOneDimStrideSDPA makes them before it hands q, k and v to cuDNN.
func FixSizeOneStrides(dims, strides [4]int64) [4]int64 {
	for d := range dims {
		if dims[d] == 1 && strides[d] == 0 {
			s := int64(1)
			for _, x := range strides[d+1:] {
				s *= x
			}
			strides[d] = s
		}
	}
	return strides
}

// The unique IDs of the graph's non-virtual tensors: those of PyTorch's
// MHA.cpp (its enum UIDS). Virtual tensors and by-value constants get
// UIDs from firstInternalUID on.
const (
	UIDQ     int64 = 0
	UIDK     int64 = 1
	UIDV     int64 = 2
	UIDO     int64 = 3
	UIDBias  int64 = 4
	UIDScale int64 = 5
	UIDStats int64 = 8

	firstInternalUID int64 = 100
)

// OpKind is the kind of a backend operation of a graph.
type OpKind string

// Operation kinds.
const (
	OpMatmul    OpKind = "matmul"
	OpPointwise OpKind = "pointwise"
	OpReduction OpKind = "reduction"
	OpSDPAFwd   OpKind = "sdpa_fwd" // CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR
)

// GraphTensor is one tensor descriptor of a graph.
type GraphTensor struct {
	UID           int64
	Name          string
	Dims, Strides []int64
	Type          DataType
	Virtual       bool
	// ByValue: a host scalar passed in the variant pack; Value is it.
	ByValue bool
	Value   float32
}

// GraphOp is one backend operation of a graph. In and Out are tensor
// UIDs in the operation's port order: a matmul's A, B and C; a
// pointwise's X, B and T and its Y; a reduction's X and Y; the SDPA
// operation's Q, K, V and scale, and its O and stats.
type GraphOp struct {
	Kind   OpKind
	Name   string
	Mode   PointwiseMode // pointwise
	Reduce ReduceOp      // reduction
	Comp   DataType      // math precision (pointwise), compute type (matmul, reduction)
	Axis   int64         // GEN_INDEX's axis
	In     []int64
	Out    []int64
}

// Graph is an operation graph as cudnn-frontend lowers SDPA for the
// backend API: the tensors and the operations, in the frontend's order.
type Graph struct {
	// Unified: the one SDPA_FWD operation cudnn-frontend 1.14 on builds
	// for cuDNN 9.13.1 on where the attention has no bias, mask or
	// dropout; otherwise the composite expansion into matmuls, pointwise
	// operations and reductions.
	Unified bool
	Tensors []GraphTensor
	Ops     []GraphOp
}

// UnifiedVersion is the first cuDNN (CUDNN_VERSION) with the unified SDPA
// operation cudnn-frontend uses.
const UnifiedVersion = 91301

// UseUnified reports whether cudnn-frontend 1.18 auto-selects the unified
// SDPA operation for s with cuDNN version (CUDNN_VERSION): from 9.13.1
// on, for attention without bias and causal mask (its support surface
// takes only Q, K, V and attn_scale, and no diagonal bound). The frontend
// takes the smaller of the loaded and the compiled-against version;
// PyTorch 2.11's wheels are built against a cuDNN past 9.13.1, so the
// loaded one decides here.
func (s *SDPA) UseUnified(version int) bool {
	return version >= UnifiedVersion && s.Bias == nil && !s.Causal
}

// validate checks what both lowerings need.
func (s *SDPA) validate() error {
	if s.DType != DataHalf && s.DType != DataBFloat16 {
		return fmt.Errorf("cudnn SDPA: I/O data type %v (HALF and BFLOAT16 only)", s.DType)
	}
	for _, t := range []struct {
		name string
		sh   Shape
	}{{"Q", s.Q}, {"K", s.K}, {"V", s.V}, {"O", s.O}} {
		for i := range t.sh.Dims {
			if t.sh.Dims[i] <= 0 || t.sh.Strides[i] < 0 || t.sh.Strides[i] == 0 && t.sh.Dims[i] != 1 {
				return fmt.Errorf("cudnn SDPA: %s dims %v strides %v (positive only)", t.name, t.sh.Dims, t.sh.Strides)
			}
		}
		if t.sh.Strides[3] != 1 {
			return fmt.Errorf("cudnn SDPA: %s head-dim stride %d (1 only)", t.name, t.sh.Strides[3])
		}
	}
	b, hq, sq, d := s.Q.Dims[0], s.Q.Dims[1], s.Q.Dims[2], s.Q.Dims[3]
	hk, skv := s.K.Dims[1], s.K.Dims[2]
	switch {
	case s.K.Dims[0] != b || s.V.Dims[0] != b || s.K.Dims[3] != d || s.V.Dims[2] != skv || s.V.Dims[1] != hk:
		return fmt.Errorf("cudnn SDPA: Q %v, K %v and V %v do not fit together", s.Q.Dims, s.K.Dims, s.V.Dims)
	case s.O.Dims != [4]int64{b, hq, sq, s.V.Dims[3]}:
		return fmt.Errorf("cudnn SDPA: O %v, want [%d %d %d %d]", s.O.Dims, b, hq, sq, s.V.Dims[3])
	case hq%hk != 0:
		return fmt.Errorf("cudnn SDPA: %d query heads over %d key heads", hq, hk)
	case !(s.Scale > 0) || math.IsInf(float64(s.Scale), 0):
		return fmt.Errorf("cudnn SDPA: scale %g", s.Scale)
	}
	return nil
}

// graphBuilder accumulates a Graph.
type graphBuilder struct {
	g   Graph
	uid int64
}

func (b *graphBuilder) tensor(t GraphTensor) int64 {
	b.g.Tensors = append(b.g.Tensors, t)
	return t.UID
}

// virtual adds a virtual tensor with a fresh UID.
func (b *graphBuilder) virtual(name string, dims, strides []int64, typ DataType) int64 {
	b.uid++
	return b.tensor(GraphTensor{UID: b.uid, Name: name, Dims: dims, Strides: strides, Type: typ, Virtual: true})
}

// scalar adds a by-value float constant [1, 1, 1, 1] with a fresh UID.
func (b *graphBuilder) scalar(name string, v float32) int64 {
	b.uid++
	one := []int64{1, 1, 1, 1}
	return b.tensor(GraphTensor{UID: b.uid, Name: name, Dims: one, Strides: one, Type: DataFloat, ByValue: true, Value: v})
}

func (b *graphBuilder) op(o GraphOp) { b.g.Ops = append(b.g.Ops, o) }

// pointwise adds a pointwise operation of float math writing a new
// virtual tensor of dims and strides, and returns its UID.
func (b *graphBuilder) pointwise(name string, mode PointwiseMode, dims, strides []int64, out DataType, in ...int64) int64 {
	y := b.virtual(name, dims, strides, out)
	b.op(GraphOp{Kind: OpPointwise, Name: name, Mode: mode, Comp: DataFloat, In: in, Out: []int64{y}})
	return y
}

// Graph lowers s as cudnn-frontend 1.18 does for a cuDNN of version
// (CUDNN_VERSION): the unified SDPA operation where UseUnified, else the
// composite expansion.
func (s *SDPA) Graph(version int) (*Graph, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	b := &graphBuilder{uid: firstInternalUID - 1}
	sl := func(a [4]int64) []int64 { return append([]int64(nil), a[:]...) }
	b.tensor(GraphTensor{UID: UIDQ, Name: "Q", Dims: sl(s.Q.Dims), Strides: sl(s.Q.Strides), Type: s.DType})
	b.tensor(GraphTensor{UID: UIDScale, Name: "Attn_scale", Dims: []int64{1, 1, 1, 1}, Strides: []int64{1, 1, 1, 1},
		Type: DataFloat, ByValue: true, Value: s.Scale})
	bsq := []int64{s.Q.Dims[0], s.Q.Dims[1], s.Q.Dims[2], 1}
	bsqStr := []int64{s.Q.Dims[1] * s.Q.Dims[2], s.Q.Dims[2], 1, 1}
	if s.UseUnified(version) {
		b.g.Unified = true
		b.tensor(GraphTensor{UID: UIDK, Name: "K", Dims: sl(s.K.Dims), Strides: sl(s.K.Strides), Type: s.DType})
		b.tensor(GraphTensor{UID: UIDV, Name: "V", Dims: sl(s.V.Dims), Strides: sl(s.V.Strides), Type: s.DType})
		b.tensor(GraphTensor{UID: UIDO, Name: "O", Dims: sl(s.O.Dims), Strides: sl(s.O.Strides), Type: s.DType})
		op := GraphOp{Kind: OpSDPAFwd, Name: "CUDNN_SDPA", In: []int64{UIDQ, UIDK, UIDV, UIDScale}, Out: []int64{UIDO}}
		if s.Stats {
			b.tensor(GraphTensor{UID: UIDStats, Name: "Stats", Dims: bsq, Strides: bsqStr, Type: DataFloat})
			op.Out = append(op.Out, UIDStats)
		}
		b.op(op)
		return &b.g, nil
	}
	s.composite(b, bsq, bsqStr)
	return &b.g, nil
}

// composite adds the composite expansion (CompositeSDPANode, its bias
// and causal score modifiers, and SoftmaxNode) after Q and the scale.
func (s *SDPA) composite(b *graphBuilder, bsq, bsqStr []int64) {
	bq, hq, sq := s.Q.Dims[0], s.Q.Dims[1], s.Q.Dims[2]
	skv := s.K.Dims[2]
	// The backend multiplies Q by K^T: K's last two dims and strides swap.
	kd, ks := s.K.Dims, s.K.Strides
	kd[2], kd[3], ks[2], ks[3] = kd[3], kd[2], ks[3], ks[2]
	b.tensor(GraphTensor{UID: UIDK, Name: "K", Dims: kd[:], Strides: ks[:], Type: s.DType})
	sDims := []int64{bq, hq, sq, skv}
	sStr := []int64{hq * sq * skv, sq * skv, skv, 1}
	scores := b.virtual("bmm1::C", sDims, sStr, DataFloat)
	b.op(GraphOp{Kind: OpMatmul, Name: "bmm1", Comp: DataFloat, In: []int64{UIDQ, UIDK}, Out: []int64{scores}})
	last := b.pointwise("attn_scale", PointwiseMul, sDims, sStr, DataFloat, scores, UIDScale)
	if s.Bias != nil {
		bias := b.tensor(GraphTensor{UID: UIDBias, Name: "bias", Dims: append([]int64(nil), s.Bias.Dims[:]...),
			Strides: append([]int64(nil), s.Bias.Strides[:]...), Type: s.BiasType})
		last = b.pointwise("bias_add", PointwiseAdd, sDims, sStr, DataFloat, last, bias)
	}
	if s.Causal {
		row := b.virtual("gen_row_index", sDims, sStr, DataInt32)
		b.op(GraphOp{Kind: OpPointwise, Name: "gen_row_index", Mode: PointwiseGenIndex, Comp: DataFloat, Axis: 2,
			In: []int64{last}, Out: []int64{row}})
		col := b.virtual("gen_col_index", sDims, sStr, DataInt32)
		b.op(GraphOp{Kind: OpPointwise, Name: "gen_col_index", Mode: PointwiseGenIndex, Comp: DataFloat, Axis: 3,
			In: []int64{last}, Out: []int64{col}})
		mask := b.virtual("row_greater_than_col", sDims, sStr, DataBoolean)
		b.op(GraphOp{Kind: OpPointwise, Name: "row_greater_than_col", Mode: PointwiseCmpGE, Comp: DataBoolean,
			In: []int64{row, col}, Out: []int64{mask}})
		ninf := b.scalar("negative_inf", float32(math.Inf(-1)))
		last = b.pointwise("binary_select", PointwiseBinarySelect, sDims, sStr, DataFloat, last, ninf, mask)
	}
	// Softmax: max, x - max, exp, sum, log(sum) + max (the stats, virtual
	// when not asked for), exp / sum.
	mx := b.virtual("Max", bsq, bsqStr, DataFloat)
	b.op(GraphOp{Kind: OpReduction, Name: "Max", Reduce: ReduceMax, Comp: DataFloat, In: []int64{last}, Out: []int64{mx}})
	sub := b.pointwise("sub_M", PointwiseSub, sDims, sStr, DataFloat, last, mx)
	ex := b.pointwise("exp_sub_M", PointwiseExp, sDims, sStr, DataFloat, sub)
	sum := b.virtual("SumExp", bsq, bsqStr, DataFloat)
	b.op(GraphOp{Kind: OpReduction, Name: "sum", Reduce: ReduceAdd, Comp: DataFloat, In: []int64{ex}, Out: []int64{sum}})
	lg := b.pointwise("log", PointwiseLog, bsq, bsqStr, DataFloat, sum)
	if s.Stats {
		b.tensor(GraphTensor{UID: UIDStats, Name: "Stats", Dims: bsq, Strides: bsqStr, Type: DataFloat})
		b.op(GraphOp{Kind: OpPointwise, Name: "add", Mode: PointwiseAdd, Comp: DataFloat, In: []int64{mx, lg}, Out: []int64{UIDStats}})
	} else {
		b.pointwise("add", PointwiseAdd, bsq, bsqStr, DataFloat, mx, lg)
	}
	// The probabilities are in the I/O type: bmm2's A takes it.
	p := b.pointwise("div", PointwiseDiv, sDims, sStr, s.DType, ex, sum)
	b.tensor(GraphTensor{UID: UIDV, Name: "V", Dims: append([]int64(nil), s.V.Dims[:]...),
		Strides: append([]int64(nil), s.V.Strides[:]...), Type: s.DType})
	b.tensor(GraphTensor{UID: UIDO, Name: "O", Dims: append([]int64(nil), s.O.Dims[:]...),
		Strides: append([]int64(nil), s.O.Strides[:]...), Type: s.DType})
	b.op(GraphOp{Kind: OpMatmul, Name: "bmm2", Comp: DataFloat, In: []int64{p, UIDV}, Out: []int64{UIDO}})
}

// Tensor returns the tensor of uid, or nil.
func (g *Graph) Tensor(uid int64) *GraphTensor {
	for i := range g.Tensors {
		if g.Tensors[i].UID == uid {
			return &g.Tensors[i]
		}
	}
	return nil
}

// String lists the graph's operations, one a line: the kind, name and
// mode, and the tensors read and written with their types.
func (g *Graph) String() string {
	var sb strings.Builder
	name := func(uid int64) string {
		t := g.Tensor(uid)
		if t == nil {
			return fmt.Sprintf("#%d?", uid)
		}
		v := ""
		if t.Virtual {
			v = "~"
		}
		return fmt.Sprintf("%s%s:%v", v, t.Name, t.Type)
	}
	for _, o := range g.Ops {
		what := string(o.Kind)
		switch o.Kind {
		case OpPointwise:
			what += " " + o.Mode.String()
			if o.Mode == PointwiseGenIndex {
				what += fmt.Sprintf(" axis %d", o.Axis)
			}
		case OpReduction:
			what += " " + o.Reduce.String()
		}
		var in, out []string
		for _, u := range o.In {
			in = append(in, name(u))
		}
		for _, u := range o.Out {
			out = append(out, name(u))
		}
		fmt.Fprintf(&sb, "%s (%s): %s -> %s\n", what, o.Name, strings.Join(in, ", "), strings.Join(out, ", "))
	}
	return sb.String()
}

// check verifies that every operation's tensors exist and each tensor is
// written once at most, and that UIDs are unique.
func (g *Graph) check() error {
	seen := map[int64]bool{}
	for _, t := range g.Tensors {
		if seen[t.UID] {
			return fmt.Errorf("cudnn graph: UID %d twice", t.UID)
		}
		seen[t.UID] = true
	}
	written := map[int64]bool{}
	for _, o := range g.Ops {
		for _, u := range append(append([]int64(nil), o.In...), o.Out...) {
			if !seen[u] {
				return fmt.Errorf("cudnn graph: %s uses UID %d, which is no tensor", o.Name, u)
			}
		}
		for _, u := range o.Out {
			if written[u] {
				return fmt.Errorf("cudnn graph: UID %d written twice", u)
			}
			written[u] = true
		}
	}
	if len(g.Ops) == 0 {
		return errors.New("cudnn graph: no operation")
	}
	return nil
}
