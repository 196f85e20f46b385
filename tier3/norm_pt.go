package tier3

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
)

// Faithful replay of PyTorch's vectorized_layer_norm_kernel: one block per
// row with the traced block (32, BY), 4-element vector loads, Welford
// statistics updated element by element (a reciprocal per element), warp
// shuffles then a shared-memory tree over the warps, and a second pass
// over the row for the output (kernels/norm_pt.cu). kreplay's own layer
// norm (a warp per row, the row held in registers) is about 1.5 times
// faster than PyTorch's on the BLOOM prefill rows of 1024 halves. Other
// traced kernels, and layouts PyTorch would not vectorize (rows not
// contiguous or not a multiple of 4, weights of another dtype), run on
// kreplay's kernel.

//go:embed kernels/norm_pt.cu
var normPTSource string

// lnPTPlan is a faithful layer norm launch.
type lnPTPlan struct {
	defines     map[string]string
	grid, block [3]uint32
	shared      uint32
	rows, n     int64
}

// lnPTMake plans the faithful launch of layer norm s over x's shape and
// strides for the traced kernel and launch of sig; ok false when the
// traced kernel is not vectorized_layer_norm_kernel or its strategy does
// not apply.
func (c Config) lnPTMake(sig *signatures.Signature, s *lnSpec, shape, strides []int64) (*lnPTPlan, bool) {
	if !c.faithful() || sig == nil || sig.Launch == nil || !strings.Contains(sig.Kernel, "vectorized_layer_norm_kernel<") {
		return nil, false
	}
	codes := map[string]string{"f16": "EW_F16", "bf16": "EW_BF16", "f32": "EW_F32"}
	if codes[s.in] == "" || (s.w != "" && s.w != s.in) {
		return nil, false
	}
	g, b := sig.Launch.Grid, sig.Launch.Block
	by := b[1]
	if b[0] != 32 || b[2] != 1 || by < 1 || by&(by-1) != 0 || 32*by > 1024 || g[1] != 1 || g[2] != 1 {
		return nil, false
	}
	t := &Tensor{Shape: shape, Strides: strides}
	if !t.Contiguous() || s.n%4 != 0 || s.n == 0 || s.n >= 1<<31 {
		return nil, false
	}
	rows := t.Numel() / s.n
	if rows != g[0] || rows == 0 {
		return nil, false
	}
	p := &lnPTPlan{grid: [3]uint32{uint32(rows), 1, 1}, block: [3]uint32{32, uint32(by), 1}, rows: rows, n: s.n}
	if by > 1 {
		p.shared = uint32(by * 3 / 2 * 4)
	}
	flag := func(b bool) string { return map[bool]string{true: "1", false: "0"}[b] }
	p.defines = map[string]string{"LP_T": codes[s.in], "LP_HAS_W": flag(s.hasW), "LP_HAS_B": flag(s.hasB)}
	return p, true
}

// lnPTBuild builds the faithful instance of a traced layer norm, or
// returns nil when the traced strategy is not one it does.
func lnPTBuild(e *Env, sig *signatures.Signature, s *lnSpec, x *Tensor) (*Instance, error) {
	p, ok := e.cfg.lnPTMake(sig, s, x.Shape, x.Strides)
	if !ok {
		return nil, nil
	}
	inst, w, b, err := lnOperands(e, sig, s, x, "f32")
	if err != nil {
		return nil, err
	}
	inst.Strategy = fmt.Sprintf("vectorized_layer_norm<32x%d>", p.block[1])
	y, mean, rstd := inst.Outputs[0], inst.Outputs[1], inst.Outputs[2]
	f, err := e.Function(ewSources("norm_pt.cu", normPTSource, p.defines), "kr_ln_pt")
	if err != nil {
		return nil, err
	}
	n, eps := int32(p.n), float32(s.eps)
	inst.Launch = func(st *cuda.Stream) error {
		return f.Launch(p.grid, p.block, p.shared, st, n, eps, x.Ptr, w, b, mean.Ptr, rstd.Ptr, y.Ptr)
	}
	return inst, nil
}
