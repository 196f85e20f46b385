package tier3

import (
	_ "embed"
	"strconv"
	"strings"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
)

//go:embed kernels/norm.cu
var normSource string

func init() {
	Register(buildLayerNorm, "aten::native_layer_norm", "aten::layer_norm")
}

// lnSpec is what a traced layer norm computes.
type lnSpec struct {
	normShape
	eps  float64
	in   string
	w    string // weight and bias dtype ("" when both are absent)
	hasW bool
	hasB bool
}

// parseLayerNorm reads native_layer_norm(input, normalized_shape, weight,
// bias, eps) and layer_norm(..., cudnn_enable).
func parseLayerNorm(sig *signatures.Signature) (*lnSpec, error) {
	x := rdArg(sig, 0)
	if !x.IsTensor() {
		return nil, rdUnsupported("%s without a tensor input", sig.Op)
	}
	s := &lnSpec{in: signatures.DType(x.Type), eps: 1e-5}
	if !rdIsFloat(s.in) {
		return nil, rdUnsupported("%s of %s", sig.Op, s.in)
	}
	ns, err := parseNormShape(sig, x)
	if err != nil {
		return nil, err
	}
	s.normShape = ns
	for i, has := range []*bool{&s.hasW, &s.hasB} {
		in := rdArg(sig, 2+i)
		if !in.IsTensor() {
			continue
		}
		*has = true
		dt := signatures.DType(in.Type)
		if s.w != "" && dt != s.w {
			return nil, rdUnsupported("%s: weight %s and bias %s", sig.Op, s.w, dt)
		}
		s.w = dt
		if !rdIsFloat(dt) || in.Numel() != s.n {
			return nil, rdUnsupported("%s: %s weight or bias of shape %v", sig.Op, dt, in.Shape)
		}
		if len(in.Strides) == len(in.Shape) {
			t := Tensor{Shape: in.Shape, Strides: in.Strides}
			if !t.Contiguous() {
				return nil, rdUnsupported("%s: weight or bias strides %v", sig.Op, in.Strides)
			}
		}
	}
	if v := strings.TrimSpace(rdArg(sig, 4).Value); v != "" {
		if s.eps, err = parseNormEps(sig, v); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// lnPlan is the launch plan of a layer norm.
type lnPlan struct {
	rp          *rdRowPlan
	rdRowKernel // ln_rows or ln_long
}

// planLayerNorm picks ln_rows (a row in registers: a warp or less per row
// up to 1024 elements, a block up to 32768) or ln_long.
func planLayerNorm(shape, strides []int64, axis int, inSize, sms int64) (*lnPlan, error) {
	var rp *rdRowPlan
	var err error
	if axis >= len(shape) {
		return nil, rdUnsupported("layer norm over no dims")
	}
	if rp, err = rdNewRowPlan(shape, strides, axis, true); err != nil {
		return nil, err
	}
	return &lnPlan{rp: rp, rdRowKernel: rdPickRowKernel(rp, inSize, sms, "ln")}, nil
}

func buildLayerNorm(e *Env, sig *signatures.Signature) (*Instance, error) {
	s, err := parseLayerNorm(sig)
	if err != nil {
		return nil, err
	}
	x, err := e.Input(sig.Inputs[0])
	if err != nil {
		return nil, err
	}
	// PyTorch's own strategy where the traced kernel is its vectorized
	// one and the layout allows it (norm_pt.go).
	if inst, err := lnPTBuild(e, sig, s, x); err != nil || inst != nil {
		return inst, err
	}
	p, err := planLayerNorm(x.Shape, x.Strides, s.axis, x.ElemSize(), int64(e.SMs))
	if err != nil {
		return nil, err
	}
	p.rp.eps = s.eps
	inst, w, b, err := lnOperands(e, sig, s, x, rdAccDType(s.in))
	if err != nil {
		return nil, err
	}
	y, mean, rstd := inst.Outputs[0], inst.Outputs[1], inst.Outputs[2]
	defs, err := layerNormDefines(s, p)
	if err != nil {
		return nil, err
	}
	f, err := e.Function(rdSource("norm.cu", normSource, defs), p.kernel)
	if err != nil {
		return nil, err
	}
	inst.Launch = rowLaunch(f, p.rp, p.grid, p.block, x.Ptr, w, b, y.Ptr, mean.Ptr, rstd.Ptr)
	return inst, nil
}

// lnOperands binds a layer norm's operands: the input x, the weight and
// bias where the op has them (w and b are 0 otherwise), and the outputs
// y, mean and rstd, the statistics in statDType.
func lnOperands(e *Env, sig *signatures.Signature, s *lnSpec, x *Tensor, statDType string) (inst *Instance, w, b cuda.DevicePtr, err error) {
	inst = &Instance{Inputs: []*Tensor{x}, FLOPs: 8 * x.Numel()}
	for i, ptr := range []*cuda.DevicePtr{&w, &b} {
		if in := rdArg(sig, 2+i); in.IsTensor() {
			t, err := e.Input(in)
			if err != nil {
				return nil, 0, 0, err
			}
			inst.Inputs = append(inst.Inputs, t)
			*ptr = t.Ptr
		}
	}
	y, err := e.Output(x.Shape, s.in)
	if err != nil {
		return nil, 0, 0, err
	}
	inst.Outputs = []*Tensor{y}
	for range 2 { // mean, rstd
		t, err := e.Output(s.statShape(x.Shape), statDType)
		if err != nil {
			return nil, 0, 0, err
		}
		inst.Outputs = append(inst.Outputs, t)
	}
	return inst, w, b, nil
}

// layerNormDefines are the compile-time definitions of a layer norm kernel.
func layerNormDefines(s *lnSpec, p *lnPlan) (map[string]string, error) {
	in, err := rdCode(s.in)
	if err != nil {
		return nil, err
	}
	wt := in
	if s.w != "" {
		if wt, err = rdCode(s.w); err != nil {
			return nil, err
		}
	}
	return map[string]string{
		"LN_IN": in, "LN_W": wt, "LN_V": strconv.FormatInt(p.V, 10),
		"LN_CH": strconv.FormatInt(p.CH, 10), "LN_TPR": strconv.FormatInt(p.TPR, 10),
	}, nil
}
