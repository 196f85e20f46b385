package tier3

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
)

//go:embed kernels/softmax.cu
var softmaxSource string

func init() {
	Register(buildSoftmax, "aten::_softmax", "aten::softmax", "aten::_log_softmax", "aten::log_softmax")
}

// smSpec is what a traced softmax computes.
type smSpec struct {
	dim     int
	log     bool
	in, out string
}

// parseSoftmax reads _softmax(self, dim, half_to_float) and
// softmax(self, dim, dtype) (and the log_ variants).
func parseSoftmax(sig *signatures.Signature) (*smSpec, error) {
	x := rdArg(sig, 0)
	if !x.IsTensor() {
		return nil, rdUnsupported("%s without a tensor input", sig.Op)
	}
	name := strings.TrimPrefix(sig.Op, "aten::")
	s := &smSpec{in: signatures.DType(x.Type), log: strings.Contains(name, "log_softmax")}
	if !rdIsFloat(s.in) {
		return nil, rdUnsupported("%s of %s", sig.Op, s.in)
	}
	var err error
	if s.dim, err = rdParseDim(rdArg(sig, 1).Value, len(x.Shape)); err != nil {
		return nil, rdUnsupported("%s: %v", sig.Op, err)
	}
	s.out = s.in
	if strings.HasPrefix(name, "_") {
		htf, err := rdParseBool(rdArg(sig, 2).Value)
		if err != nil {
			return nil, rdUnsupported("%s: %v", sig.Op, err)
		}
		if htf {
			if s.in != "f16" && s.in != "bf16" {
				return nil, rdUnsupported("%s with half_to_float on %s", sig.Op, s.in)
			}
			s.out = "f32"
		}
	} else {
		dt, err := rdParseScalarType(rdArg(sig, 2).Value)
		if err != nil {
			return nil, err
		}
		if dt != "" {
			if !rdIsFloat(dt) {
				return nil, rdUnsupported("%s into %s", sig.Op, dt)
			}
			s.out = dt
		}
	}
	return s, nil
}

// smPlan is the launch plan of a softmax.
type smPlan struct {
	rp          *rdRowPlan
	rdRowKernel // sm_rows, sm_long or sm_cols
}

// planSoftmax picks the kernel: sm_rows (a row in registers: a warp or
// less per row up to 1024 elements, a block up to 32768), sm_long (a block
// per longer row) or sm_cols (a thread per row when the softmax dim is not
// the fastest-varying in memory).
func planSoftmax(shape, strides []int64, dim int, inSize, sms int64) (*smPlan, error) {
	rp, err := rdNewRowPlan(shape, strides, dim, false)
	if err != nil {
		return nil, err
	}
	p := &smPlan{rp: rp, rdRowKernel: rdRowKernel{V: 1, CH: 1, TPR: 32}}
	if len(rp.other) > 0 && rp.sd > rp.minOtherStride() {
		rp.fastestLast()
		p.kernel = "sm_cols"
		p.grid = [3]uint32{uint32(rdClamp(rdCeilDiv(rp.rows, 256), 1, sms*32)), 1, 1}
		p.block = [3]uint32{256, 1, 1}
		return p, nil
	}
	p.rdRowKernel = rdPickRowKernel(rp, inSize, sms, "sm")
	return p, nil
}

func buildSoftmax(e *Env, sig *signatures.Signature) (*Instance, error) {
	s, err := parseSoftmax(sig)
	if err != nil {
		return nil, err
	}
	x, err := e.Input(sig.Inputs[0])
	if err != nil {
		return nil, err
	}
	p, err := planSoftmax(x.Shape, x.Strides, s.dim, x.ElemSize(), int64(e.SMs))
	if err != nil {
		return nil, err
	}
	if e.cfg.causalScores(x.Shape, s.dim) {
		if err := e.MaskCausal(x); err != nil {
			return nil, err
		}
	}
	y, err := e.Output(x.Shape, s.out)
	if err != nil {
		return nil, err
	}
	defs, err := softmaxDefines(s, p)
	if err != nil {
		return nil, err
	}
	if pt, ok := e.cfg.smParsePT(sig, s, x.Shape, x.Strides); ok {
		defs["SM_PT_LOG2"] = strconv.FormatInt(pt.log2, 10)
		f, err := e.Function(rdSource("softmax.cu", softmaxSource, defs), "sm_pt_warp")
		if err != nil {
			return nil, err
		}
		return &Instance{
			Inputs: []*Tensor{x}, Outputs: []*Tensor{y}, FLOPs: 5 * x.Numel(), Strategy: pt.strategy(),
			Launch: func(st *cuda.Stream) error {
				return f.Launch(pt.grid, pt.block, 0, st, x.Ptr, pt.rows, int32(pt.n), y.Ptr)
			},
		}, nil
	}
	f, err := e.Function(rdSource("softmax.cu", softmaxSource, defs), p.kernel)
	if err != nil {
		return nil, err
	}
	return &Instance{
		Inputs: []*Tensor{x}, Outputs: []*Tensor{y}, FLOPs: 5 * x.Numel(),
		Launch: rowLaunch(f, p.rp, p.grid, p.block, x.Ptr, y.Ptr),
	}, nil
}

// softmaxDefines are the compile-time definitions of a softmax kernel.
func softmaxDefines(s *smSpec, p *smPlan) (map[string]string, error) {
	in, out, err := rdCodes2(s.in, s.out)
	if err != nil {
		return nil, err
	}
	log := "0"
	if s.log {
		log = "1"
	}
	return map[string]string{
		"SM_IN": in, "SM_OUT": out, "SM_LOG": log, "SM_V": strconv.FormatInt(p.V, 10),
		"SM_CH": strconv.FormatInt(p.CH, 10), "SM_TPR": strconv.FormatInt(p.TPR, 10),
	}, nil
}

// smPT is a traced softmax_warp_forward launch, replayed by sm_pt_warp
// unless Config.NoFaithful.
type smPT struct {
	log2        int64 // the rows' length bound, log2_elements
	rows, n     int64
	grid, block [3]uint32
}

func (p smPT) strategy() string { return fmt.Sprintf("softmax_warp_forward<%d>", p.log2) }

// smParsePT reads a traced
// softmax_warp_forward<in, out, acc, log2_elements, is_log_softmax, is_masked>
// (PersistentSoftmax.cuh): ok unless c.NoFaithful, the kernel is that one
// (unmasked, of the same log-ness), the softmax runs along contiguous rows
// of at most 2^log2_elements elements, and the traced launch shape is the
// kernel's (a block of WS lanes by warps, covering every row); otherwise
// the fast kernels run.
func (c Config) smParsePT(sig *signatures.Signature, s *smSpec, shape, strides []int64) (smPT, bool) {
	var p smPT
	if !c.faithful() || sig.Launch == nil {
		return p, false
	}
	name := strings.TrimPrefix(sig.Kernel, "void ")
	name = strings.ReplaceAll(name, "(anonymous namespace)::", "")
	name = strings.ReplaceAll(name, "at::native::", "")
	const prefix = "softmax_warp_forward<"
	if !strings.HasPrefix(name, prefix) {
		return p, false
	}
	args := strings.Split(strings.TrimPrefix(name, prefix), ",")
	if len(args) < 6 {
		return p, false
	}
	log2, err := strconv.ParseInt(strings.TrimSpace(args[3]), 10, 64)
	if err != nil || log2 < 0 || log2 > 11 {
		return p, false
	}
	isLog := strings.TrimSpace(args[4])
	masked := strings.TrimSpace(strings.SplitN(args[5], ">", 2)[0])
	if isLog != strconv.FormatBool(s.log) || masked != "false" {
		return p, false
	}
	// Rows along the innermost dimension of a contiguous tensor.
	t := Tensor{Shape: shape, Strides: strides}
	if !t.Contiguous() {
		return p, false
	}
	for _, d := range shape[s.dim+1:] {
		if d != 1 {
			return p, false
		}
	}
	p.log2, p.n = log2, shape[s.dim]
	p.rows = t.Numel() / max(p.n, 1)
	np := int64(1) << log2
	ws := min(np, 32)
	wb := int64(1)
	if np <= 128 {
		wb = 2
	}
	l := sig.Launch
	if p.n < 1 || p.n > np || l.Block[0] != ws || l.Block[1] < 1 || l.Block[0]*l.Block[1] > 1024 || l.Block[2] != 1 ||
		l.Grid[1] != 1 || l.Grid[2] != 1 || l.Grid[0] < 1 || l.Grid[0]*l.Block[1]*wb < p.rows {
		return p, false
	}
	p.grid = [3]uint32{uint32(l.Grid[0]), 1, 1}
	p.block = [3]uint32{uint32(l.Block[0]), uint32(l.Block[1]), 1}
	return p, true
}
