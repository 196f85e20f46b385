package tier3

import (
	"fmt"
	"strings"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
)

// aten::cat: each input tensor (with its traced shape and strides) is
// copied into its slice of a new contiguous output, all of them in one
// launch: PyTorch's CatArrayBatchedCopy loop with the traced launch shape
// (kr_cat_pt, faithful.go) when the traced kernel is one, else the batched
// strided copy (kr_ew_batched, one blockIdx.y per input).
//
// The profiler records a TensorList's shapes and strides but not its
// dtype. The element dtype is taken from the list's type when it names
// one, else from the kernel's name (CatArrayBatchedCopy<OpaqueType<N>>
// gives the element size: 1 bool, 2 f16, 4 f32, 8 i64; explicit types
// such as c10::Half are read as such), else f16, the dtype of the traced
// models' activations. A copy moves bits, so only the element size
// matters to the replay.

func init() {
	Register(buildCat, "aten::cat")
}

// ewCatPlan is a cat's inputs, dimension, dtype and output shape.
type ewCatPlan struct {
	parts []signatures.Tensor // the inputs that are copied (legacy empty 1-d inputs dropped)
	dim   int
	dtype string
	shape []int64
}

// ewAnalyzeCat reads a cat's signature.
func ewAnalyzeCat(sig *signatures.Signature) (*ewCatPlan, error) {
	ins := sig.Inputs
	if len(ins) == 0 || ins[0].List == nil {
		return nil, fmt.Errorf("%w: cat without a traced tensor list", ErrUnsupported)
	}
	pl := &ewCatPlan{dtype: signatures.DType(ins[0].Type)}
	if ewCodes[pl.dtype] == "" {
		pl.dtype = ewKernelDType(sig.Kernel)
	}
	if pl.dtype == "" {
		pl.dtype = "f16"
	}
	d := int64(0)
	if len(ins) > 1 && ins[1].Type == "Scalar" {
		s, err := ewParseScalar(ins[1].Value)
		if err != nil || s.cat != ewIntCat {
			return nil, fmt.Errorf("%w: cat dim %q", ErrUnsupported, ins[1].Value)
		}
		d = s.i
	}
	for _, t := range ins[0].List {
		if len(t.Shape) == 1 && t.Shape[0] == 0 {
			continue // PyTorch skips legacy empty inputs
		}
		if len(t.Strides) != len(t.Shape) {
			t.Strides = ContiguousStrides(t.Shape)
		}
		pl.parts = append(pl.parts, t)
	}
	if len(pl.parts) == 0 {
		return nil, fmt.Errorf("%w: cat of empty tensors only", ErrUnsupported)
	}
	rank := len(pl.parts[0].Shape)
	if d < 0 {
		d += int64(rank)
	}
	if d < 0 || d >= int64(max(rank, 1)) || rank == 0 {
		return nil, fmt.Errorf("%w: cat dim %d of rank %d", ErrUnsupported, d, rank)
	}
	pl.dim = int(d)
	pl.shape = append([]int64(nil), pl.parts[0].Shape...)
	pl.shape[d] = 0
	for _, t := range pl.parts {
		if len(t.Shape) != rank {
			return nil, fmt.Errorf("%w: cat of ranks %d and %d", ErrUnsupported, rank, len(t.Shape))
		}
		for i := range t.Shape {
			if i != pl.dim && t.Shape[i] != pl.shape[i] {
				return nil, fmt.Errorf("%w: cat of shapes %v", ErrUnsupported, ewCatShapes(pl.parts))
			}
		}
		pl.shape[d] += t.Shape[d]
	}
	return pl, nil
}

func ewCatShapes(ts []signatures.Tensor) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprint(&b, t.Shape)
	}
	return b.String()
}

// ewCatProblems returns the copies of a cat: each input into its slice of
// out (inputs with no elements dropped).
func ewCatProblems(pl *ewCatPlan, out *Tensor, inputs []*Tensor) []ewProblem {
	var probs []ewProblem
	var off int64
	for _, t := range inputs {
		view := &Tensor{Ptr: out.Ptr + cuda.DevicePtr(off*out.ElemSize()), Shape: t.Shape, Strides: out.Strides,
			DType: out.DType, Span: span(t.Shape, out.Strides)}
		off += t.Shape[pl.dim] * out.Strides[pl.dim]
		if t.Numel() == 0 {
			continue
		}
		pr := ewProblem{out: view}
		pr.in[0] = ewTensorOperand(t)
		probs = append(probs, pr)
	}
	return probs
}

// ewMaxBatch is the most problems one batched launch takes (gridDim.y).
const ewMaxBatch = 65535

func buildCat(e *Env, sig *signatures.Signature) (*Instance, error) {
	pl, err := ewAnalyzeCat(sig)
	if err != nil {
		return nil, err
	}
	out, err := e.Output(pl.shape, pl.dtype)
	if err != nil {
		return nil, err
	}
	inst := &Instance{Outputs: []*Tensor{out}, Launch: func(*cuda.Stream) error { return nil }}
	for _, p := range pl.parts {
		t, err := e.NewTensor(p.Shape, p.Strides, pl.dtype)
		if err != nil {
			return nil, err
		}
		inst.Inputs = append(inst.Inputs, t)
	}
	if launch, ok, err := e.ptCat(e.cfg.ptParse(sig), pl.dim, out, inst.Inputs); err != nil {
		return nil, err
	} else if ok {
		inst.Launch, inst.Strategy = launch, ptCat.String()
		return inst, nil
	}
	probs := ewCatProblems(pl, out, inst.Inputs)
	for len(probs) > 0 {
		n := min(len(probs), ewMaxBatch)
		launch, err := e.ewCompile(ewSpec{op: "COPY", raw: true}, probs[:n])
		if err != nil {
			return nil, err
		}
		prev := inst.Launch
		inst.Launch = func(s *cuda.Stream) error {
			if err := prev(s); err != nil {
				return err
			}
			return launch(s)
		}
		probs = probs[n:]
	}
	return inst, nil
}
