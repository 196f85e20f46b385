package whatif

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kreplay/kreplay/signatures"
)

// RowNormABI is the signature a what-if kernel of a row-norm recipe has:
// x and y are [rows, cols] row-major, w is [cols], all of T, the traced
// input's dtype (f16 and bf16 as 16-bit storage, f32 as float); eps is
// the norm's epsilon. Launch shape: Kernel.Grid, Block and Shared.
const RowNormABI = `extern "C" __global__ void NAME(const T *x, const T *w, T *y, int rows, int cols, float eps)`

// Source is where a tensor operand of a recipe's step comes from: the
// output of an earlier step, or an external operand.
type Source struct {
	// Step is the step whose output it is, or -1 for an external operand.
	Step int
	// Ext names the external operand: "x", "w" or "eps".
	Ext string
}

// out is the output of step k; ext an external operand.
func out(k int) Source       { return Source{Step: k} }
func ext(name string) Source { return Source{Step: -1, Ext: name} }

// Ref is a signature input of a recipe's step: Inputs[Input] of step Step.
type Ref struct{ Step, Input int }

// Recipe is a chain of ops whose data flow kreplay knows, which the
// trace does not record: how a kernel of its ABI is bound to a run, and
// how the run is replayed for the output check.
type Recipe struct {
	Name string
	// Doc says what the chain is, in the framework's words.
	Doc string
	// Ops are the chain's aten ops, in launch order.
	Ops []string
	// Flow gives, per step, the source of each signature input the op
	// reads as a tensor, by the input's position (copy_'s destination,
	// input 0, is its output, not an operand).
	Flow []map[int]Source
	// X, W and Eps are where the ABI's x, w and eps are among the steps'
	// signature inputs (eps a 0-dim tensor or a Scalar).
	X, W, Eps Ref
	// Pow and Mean are the steps that square x and average over its last
	// dimension.
	Pow, Mean int
	// Casts is true for the chain of a half-precision model, which casts
	// x to f32 first and rounds the normalized x back to its dtype before
	// the multiply by w.
	Casts bool
}

// Recipes are the chains kreplay knows: Hugging Face's LlamaRMSNorm.forward
// (transformers' modeling_llama.py; Mistral, Qwen2 and others copy it),
//
//	input_dtype = hidden_states.dtype
//	hidden_states = hidden_states.to(torch.float32)
//	variance = hidden_states.pow(2).mean(-1, keepdim=True)
//	hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
//	return self.weight * hidden_states.to(input_dtype)
//
// as eager PyTorch launches it: for an f16 or bf16 model eight kernels,
// the two casts included (llama-rmsnorm, as in the embedded Llama-7B
// prefill); for an f32 model six, its casts being no-ops
// (llama-rmsnorm-f32).
var Recipes = []*Recipe{
	{
		Name: "llama-rmsnorm",
		Doc:  "Hugging Face LlamaRMSNorm of an f16/bf16 model: h = x.to(f32); v = h.pow(2).mean(-1, keepdim); h = h * rsqrt(v + eps); y = w * h.to(x.dtype)",
		Ops:  []string{"aten::copy_", "aten::pow", "aten::mean", "aten::add", "aten::rsqrt", "aten::mul", "aten::copy_", "aten::mul"},
		Flow: []map[int]Source{
			{1: ext("x")},
			{0: out(0)},
			{0: out(1)},
			{0: out(2), 1: ext("eps")},
			{0: out(3)},
			{0: out(0), 1: out(4)},
			{1: out(5)},
			{0: ext("w"), 1: out(6)},
		},
		X: Ref{0, 1}, W: Ref{7, 0}, Eps: Ref{3, 1}, Pow: 1, Mean: 2, Casts: true,
	},
	{
		Name: "llama-rmsnorm-f32",
		Doc:  "Hugging Face LlamaRMSNorm of an f32 model: v = x.pow(2).mean(-1, keepdim); y = w * (x * rsqrt(v + eps))",
		Ops:  []string{"aten::pow", "aten::mean", "aten::add", "aten::rsqrt", "aten::mul", "aten::mul"},
		Flow: []map[int]Source{
			{0: ext("x")},
			{0: out(0)},
			{0: out(1), 1: ext("eps")},
			{0: out(2)},
			{0: ext("x"), 1: out(3)},
			{0: ext("w"), 1: out(4)},
		},
		X: Ref{0, 0}, W: Ref{5, 0}, Eps: Ref{2, 1}, Pow: 0, Mean: 1,
	},
}

// RecipeNames lists the recipes' names.
func RecipeNames() []string {
	var n []string
	for _, r := range Recipes {
		n = append(n, r.Name)
	}
	return n
}

// RecipeByName returns the recipe called name, or nil.
func RecipeByName(name string) *Recipe {
	for _, r := range Recipes {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// RecipeFor returns the recipe whose ops are ops, or nil.
func RecipeFor(ops []string) *Recipe {
	for _, r := range Recipes {
		if slices.Equal(r.Ops, ops) {
			return r
		}
	}
	return nil
}

// DefaultEps is the eps a run is bound with when the trace does not
// record it: LlamaConfig's default rms_norm_eps. A guess: PyTorch's
// profiler records `variance + eps` with eps as a 0-dim double tensor,
// without its value. Llama-2 checkpoints use 1e-5.
const DefaultEps = 1e-6

// RowNorm is a variant of a row-norm recipe bound to RowNormABI.
type RowNorm struct {
	Recipe string `json:"recipe"`
	// DType is T, the dtype of x, w and y; Shape x's and y's traced
	// shape, Rows and Cols the ABI's view of it.
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
	Rows  int64   `json:"rows"`
	Cols  int64   `json:"cols"`
	Eps   float64 `json:"eps"`
	// EpsTraced is true when the trace recorded eps (a Scalar); false
	// when it is the one given (default DefaultEps), a guess.
	EpsTraced bool `json:"eps_traced"`
}

// Bind binds variant v of set to the recipe's ABI: its x, w and eps,
// checked against what the chain must be (a mean of squares over the
// last dimension, w of the row's length, y of x's shape). eps is used
// when the trace does not record it.
func (r *Recipe) Bind(set *signatures.Set, v Variant, eps float64) (*RowNorm, error) {
	if !slices.Equal(v.Ops, r.Ops) || len(v.Sigs) != len(r.Ops) {
		return nil, fmt.Errorf("%s: the run's ops %s are not the recipe's %s", r.Name, strings.Join(v.Ops, ","), strings.Join(r.Ops, ","))
	}
	in := func(ref Ref) signatures.Input {
		sig := set.Signatures[v.Sigs[ref.Step]]
		if ref.Input < len(sig.Inputs) {
			return sig.Inputs[ref.Input]
		}
		return signatures.Input{}
	}
	sigOf := func(step int) *signatures.Signature { return set.Signatures[v.Sigs[step]] }
	x, w := in(r.X), in(r.W)
	if !x.IsTensor() || len(x.Shape) == 0 {
		return nil, fmt.Errorf("%s: x (%s input %d) is not a tensor", r.Name, r.Ops[r.X.Step], r.X.Input)
	}
	rn := &RowNorm{Recipe: r.Name, DType: signatures.DType(x.Type), Shape: slices.Clone(x.Shape)}
	switch {
	case rn.DType != "f16" && rn.DType != "bf16" && rn.DType != "f32":
		return nil, fmt.Errorf("%s: x of dtype %s (the ABI takes f16, bf16 or f32)", r.Name, rn.DType)
	case r.Casts && rn.DType == "f32":
		return nil, fmt.Errorf("%s: x is f32, where the chain casts it to f32 (use %s-f32)", r.Name, r.Name)
	case !contiguous(x):
		return nil, fmt.Errorf("%s: x %v with strides %v is not contiguous", r.Name, x.Shape, x.Strides)
	}
	rn.Cols = x.Shape[len(x.Shape)-1]
	rn.Rows = x.Numel() / max(rn.Cols, 1)
	if rn.Cols <= 0 || rn.Rows <= 0 || rn.Cols > 1<<31-1 || rn.Rows > 1<<31-1 {
		return nil, fmt.Errorf("%s: x %v gives %d rows of %d (the ABI's int)", r.Name, x.Shape, rn.Rows, rn.Cols)
	}
	if !w.IsTensor() || signatures.DType(w.Type) != rn.DType || w.Numel() != rn.Cols || !contiguous(w) {
		return nil, fmt.Errorf("%s: w (%s input %d) is %s%v, want a contiguous %s[%d]", r.Name, r.Ops[r.W.Step], r.W.Input,
			signatures.DType(w.Type), w.Shape, rn.DType, rn.Cols)
	}
	if p := sigOf(r.Pow); len(p.Inputs) < 2 || p.Inputs[1].Type != "Scalar" || strings.TrimSpace(p.Inputs[1].Value) != "2" {
		return nil, fmt.Errorf("%s: %s is not a square (exponent %+v)", r.Name, p.Label, p.Inputs[1:])
	}
	if m := sigOf(r.Mean); m.Tensor == nil || !m.Tensor.KeepDim || !slices.Equal(m.Tensor.Dims, []int64{int64(len(x.Shape) - 1)}) {
		return nil, fmt.Errorf("%s: %s is not a mean over the last dimension with keepdim", r.Name, m.Label)
	}
	last := sigOf(len(r.Ops) - 1)
	var shapes [][]int64
	for _, i := range last.Inputs {
		if i.IsTensor() {
			shapes = append(shapes, i.Shape)
		}
	}
	if y, ok := signatures.BroadcastShape(shapes...); !ok || !slices.Equal(y, x.Shape) {
		return nil, fmt.Errorf("%s: the output %v of %s is not x's shape %v", r.Name, y, last.Label, x.Shape)
	}
	rn.Eps = eps
	switch e := in(r.Eps); {
	case e.Type == "Scalar":
		v, err := strconv.ParseFloat(strings.TrimSpace(e.Value), 64)
		if err != nil {
			return nil, fmt.Errorf("%s: eps %q unreadable", r.Name, e.Value)
		}
		rn.Eps, rn.EpsTraced = v, true
	case !e.IsTensor() || e.Numel() != 1:
		return nil, fmt.Errorf("%s: eps (%s input %d) is %s%v, want a Scalar or a 0-dim tensor", r.Name, r.Ops[r.Eps.Step], r.Eps.Input, e.Type, e.Shape)
	}
	return rn, nil
}

// contiguous reports whether a traced tensor is row-major contiguous (or
// its strides are not recorded).
func contiguous(in signatures.Input) bool {
	if len(in.Strides) != len(in.Shape) {
		return true
	}
	want := int64(1)
	for i := len(in.Shape) - 1; i >= 0; i-- {
		if in.Shape[i] != 1 && in.Strides[i] != want {
			return false
		}
		want *= in.Shape[i]
	}
	return true
}
