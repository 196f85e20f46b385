package tier3

import (
	_ "embed"
	"fmt"
	"math"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
)

// Fills: aten::fill_ and aten::fill (a Scalar or a 0-dim tensor value),
// aten::zero_, as elementwise copies of a constant into the traced tensor
// (any strides), and aten::arange (fill.cu).

//go:embed kernels/fill.cu
var ewFillSource string

func init() {
	Register(buildFill, "aten::fill_", "aten::fill", "aten::zero_")
	Register(buildArange, "aten::arange")
}

// ewAnalyzeFill reads a fill's signature.
func ewAnalyzeFill(sig *signatures.Signature) (*ewOpPlan, error) {
	ins := sig.Inputs
	if len(ins) == 0 || !ins[0].IsTensor() {
		return nil, fmt.Errorf("%w: %s without a tensor self", ErrUnsupported, sig.Op)
	}
	self := &ins[0]
	pl := &ewOpPlan{code: "COPY", inplace: -1, alpha: ewIntScalar(1), shape: self.Shape,
		outDType: signatures.DType(self.Type)}
	pl.ct = ewCType(pl.outDType)
	switch {
	case sig.Op == "aten::zero_":
		pl.args[0] = ewArg{c: ewIntScalar(0), isSet: true}
	case len(ins) < 2:
		return nil, fmt.Errorf("%w: %s without a value", ErrUnsupported, sig.Op)
	case ins[1].IsTensor():
		if len(ins[1].Shape) != 0 {
			return nil, fmt.Errorf("%w: %s with a %d-dim value", ErrUnsupported, sig.Op, len(ins[1].Shape))
		}
		pl.args[0] = ewArg{in: &ins[1], isSet: true}
		pl.ct = ewCType(signatures.DType(ins[1].Type))
	case ins[1].Type == "Scalar":
		c, err := ewParseScalar(ins[1].Value)
		if err != nil {
			return nil, fmt.Errorf("%s value: %w", sig.Op, err)
		}
		pl.args[0] = ewArg{c: c, isSet: true}
	default:
		return nil, fmt.Errorf("%w: %s value of type %q", ErrUnsupported, sig.Op, ins[1].Type)
	}
	if sig.Op != "aten::fill" {
		pl.out = self
	}
	if ewCodes[pl.outDType] == "" {
		return nil, fmt.Errorf("%w: %s of dtype %s", ErrUnsupported, sig.Op, self.Type)
	}
	return pl, nil
}

func buildFill(e *Env, sig *signatures.Signature) (*Instance, error) {
	pl, err := ewAnalyzeFill(sig)
	if err != nil {
		return nil, err
	}
	pl.pt = e.cfg.ptParse(sig)
	return e.ewInstantiate(pl)
}

// ewArange is an arange's parameters.
type ewArange struct {
	start, step   float64
	istart, istep int64
	n             int64
	dtype         string
}

// ewAnalyzeArange reads arange(end), arange(start, end), arange(start,
// end, step), with out= (the output's dtype is the out tensor's) or with
// the dtype, layout, device, pin_memory arguments (a ScalarType code, or
// None: i64 for integer bounds, f32 otherwise).
func ewAnalyzeArange(sig *signatures.Signature) (*ewArange, error) {
	ins := sig.Inputs
	var nums []signatures.Input
	dtype := ""
	switch last := len(ins) - 1; {
	case last >= 1 && ins[last].IsTensor():
		nums = ins[:last]
		dtype = signatures.DType(ins[last].Type)
	case len(ins) >= 5 && len(ins) <= 7:
		k := len(ins) - 4
		nums = ins[:k]
		d, err := ewDTypeArg(ins[k])
		if err != nil {
			return nil, err
		}
		dtype = d
	default:
		nums = ins
	}
	var vals []ewScalar
	for _, in := range nums {
		if in.Type != "Scalar" {
			return nil, fmt.Errorf("%w: arange bound of type %q", ErrUnsupported, in.Type)
		}
		s, err := ewParseScalar(in.Value)
		if err != nil {
			return nil, fmt.Errorf("arange: %w", err)
		}
		vals = append(vals, s)
	}
	a := &ewArange{step: 1, istep: 1, dtype: dtype}
	var end ewScalar
	switch len(vals) {
	case 1:
		end = vals[0]
	case 2:
		a.start, a.istart, end = vals[0].f, vals[0].i, vals[1]
	case 3:
		a.start, a.istart, end = vals[0].f, vals[0].i, vals[1]
		a.step, a.istep = vals[2].f, vals[2].i
	default:
		return nil, fmt.Errorf("%w: arange with %d bounds", ErrUnsupported, len(vals))
	}
	if a.dtype == "" {
		a.dtype = "i64"
		for _, v := range vals {
			if v.cat == ewFloatCat {
				a.dtype = "f32"
			}
		}
	}
	if a.step == 0 {
		return nil, fmt.Errorf("%w: arange step 0", ErrUnsupported)
	}
	n := math.Ceil((end.f - a.start) / a.step)
	if math.IsNaN(n) || n < 0 || n > 1<<40 {
		return nil, fmt.Errorf("%w: arange of %v elements", ErrUnsupported, n)
	}
	a.n = int64(n)
	if ewCodes[a.dtype] == "" {
		return nil, fmt.Errorf("%w: arange of dtype %s", ErrUnsupported, a.dtype)
	}
	return a, nil
}

func buildArange(e *Env, sig *signatures.Signature) (*Instance, error) {
	a, err := ewAnalyzeArange(sig)
	if err != nil {
		return nil, err
	}
	out, err := e.Output([]int64{a.n}, a.dtype)
	if err != nil {
		return nil, err
	}
	inst := &Instance{Outputs: []*Tensor{out}, Launch: func(*cuda.Stream) error { return nil }}
	if a.n == 0 {
		return inst, nil
	}
	f, err := e.Function(ewSources("fill.cu", ewFillSource, map[string]string{"EW_DO": ewCodes[a.dtype]}), "kr_arange")
	if err != nil {
		return nil, err
	}
	grid := [3]uint32{uint32(min((a.n+ewBlock-1)/ewBlock, int64(max(e.SMs, 1))*8)), 1, 1}
	block := [3]uint32{ewBlock, 1, 1}
	if p := e.cfg.ptParse(sig); p.kind == ptIndexed {
		// The traced launch shape (kr_arange's grid-stride loop covers
		// any).
		grid, block = [3]uint32{uint32(p.grid[0]), 1, 1}, [3]uint32{uint32(p.block[0]), 1, 1}
		inst.Strategy = p.strategy()
	}
	inst.Launch = func(s *cuda.Stream) error {
		return f.Launch(grid, block, 0, s, out.Ptr, a.n, a.start, a.step, a.istart, a.istep)
	}
	return inst, nil
}
