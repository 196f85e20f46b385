package tier3

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kreplay/kreplay/signatures"
)

// Elementwise ops: unary, binary and ternary aten ops over broadcast
// operands (tensors, 0-dim tensors, Scalars), with PyTorch's type
// promotion, in-place (aten::add_) and out= variants, all on the strided
// elementwise kernel.

// ewResult says how an op's output dtype follows from the promoted dtype.
type ewResult int

const (
	ewSame     ewResult = iota // the promoted dtype
	ewToFloat                  // the promoted dtype, integral and bool becoming f32
	ewToBool                   // bool (comparisons, logical ops)
	ewIntegral                 // the promoted dtype, which must not be floating
)

// ewOpDef describes an elementwise aten op.
type ewOpDef struct {
	code   string // EW_<code> in elementwise.cu
	n      int    // operands
	result ewResult
	alpha  int // input position of alpha (add, sub, rsub) or value (addcmul); 0 if none
}

// ewOps are the elementwise ops replayed, by aten name without "aten::".
// Each is registered with its in-place variant (name + "_").
var ewOps = map[string]ewOpDef{
	"neg":         {code: "NEG", n: 1},
	"abs":         {code: "ABS", n: 1},
	"relu":        {code: "RELU", n: 1},
	"rsqrt":       {code: "RSQRT", n: 1, result: ewToFloat},
	"sqrt":        {code: "SQRT", n: 1, result: ewToFloat},
	"tanh":        {code: "TANH", n: 1, result: ewToFloat},
	"silu":        {code: "SILU", n: 1, result: ewToFloat},
	"sigmoid":     {code: "SIGMOID", n: 1, result: ewToFloat},
	"gelu":        {code: "GELU", n: 1, result: ewToFloat},
	"sin":         {code: "SIN", n: 1, result: ewToFloat},
	"cos":         {code: "COS", n: 1, result: ewToFloat},
	"exp":         {code: "EXP", n: 1, result: ewToFloat},
	"log":         {code: "LOG", n: 1, result: ewToFloat},
	"reciprocal":  {code: "RECIPROCAL", n: 1, result: ewToFloat},
	"erf":         {code: "ERF", n: 1, result: ewToFloat},
	"bitwise_not": {code: "BITWISE_NOT", n: 1, result: ewIntegral},
	"logical_not": {code: "LOGICAL_NOT", n: 1, result: ewToBool},
	"pow":         {code: "POW", n: 2},
	"add":         {code: "ADD", n: 2, alpha: 2},
	"sub":         {code: "SUB", n: 2, alpha: 2},
	"rsub":        {code: "RSUB", n: 2, alpha: 2},
	"mul":         {code: "MUL", n: 2},
	"div":         {code: "DIV", n: 2, result: ewToFloat},
	"eq":          {code: "EQ", n: 2, result: ewToBool},
	"ne":          {code: "NE", n: 2, result: ewToBool},
	"lt":          {code: "LT", n: 2, result: ewToBool},
	"le":          {code: "LE", n: 2, result: ewToBool},
	"gt":          {code: "GT", n: 2, result: ewToBool},
	"ge":          {code: "GE", n: 2, result: ewToBool},
	"bitwise_and": {code: "BITWISE_AND", n: 2, result: ewIntegral},
	"bitwise_or":  {code: "BITWISE_OR", n: 2, result: ewIntegral},
	"bitwise_xor": {code: "BITWISE_XOR", n: 2, result: ewIntegral},
	"logical_and": {code: "LOGICAL_AND", n: 2, result: ewToBool},
	"logical_or":  {code: "LOGICAL_OR", n: 2, result: ewToBool},
	"logical_xor": {code: "LOGICAL_XOR", n: 2, result: ewToBool},
	"maximum":     {code: "MAXIMUM", n: 2},
	"minimum":     {code: "MINIMUM", n: 2},
	"clamp_min":   {code: "CLAMP_MIN", n: 2},
	"clamp_max":   {code: "CLAMP_MAX", n: 2},
	"clamp":       {code: "CLAMP", n: 3},
	"where":       {code: "WHERE", n: 3},
	"masked_fill": {code: "MASKED_FILL", n: 3},
	"addcmul":     {code: "ADDCMUL", n: 3, alpha: 3},
}

func init() {
	for name := range ewOps {
		Register(buildElementwise, "aten::"+name, "aten::"+name+"_")
	}
}

// ewArg is one operand as traced: a tensor input, a constant, or absent.
type ewArg struct {
	in    *signatures.Input // a tensor (0-dim included); nil otherwise
	c     ewScalar
	isSet bool
}

// ewOpPlan is what an elementwise-family signature asks for, read from
// its inputs without touching the GPU.
type ewOpPlan struct {
	code     string // EW_<code>
	ct       string // compute C type
	raw      bool   // a copy of bits (same dtype on both sides)
	alpha    ewScalar
	args     [3]ewArg
	shape    []int64 // output shape
	outDType string
	// out is the traced tensor written (in-place self, copy_ dst, out=),
	// nil for a new contiguous output; inplace is the operand it also is,
	// or -1.
	out     *signatures.Input
	inplace int
	flops   bool
	// pt is the traced kernel's strategy (faithful.go).
	pt ptKernel
}

// ewStrip removes the quotes a profiler may put around a string value.
func ewStrip(v string) string { return strings.Trim(strings.TrimSpace(v), `"'`) }

// ewIsNone reports whether an input is an absent optional argument.
func ewIsNone(in signatures.Input) bool {
	return !in.IsTensor() && in.Type != "Scalar" && (in.Value == "" || in.Value == "None")
}

// ewAnalyze reads an elementwise op's signature.
func ewAnalyze(sig *signatures.Signature) (*ewOpPlan, error) {
	name := strings.TrimPrefix(sig.Op, "aten::")
	inplace := strings.HasSuffix(name, "_")
	base := strings.TrimSuffix(name, "_")
	def, ok := ewOps[base]
	if !ok {
		return nil, fmt.Errorf("%w: %s is not an elementwise op", ErrUnsupported, sig.Op)
	}
	ins := sig.Inputs
	pl := &ewOpPlan{code: def.code, inplace: -1, flops: true, alpha: ewIntScalar(1)}
	n := def.n
	if len(ins) < n && base != "clamp" {
		return nil, fmt.Errorf("%w: %s with %d inputs", ErrUnsupported, sig.Op, len(ins))
	}
	if len(ins) == 0 {
		return nil, fmt.Errorf("%w: %s with no inputs", ErrUnsupported, sig.Op)
	}
	for k := 0; k < n && k < len(ins); k++ {
		in := &ins[k]
		switch {
		case in.IsTensor():
			if signatures.DTypeSize(signatures.DType(in.Type)) == 0 || ewCodes[signatures.DType(in.Type)] == "" {
				return nil, fmt.Errorf("%w: %s operand of dtype %s", ErrUnsupported, sig.Op, in.Type)
			}
			pl.args[k] = ewArg{in: in, isSet: true}
		case in.Type == "Scalar":
			c, err := ewParseScalar(in.Value)
			if err != nil {
				return nil, fmt.Errorf("%s operand %d: %w", sig.Op, k, err)
			}
			pl.args[k] = ewArg{c: c, isSet: true}
		case base == "clamp" && k > 0 && ewIsNone(*in):
		default:
			return nil, fmt.Errorf("%w: %s operand %d of type %q", ErrUnsupported, sig.Op, k, in.Type)
		}
	}
	tensors := 0
	for _, a := range pl.args {
		if a.in != nil {
			tensors++
		}
	}
	if tensors == 0 || ((inplace || base == "masked_fill" || base == "clamp") && pl.args[0].in == nil) {
		return nil, fmt.Errorf("%w: %s without a tensor self", ErrUnsupported, sig.Op)
	}
	// clamp with one bound is clamp_min or clamp_max.
	if base == "clamp" {
		switch {
		case !pl.args[1].isSet && !pl.args[2].isSet:
			return nil, fmt.Errorf("%w: clamp without bounds", ErrUnsupported)
		case !pl.args[2].isSet:
			pl.code = "CLAMP_MIN"
		case !pl.args[1].isSet:
			pl.code, pl.args[1], pl.args[2] = "CLAMP_MAX", pl.args[2], ewArg{}
		}
	}
	// Type promotion over the operands that take part.
	var promo []ewPromoOperand
	var shapes [][]int64
	for k, a := range pl.args {
		if !a.isSet {
			continue
		}
		if a.in != nil {
			shapes = append(shapes, a.in.Shape)
		}
		if (base == "where" && k == 0) || (base == "masked_fill" && k > 0) {
			continue
		}
		var p ewPromoOperand
		if a.in != nil {
			var err error
			if p, err = ewPromoOf(*a.in); err != nil {
				return nil, err
			}
		} else {
			p = ewPromoOperand{dtype: a.c.dtype(), class: ewWrapped}
		}
		promo = append(promo, p)
	}
	common := ewResultType(promo)
	if base == "masked_fill" {
		common = signatures.DType(pl.args[0].in.Type)
	}
	if base == "div" && len(ins) > 2 && !ins[2].IsTensor() {
		switch ewStrip(ins[2].Value) {
		case "trunc":
			pl.code, def.result = "DIV_TRUNC", ewSame
		case "floor":
			pl.code, def.result = "DIV_FLOOR", ewSame
		case "", "None", "none":
		default:
			return nil, fmt.Errorf("%w: div rounding mode %q", ErrUnsupported, ins[2].Value)
		}
	}
	if base == "gelu" && len(ins) > 1 && ewStrip(ins[1].Value) == "tanh" {
		pl.code = "GELU_TANH"
	}
	cat := ewCategoryOf(common)
	switch def.result {
	case ewToFloat:
		if cat != ewFloatCat {
			common = "f32"
		}
		pl.outDType = common
	case ewToBool:
		pl.outDType = "bool"
	case ewIntegral:
		if cat == ewFloatCat {
			return nil, fmt.Errorf("%w: %s of floating dtype %s", ErrUnsupported, sig.Op, common)
		}
		pl.outDType = common
	default:
		if cat == ewBoolCat && (base == "neg" || base == "sub" || base == "rsub") {
			return nil, fmt.Errorf("%w: %s of bool", ErrUnsupported, sig.Op)
		}
		pl.outDType = common
	}
	pl.ct = ewCType(common)
	if def.alpha > 0 && len(ins) > def.alpha && ins[def.alpha].Type == "Scalar" {
		a, err := ewParseScalar(ins[def.alpha].Value)
		if err != nil {
			return nil, fmt.Errorf("%s alpha: %w", sig.Op, err)
		}
		pl.alpha = a
	}
	shape, ok := signatures.BroadcastShape(shapes...)
	if !ok {
		return nil, fmt.Errorf("%w: %s operands %v do not broadcast", ErrUnsupported, sig.Op, shapes)
	}
	pl.shape = shape
	switch {
	case inplace:
		self := pl.args[0].in
		if !slices.Equal(self.Shape, shape) {
			return nil, fmt.Errorf("%w: in-place %s would broadcast self %v to %v", ErrUnsupported, sig.Op, self.Shape, shape)
		}
		pl.out, pl.inplace, pl.outDType = self, 0, signatures.DType(self.Type)
	default:
		pl.out = ewOutArg(ins, n, shape)
		if pl.out != nil {
			pl.outDType = signatures.DType(pl.out.Type)
		}
	}
	if ewCodes[pl.outDType] == "" {
		return nil, fmt.Errorf("%w: %s output dtype %s", ErrUnsupported, sig.Op, pl.outDType)
	}
	return pl, nil
}

// ewOutArg returns the out= tensor of an op: the first tensor input after
// position from, when its shape is the result's (PyTorch resizes an empty
// one, which is then written as a new output); nil otherwise.
func ewOutArg(ins []signatures.Input, from int, shape []int64) *signatures.Input {
	for i := from; i < len(ins); i++ {
		if ins[i].IsTensor() {
			if slices.Equal(ins[i].Shape, shape) && ewCodes[signatures.DType(ins[i].Type)] != "" {
				return &ins[i]
			}
			return nil
		}
	}
	return nil
}

// ewInstantiate allocates a plan's tensors (random contents: elementwise
// ops read any value) and compiles its kernel. An in-place op's tensor is
// both an input and the output, so the footprint counts it twice, as the
// bytes moved do (read and written).
func (e *Env) ewInstantiate(pl *ewOpPlan) (*Instance, error) {
	inst := &Instance{}
	var pr ewProblem
	for k, a := range pl.args {
		switch {
		case a.in != nil:
			t, err := e.Input(*a.in)
			if err != nil {
				return nil, err
			}
			pr.in[k] = ewTensorOperand(t)
			inst.Inputs = append(inst.Inputs, t)
		case a.isSet:
			pr.in[k] = ewConstOperand(a.c)
		}
	}
	var err error
	switch {
	case pl.inplace >= 0:
		pr.out = pr.in[pl.inplace].t
	case pl.out != nil:
		pr.out, err = e.Input(*pl.out)
	default:
		strides := ContiguousStrides(pl.shape)
		if pl.pt.kind == ptGeneric {
			// PyTorch allocates the result in the layout of its input.
			for _, x := range inst.Inputs {
				if st, ok := ptOutStrides(pl.shape, x.Shape, x.Strides); ok {
					strides = st
					break
				}
			}
		}
		pr.out, err = e.NewTensor(pl.shape, strides, pl.outDType)
	}
	if err != nil {
		return nil, err
	}
	inst.Outputs = []*Tensor{pr.out}
	spec := ewSpec{op: pl.code, ct: pl.ct, alpha: pl.alpha, raw: pl.raw, pt: pl.pt}
	launch, ok, err := e.ptCompile(spec, pr)
	if err != nil {
		return nil, err
	}
	if ok {
		inst.Strategy = pl.pt.strategy()
	} else if launch, err = e.ewCompile(spec, []ewProblem{pr}); err != nil {
		return nil, err
	}
	inst.Launch = launch
	if pl.flops {
		inst.FLOPs = pr.out.Numel()
	}
	return inst, nil
}

// buildElementwise is the Builder of the elementwise ops.
func buildElementwise(e *Env, sig *signatures.Signature) (*Instance, error) {
	pl, err := ewAnalyze(sig)
	if err != nil {
		return nil, err
	}
	pl.pt = e.cfg.ptParse(sig)
	return e.ewInstantiate(pl)
}
