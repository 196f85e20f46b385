package tier3

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
)

// RMS norm: aten::_fused_rms_norm(input, normalized_shape, weight?, eps?)
// and aten::rms_norm (the same arguments; on CUDA it calls the fused op
// when the weight's dtype is the input's, else a composite of separate
// ops). PyTorch 2.11 runs the fused op with its layer norm kernels
// instantiated with rms_norm = true (layer_norm_kernel.cu,
// RmsNormKernelImpl): vectorized_layer_norm_kernel<T, float, true> with
// blocks of (32, 4) threads, one per row, where the row is a multiple of 4
// elements (at most 2^24), the input not double and the buffers aligned;
// otherwise RowwiseMomentsCUDAKernel (512 threads a row) then
// LayerNormForwardCUDAKernel (256). Its outputs are y (the input's dtype,
// contiguous) and rstd (float, double for double input; the input's
// leading dims, ones for the normalized ones). kernels/rms_norm.cu
// reproduces the three kernels; the traced kernel's name and launch say
// which ran, and a signature of one of the two-kernel path's kernels
// replays that kernel alone. Without a recognised traced kernel the op
// takes the path PyTorch would pick for its shape.
//
// Read from layer_norm_kernel.cu of cyyever/pytorch @ 0660972b2e90 (a
// mirror of pytorch/pytorch main with RMS support; the search index's own
// pytorch/pytorch snapshots of the file predate it): RmsNormKernelImpl,
// LayerNormKernelImplInternal, launch_vectorized_layer_norm_kernel,
// compute_stats, cuWelfordOnlineSum/Combine with rms_norm = true,
// RowwiseMomentsCUDAKernel, LayerNormForwardCUDAKernel and
// _fused_rms_norm_cuda (its default eps, its outputs); and rms_norm_symint
// of layer_norm.cpp (index file id 6079783: the fused op unless the
// weight's dtype differs, channels-last or complex input).

//go:embed kernels/rms_norm.cu
var rmsNormSource string

func init() {
	Register(buildRMSNorm, "aten::_fused_rms_norm", "aten::rms_norm")
	registerFaithful(rmsFaithful, "aten::_fused_rms_norm", "aten::rms_norm")
}

// rmsSpec is what a traced RMS norm computes.
type rmsSpec struct {
	normShape
	in   string // x, y and weight dtype
	acc  string // rstd dtype
	rows int64
	eps  float64
	hasW bool
}

// rmsDefaultEps is the eps of an RMS norm called without one: the
// accumulate type's machine epsilon.
func rmsDefaultEps(acc string) float64 {
	if acc == "f64" {
		return 2.220446049250313e-16
	}
	return 1.1920928955078125e-07
}

// parseRMSNorm reads _fused_rms_norm and rms_norm (input,
// normalized_shape, weight, eps).
func parseRMSNorm(sig *signatures.Signature) (*rmsSpec, error) {
	x := rdArg(sig, 0)
	if !x.IsTensor() {
		return nil, rdUnsupported("%s without a tensor input", sig.Op)
	}
	s := &rmsSpec{in: signatures.DType(x.Type)}
	if !rdIsFloat(s.in) {
		return nil, rdUnsupported("%s of %s", sig.Op, s.in)
	}
	s.acc = rdAccDType(s.in)
	ns, err := parseNormShape(sig, x)
	if err != nil {
		return nil, err
	}
	s.normShape = ns
	if s.n <= 0 || s.n >= 1<<31 {
		return nil, rdUnsupported("%s: rows of %d elements", sig.Op, s.n)
	}
	s.rows = x.Numel() / s.n
	if w := rdArg(sig, 2); w.IsTensor() {
		wt := signatures.DType(w.Type)
		if wt != s.in {
			return nil, rdUnsupported("%s: %s weight for %s input (PyTorch runs separate ops then)", sig.Op, wt, s.in)
		}
		if w.Numel() != s.n {
			return nil, rdUnsupported("%s: weight of shape %v for rows of %d", sig.Op, w.Shape, s.n)
		}
		if len(w.Strides) == len(w.Shape) && !(&Tensor{Shape: w.Shape, Strides: w.Strides}).Contiguous() {
			return nil, rdUnsupported("%s: weight strides %v", sig.Op, w.Strides)
		}
		s.hasW = true
	}
	s.eps = rmsDefaultEps(s.acc)
	if v := strings.TrimSpace(rdArg(sig, 3).Value); v != "" && v != "None" {
		if s.eps, err = parseNormEps(sig, v); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// rmsKind is one of PyTorch's RMS norm kernels, or the two in a row.
type rmsKind int

// The kernels of kernels/rms_norm.cu.
const (
	rmsVec     rmsKind = iota + 1 // vectorized_layer_norm_kernel: kr_rms_vec
	rmsMoments                    // RowwiseMomentsCUDAKernel: kr_rms_moments
	rmsForward                    // LayerNormForwardCUDAKernel: kr_rms_fwd
	rmsPair                       // both, as PyTorch runs them: the whole op
)

// rmsPlan is the launch of an RMS norm.
type rmsPlan struct {
	kind   rmsKind
	traced bool // the traced kernel and launch shape
	grid   [3]uint32
	block  [3]uint32 // rmsPair: the moments kernel's
	block2 [3]uint32 // rmsPair: the forward kernel's
	shared uint32
}

// The block sizes PyTorch launches with on CUDA: num_threads() is 128,
// cuda_utils::kCUDABlockReduceNumThreads 512, kCUDANumThreads 256.
const (
	rmsVecBlockY    = 4
	rmsMomentsBlock = 512
	rmsForwardBlock = 256
)

// strategy names the plan for Instance.Strategy.
func (p *rmsPlan) strategy() string {
	var s string
	switch p.kind {
	case rmsVec:
		s = fmt.Sprintf("rms vectorized_layer_norm<32x%d>", p.block[1])
	case rmsMoments:
		s = fmt.Sprintf("rms RowwiseMoments<%d>", p.block[0])
	case rmsForward:
		s = fmt.Sprintf("rms LayerNormForward<%d>", p.block[0])
	case rmsPair:
		s = fmt.Sprintf("rms RowwiseMoments<%d>+LayerNormForward<%d>", p.block[0], p.block2[0])
	}
	if !p.traced {
		s += " (untraced)"
	}
	return s
}

// rmsVectorizable reports whether PyTorch takes the vectorized kernel for
// s (its buffers, fresh allocations, are aligned).
func rmsVectorizable(s *rmsSpec) bool {
	return s.in != "f64" && s.n%4 == 0 && s.n <= 1<<24
}

// planRMSNorm plans s for sig's traced kernel and launch unless
// c.NoFaithful and they are PyTorch's RMS norm kernels with a launch the op's
// shape allows, else with the path PyTorch picks for the shape.
func (c Config) planRMSNorm(sig *signatures.Signature, s *rmsSpec) (*rmsPlan, error) {
	if s.rows <= 0 || s.rows > 1<<31-1 {
		return nil, rdUnsupported("%s: %d rows", sig.Op, s.rows)
	}
	rows := uint32(s.rows)
	vec := func(by uint32) *rmsPlan {
		p := &rmsPlan{kind: rmsVec, grid: [3]uint32{rows, 1, 1}, block: [3]uint32{32, by, 1}}
		if by > 1 {
			p.shared = by * 3 / 2 * 4
		}
		return p
	}
	if l := sig.Launch; c.faithful() && l != nil && l.Grid == [3]int64{s.rows, 1, 1} && l.Block[1] >= 1 && l.Block[2] == 1 {
		bx, by := l.Block[0], l.Block[1]
		switch {
		case strings.Contains(sig.Kernel, "vectorized_layer_norm_kernel<") && rmsVectorizable(s) &&
			bx == 32 && by&(by-1) == 0 && 32*by <= 1024:
			p := vec(uint32(by))
			p.traced = true
			return p, nil
		case strings.Contains(sig.Kernel, "RowwiseMomentsCUDAKernel<") && by == 1 && bx%32 == 0 && bx <= 1024:
			return &rmsPlan{kind: rmsMoments, traced: true, grid: [3]uint32{rows, 1, 1}, block: [3]uint32{uint32(bx), 1, 1}}, nil
		case strings.Contains(sig.Kernel, "LayerNormForwardCUDAKernel<") && by == 1 && bx <= 1024:
			return &rmsPlan{kind: rmsForward, traced: true, grid: [3]uint32{rows, 1, 1}, block: [3]uint32{uint32(bx), 1, 1}}, nil
		}
	}
	if rmsVectorizable(s) {
		return vec(rmsVecBlockY), nil
	}
	return &rmsPlan{kind: rmsPair, grid: [3]uint32{rows, 1, 1},
		block: [3]uint32{rmsMomentsBlock, 1, 1}, block2: [3]uint32{rmsForwardBlock, 1, 1}}, nil
}

// rmsFaithful reports whether sig replays with its traced PyTorch kernel
// and launch.
func rmsFaithful(sig *signatures.Signature, c Config) bool {
	s, err := parseRMSNorm(sig)
	if err != nil {
		return false
	}
	p, err := c.planRMSNorm(sig, s)
	return err == nil && p.traced
}

// rmsDefines are the compile-time definitions of kernels/rms_norm.cu.
func rmsDefines(s *rmsSpec) (map[string]string, error) {
	code, err := rdCode(s.in)
	if err != nil {
		return nil, err
	}
	w := "0"
	if s.hasW {
		w = "1"
	}
	return map[string]string{"RMS_T": code, "RMS_W": w}, nil
}

// rmsEps is eps as the kernels take it: float, double for double input.
func (s *rmsSpec) rmsEps() any {
	if s.acc == "f64" {
		return s.eps
	}
	return float32(s.eps)
}

func buildRMSNorm(e *Env, sig *signatures.Signature) (*Instance, error) {
	s, err := parseRMSNorm(sig)
	if err != nil {
		return nil, err
	}
	p, err := e.cfg.planRMSNorm(sig, s)
	if err != nil {
		return nil, err
	}
	defs, err := rmsDefines(s)
	if err != nil {
		return nil, err
	}
	shape := rdArg(sig, 0).Shape
	// PyTorch makes the input contiguous (a copy, its own op) before the
	// kernels run.
	x, err := e.NewTensor(shape, ContiguousStrides(shape), s.in)
	if err != nil {
		return nil, err
	}
	inst := &Instance{Inputs: []*Tensor{x}, Strategy: p.strategy(), FLOPs: 3 * x.Numel()}
	var w cuda.DevicePtr
	if s.hasW {
		wt, err := e.Input(rdArg(sig, 2))
		if err != nil {
			return nil, err
		}
		inst.Inputs, w = append(inst.Inputs, wt), wt.Ptr
	}
	fn := func(name string) (*cuda.Function, error) {
		return e.Function(rdSource("rms_norm.cu", rmsNormSource, defs), name)
	}
	if err := rmsBind(e, inst, s, p, shape, x, w, fn); err != nil {
		return nil, err
	}
	return inst, nil
}

// rmsBind allocates the plan's other tensors (rstd an input of the
// forward kernel alone, else an output; y unless the moments kernel runs
// alone) and sets inst.Launch.
func rmsBind(e *Env, inst *Instance, s *rmsSpec, p *rmsPlan, shape []int64, x *Tensor, w cuda.DevicePtr,
	fn func(string) (*cuda.Function, error)) error {
	rstd, err := e.Output(s.statShape(shape), s.acc)
	if err != nil {
		return err
	}
	if p.kind == rmsForward {
		inst.Inputs = append(inst.Inputs, rstd)
	} else {
		inst.Outputs = append(inst.Outputs, rstd)
	}
	var y *Tensor
	if p.kind != rmsMoments {
		if y, err = e.Output(shape, s.in); err != nil {
			return err
		}
		inst.Outputs = append([]*Tensor{y}, inst.Outputs...)
	}
	n := s.n
	var launches []func(*cuda.Stream) error
	add := func(name string, block [3]uint32, shared uint32, args ...any) error {
		f, err := fn(name)
		if err != nil {
			return err
		}
		launches = append(launches, func(st *cuda.Stream) error { return f.Launch(p.grid, block, shared, st, args...) })
		return nil
	}
	switch p.kind {
	case rmsVec:
		err = add("kr_rms_vec", p.block, p.shared, int32(n), float32(s.eps), x.Ptr, w, rstd.Ptr, y.Ptr)
	case rmsMoments:
		err = add("kr_rms_moments", p.block, 0, n, s.rmsEps(), x.Ptr, rstd.Ptr)
	case rmsForward:
		err = add("kr_rms_fwd", p.block, 0, n, x.Ptr, rstd.Ptr, w, y.Ptr)
	case rmsPair:
		if err = add("kr_rms_moments", p.block, 0, n, s.rmsEps(), x.Ptr, rstd.Ptr); err == nil {
			err = add("kr_rms_fwd", p.block2, 0, n, x.Ptr, rstd.Ptr, w, y.Ptr)
		}
	}
	if err != nil {
		return err
	}
	inst.Launch = func(st *cuda.Stream) error {
		for _, l := range launches {
			if err := l(st); err != nil {
				return err
			}
		}
		return nil
	}
	return nil
}
