package tier3

import (
	_ "embed"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
)

//go:embed kernels/attention.cu
var attentionCode string

// AttentionOps are the aten ops the flash-attention kernel replays.
var AttentionOps = []string{
	"aten::_cudnn_attention_forward",
	"aten::_scaled_dot_product_cudnn_attention",
	"aten::_scaled_dot_product_flash_attention",
	"aten::_scaled_dot_product_efficient_attention",
	"aten::_flash_attention_forward",
	"aten::_efficient_attention_forward",
}

func init() { Register(buildAttention, AttentionOps...) }

// HeuristicAttnBias names the input guess of an attention op with a bias
// (see Heuristics): the trace records the bias's layout but not its
// values, a mask's -inf or lowest entries included, so it holds uniform
// values like every other input. The kernel reads it and computes every
// (query, key) pair whatever its values, as cuDNN does with a bias.
const HeuristicAttnBias = "attention bias uniform in [-1, 1)"

// attnParams is an attention op's replay parameters (parsed by package
// signatures, which moved them there so that tier 2's cuDNN replay reads
// them too).
type attnParams = signatures.Attention

func unsupported(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, a...))
}

// parseAttention reads an attention op's replay parameters from its
// signature; cases the kernel does not compute return ErrUnsupported:
// those signatures.ParseAttention refuses, and the kernel's own limits
// (head dims 64 and 128, 32-bit indexing, q, k and v strides of 16
// bytes).
func parseAttention(sig *signatures.Signature) (*attnParams, error) {
	p, err := signatures.ParseAttention(sig)
	if err != nil {
		return nil, unsupported("%s", strings.TrimPrefix(err.Error(), signatures.ErrAttention.Error()+": "))
	}
	switch {
	case p.D != 64 && p.D != 128:
		return nil, unsupported("head dim %d (64 and 128 only)", p.D)
	case p.Sq > math.MaxInt32/2 || p.Sk > math.MaxInt32/2 || p.B*p.Hq > math.MaxInt32/2:
		return nil, unsupported("sizes beyond 32-bit indexing: q [%d %d %d %d], k [%d %d %d %d]",
			p.B, p.Hq, p.Sq, p.D, p.B, p.Hk, p.Sk, p.D)
	}
	for i, st := range [][3]int64{p.QStr, p.KStr, p.VStr} {
		for _, s := range st {
			if s%8 != 0 {
				return nil, unsupported("%s strides %v are not multiples of 8 elements (16 bytes)",
					[]string{"q", "k", "v"}[i], append(st[:], 1))
			}
		}
	}
	return p, nil
}

// attnPairs is the number of (query, key) pairs one head computes.
func attnPairs(p *attnParams) int64 { return p.Pairs() }

// attnFLOPs is the FLOP count of the op (signatures.Attention.FLOPs).
func attnFLOPs(p *attnParams) int64 { return p.FLOPs() }

// attnConfig is the kernel's tiling.
type attnConfig struct {
	BlockM, BlockN, Stages int
	Order                  int // 0: heaviest query tiles of all heads first; 1: head by head
	MinBlocks              int // __launch_bounds__ blocks per SM
}

func (c attnConfig) String() string {
	return fmt.Sprintf("m%d_n%d_s%d_o%d_b%d", c.BlockM, c.BlockN, c.Stages, c.Order, c.MinBlocks)
}

func (c attnConfig) threads() int { return c.BlockM / 16 * 32 }

// smem is the dynamic shared memory of a block: a Q tile and Stages K and
// V tiles, and with a bias staged in shared memory (biasSmem) Stages bias
// tiles of BlockM rows of BlockN 16-bit keys padded by 16 bytes.
func (c attnConfig) smem(p *attnParams) int {
	n := (c.BlockM + 2*c.Stages*c.BlockN) * int(p.D) * 2
	if biasSmem(p) {
		n += c.Stages * c.BlockM * (2*c.BlockN + 16)
	}
	return n
}

// smemLimit is the dynamic shared memory a block may opt in to.
func smemLimit(arch int) int {
	switch {
	case arch >= 90:
		return 227 << 10
	case arch == 80 || arch == 87:
		return 163 << 10
	default:
		return 99 << 10
	}
}

// attnDefault picks the tiling for a head dimension and architecture:
// four warps of 16 query rows, so that two blocks (three for D=64) share
// an SM and one block's prologue and epilogue overlap another's loop. (A
// bias staged in shared memory, 27 KiB at D=64, leaves room for two D=64
// blocks on sm_90, not three.)
func attnDefault(p *attnParams, arch int) attnConfig {
	c := attnConfig{BlockM: 64, BlockN: 64, Stages: 2, Order: 0, MinBlocks: 1}
	if p.D == 64 {
		c.Stages = 3
	}
	if c.smem(p) > smemLimit(arch) {
		c.Stages = 2
	}
	return c
}

// valid reports whether c can be compiled and launched for p on arch.
func (c attnConfig) valid(p *attnParams, arch int) error {
	switch {
	case c.BlockM != 64 && c.BlockM != 128:
		return fmt.Errorf("block of %d query rows", c.BlockM)
	case c.BlockN != 32 && c.BlockN != 64 && c.BlockN != 128:
		return fmt.Errorf("key tile of %d", c.BlockN)
	case c.Stages < 2 || c.Stages > 4:
		return fmt.Errorf("%d stages", c.Stages)
	case c.smem(p) > smemLimit(arch):
		return fmt.Errorf("%d bytes of shared memory, sm_%d allows %d", c.smem(p), arch, smemLimit(arch))
	}
	return nil
}

// source is the kernel source specialised for p and c.
func (c attnConfig) source(p *attnParams) Source {
	bf16 := "0"
	if p.DType == "bf16" {
		bf16 = "1"
	}
	src := Source{Name: "attention.cu", Code: attentionCode, Defines: map[string]string{
		"HEAD_DIM": strconv.FormatInt(p.D, 10), "BLOCK_M": strconv.Itoa(c.BlockM),
		"BLOCK_N": strconv.Itoa(c.BlockN), "STAGES": strconv.Itoa(c.Stages),
		"ORDER": strconv.Itoa(c.Order), "IS_BF16": bf16, "MIN_BLOCKS": strconv.Itoa(max(c.MinBlocks, 1)),
	}}
	// Only with a bias: without one the defines, and so the compiled
	// kernel, are those of the kernel before bias support.
	if p.Bias {
		src.Defines["HAS_BIAS"] = "1"
		src.Defines["BIAS_F32"] = "0"
		if p.BiasDType == "f32" {
			src.Defines["BIAS_F32"] = "1"
		}
		if biasPairs(p) {
			src.Defines["BIAS_PAIRS"] = "1"
		}
		if biasSmem(p) {
			src.Defines["BIAS_SMEM"] = "1" // the kernel reads the staged tile, not the pairs
		}
	}
	return src
}

// biasPairs reports whether the kernel may read the bias two keys at a
// time (one 4-byte load of 16-bit elements, 8 of f32): keys contiguous,
// every other stride and the key count even, so that each pair starting at
// an even key is aligned and inside the row.
func biasPairs(p *attnParams) bool {
	st := p.BiasStr
	return p.Bias && st[3] == 1 && st[0]%2 == 0 && st[1]%2 == 0 && st[2]%2 == 0 && p.Sk%2 == 0
}

// biasSmem reports whether the kernel may stage the bias through shared
// memory with the K/V pipeline, 16-byte cp.async chunks of 8 keys: a
// 16-bit bias (an f32 one is read from global memory), keys contiguous,
// every other stride a multiple of 8 elements so that each row starts 16
// bytes aligned, and the key count a multiple of 8 so that a chunk is
// wholly inside a row or wholly past its end. It implies biasPairs.
func biasSmem(p *attnParams) bool {
	st := p.BiasStr
	return p.Bias && p.BiasDType != "f32" && st[3] == 1 && st[0]%8 == 0 && st[1]%8 == 0 && st[2]%8 == 0 &&
		p.Sk%8 == 0
}

// mblocks is the number of query tiles per (batch, head).
func (c attnConfig) mblocks(p *attnParams) int64 {
	return (p.Sq + int64(c.BlockM) - 1) / int64(c.BlockM)
}

// grid is the number of blocks of a launch.
func (c attnConfig) grid(p *attnParams) int64 { return p.B * p.Hq * c.mblocks(p) }

func buildAttention(e *Env, sig *signatures.Signature) (*Instance, error) {
	return buildAttentionConfig(e, sig, nil)
}

// outputLayout returns the storage order of the output: the logical
// [B, H, S, D] dimensions sorted by q's strides, largest first, as
// PyTorch allocates it to match the query's layout.
func outputLayout(p *attnParams) [4]int {
	order := [4]int{0, 1, 2, 3}
	st := [4]int64{p.QStr[0], p.QStr[1], p.QStr[2], 1}
	sort.SliceStable(order[:3], func(a, b int) bool { return st[order[a]] > st[order[b]] })
	return order
}

// buildAttentionConfig builds one buffer set with tiling cfg (nil: the
// default for the GPU).
func buildAttentionConfig(e *Env, sig *signatures.Signature, cfg *attnConfig) (*Instance, error) {
	p, err := parseAttention(sig)
	if err != nil {
		return nil, err
	}
	arch := e.Compiler.Arch()
	if arch < 80 {
		return nil, unsupported("the attention kernel needs sm_80 or newer, this GPU is sm_%d", arch)
	}
	c := attnDefault(p, arch)
	if cfg != nil {
		c = *cfg
	}
	if err := c.valid(p, arch); err != nil {
		return nil, unsupported("attention tiling %v: %v", c, err)
	}
	if c.grid(p) > math.MaxInt32 {
		return nil, unsupported("%d blocks", c.grid(p))
	}
	ins := make([]*Tensor, 3, 4)
	for i := range ins {
		if ins[i], err = e.Input(sig.Inputs[i]); err != nil {
			return nil, err
		}
	}
	if p.Bias {
		// The bias as traced (its strides), filled like every input with
		// values uniform in [-1, 1): the trace records no values
		// (HeuristicAttnBias). Its bytes count in the footprint.
		bt, err := e.Input(sig.Inputs[signatures.AttentionBiasInput(sig.Op)])
		if err != nil {
			return nil, err
		}
		ins = append(ins, bt)
	}
	// The output, stored in q's dimension order, seen in the op's own.
	logical := [4]int64{p.B, p.Hq, p.Sq, p.D}
	order := outputLayout(p)
	var stShape [4]int64
	for i, d := range order {
		stShape[i] = logical[d]
	}
	out, err := e.Output(stShape[:], p.DType)
	if err != nil {
		return nil, err
	}
	var ostr [4]int64 // strides of the logical dims
	for i, s := range ContiguousStrides(stShape[:]) {
		ostr[order[i]] = s
	}
	view := &Tensor{Ptr: out.Ptr, DType: out.DType, Span: out.Span,
		Shape: logical[:], Strides: ostr[:]}
	if p.BSHD {
		view.Shape = []int64{p.B, p.Sq, p.Hq, p.D}
		view.Strides = []int64{ostr[0], ostr[2], ostr[1], ostr[3]}
	}
	outs := []*Tensor{view}
	lsePtr, lsb, lsh := cuda.DevicePtr(0), int64(0), int64(0)
	if p.LSE {
		l, err := e.Output([]int64{p.B, p.Hq, p.LSELen}, "f32")
		if err != nil {
			return nil, err
		}
		outs = append(outs, l)
		lsePtr, lsb, lsh = l.Ptr, p.Hq*p.LSELen, p.LSELen
	}
	f, err := e.Function(c.source(p), "kr_attention_fwd")
	if err != nil {
		return nil, err
	}
	smem := c.smem(p)
	if smem > 48<<10 {
		if err := f.SetAttribute(cuda.FuncAttrMaxDynamicSharedSizeBytes, smem); err != nil {
			return nil, err
		}
	}
	causal, off := int32(0), int32(0)
	if p.Causal {
		causal, off = 1, int32(max(min(p.Offset, math.MaxInt32/2), math.MinInt32/2))
	}
	grid := [3]uint32{uint32(c.grid(p)), 1, 1}
	block := [3]uint32{uint32(c.threads()), 1, 1}
	scaleLog2 := float32(p.Scale * math.Log2E)
	args := []any{ins[0].Ptr, ins[1].Ptr, ins[2].Ptr, out.Ptr, lsePtr,
		p.QStr[0], p.QStr[1], p.QStr[2], p.KStr[0], p.KStr[1], p.KStr[2], p.VStr[0], p.VStr[1], p.VStr[2],
		ostr[0], ostr[1], ostr[2], lsb, lsh,
		int32(p.B), int32(p.Hq), int32(p.Hq / p.Hk), int32(p.Sq), int32(p.Sk), int32(c.mblocks(p)),
		scaleLog2, causal, off}
	if p.Bias {
		args = append(args, ins[3].Ptr, p.BiasStr[0], p.BiasStr[1], p.BiasStr[2], p.BiasStr[3],
			float32(1/p.Scale))
	}
	return &Instance{
		Inputs:  ins,
		Outputs: outs,
		FLOPs:   attnFLOPs(p),
		Launch: func(s *cuda.Stream) error {
			return f.Launch(grid, block, uint32(smem), s, args...)
		},
	}, nil
}
