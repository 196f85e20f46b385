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

// attnSpec says where an attention op keeps its arguments (indices into
// the profiler's inputs, from native_functions.yaml; -1: the op has none).
type attnSpec struct {
	bshd       bool // q, k, v are [batch, seq, heads, dim]; else [batch, heads, seq, dim]
	bias       int  // attn_bias
	cumQ, cumK int  // cumulative sequence lengths of a variable-length batch
	lse        int  // compute_log_sumexp; -1: logsumexp is always computed
	dropout    int  // dropout_p
	causal     int  // is_causal
	maskType   int  // custom_mask_type (0 none, 1 causal from the top left, 2 from the bottom right)
	scale      int  // scale; empty (None) is 1/sqrt(head dim)
	// absent are optional arguments that must be None (or -1): sliding
	// windows, seqused_k, alibi slopes, paged KV block tables.
	absent []int
	// bottomRight aligns a causal mask with the last key (flash attention's
	// convention); otherwise query i sees keys 0..i (PyTorch's is_causal).
	bottomRight bool
	// padLSE: logsumexp rows are padded to a multiple of 32 (memory-efficient attention).
	padLSE bool
}

var attnSpecs = map[string]attnSpec{
	// (query, key, value, attn_bias, cum_seq_q, cum_seq_k, max_q, max_k,
	// compute_log_sumexp, dropout_p, is_causal, return_debug_mask, *, scale,
	// seqused_k, block_table)
	"aten::_cudnn_attention_forward": {bias: 3, cumQ: 4, cumK: 5, lse: 8, dropout: 9, causal: 10,
		maskType: -1, scale: 12, absent: []int{13, 14}},
	// (query, key, value, attn_bias, compute_log_sumexp, dropout_p,
	// is_causal, return_debug_mask, *, scale)
	"aten::_scaled_dot_product_cudnn_attention": {bias: 3, cumQ: -1, cumK: -1, lse: 4, dropout: 5, causal: 6,
		maskType: -1, scale: 8},
	// (query, key, value, dropout_p, is_causal, return_debug_mask, *, scale)
	"aten::_scaled_dot_product_flash_attention": {bias: -1, cumQ: -1, cumK: -1, lse: -1, dropout: 3, causal: 4,
		maskType: -1, scale: 6, bottomRight: true},
	// (query, key, value, attn_bias, compute_log_sumexp, dropout_p,
	// is_causal, *, scale)
	"aten::_scaled_dot_product_efficient_attention": {bias: 3, cumQ: -1, cumK: -1, lse: 4, dropout: 5, causal: 6,
		maskType: -1, scale: 7, padLSE: true},
	// (query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p,
	// is_causal, return_debug_mask, *, scale, window_size_left,
	// window_size_right, seqused_k, alibi_slopes, block_table)
	"aten::_flash_attention_forward": {bshd: true, bias: -1, cumQ: 3, cumK: 4, lse: -1, dropout: 7, causal: 8,
		maskType: -1, scale: 10, absent: []int{11, 12, 13, 14, 15}, bottomRight: true},
	// (query, key, value, bias, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
	// max_seqlen_k, dropout_p, custom_mask_type, compute_log_sumexp, *,
	// scale, seqlen_k, window_size)
	"aten::_efficient_attention_forward": {bshd: true, bias: 3, cumQ: 4, cumK: 5, lse: 10, dropout: 8, causal: -1,
		maskType: 9, scale: 11, absent: []int{12, 13}, padLSE: true},
}

// attnParams is an attention op's replay parameters, with q, k and v seen
// as [batch, heads, seq, dim] whatever the op's own dimension order.
type attnParams struct {
	B, Hq, Hk, Sq, Sk, D int64
	DType                string
	Causal               bool
	// Offset: a causal query i sees keys j <= i + Offset.
	Offset int64
	Scale  float64
	// LSE: the op returns logsumexp, f32 [B, Hq, LSELen] (LSELen >= Sq).
	LSE    bool
	LSELen int64
	// Strides of q, k, v in elements, as (batch, head, seq); dim is 1.
	QStr, KStr, VStr [3]int64
	BSHD             bool // the op's tensors are [batch, seq, heads, dim]
	// Bias: an additive attention bias (attn_bias, or an attention mask
	// as a float tensor) of dtype BiasDType, broadcast to [B, Hq, Sq, Sk]:
	// the score of query i and key j is Scale q.k + bias[b, h, i, j].
	// BiasStr are its element strides (batch, head, query, key), 0 for a
	// broadcast dimension.
	Bias      bool
	BiasDType string
	BiasStr   [4]int64
}

func unsupported(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, a...))
}

// arg returns input i, or an empty (None) input past the recorded ones.
func arg(sig *signatures.Signature, i int) signatures.Input {
	if i < 0 || i >= len(sig.Inputs) {
		return signatures.Input{}
	}
	return sig.Inputs[i]
}

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1":
		return true, true
	case "false", "0":
		return false, true
	}
	return false, false
}

// isNone reports whether an optional argument was passed as None (or as
// -1, the "no window" value of the window sizes).
func isNone(in signatures.Input) bool {
	if in.IsTensor() || len(in.List) > 0 {
		return false
	}
	v := strings.TrimSpace(in.Value)
	return v == "" || v == "None" || v == "-1"
}

// attnView returns the logical [B, H, S, D] shape and (b, h, s, d) strides
// of a q, k or v input.
func attnView(in signatures.Input, bshd bool) (shape, strides [4]int64, err error) {
	if !in.IsTensor() || len(in.Shape) != 4 {
		return shape, strides, unsupported("q, k and v must be 4-d tensors, got %q %v", in.Type, in.Shape)
	}
	st := in.Strides
	if len(st) != 4 {
		st = ContiguousStrides(in.Shape)
	}
	perm := [4]int{0, 1, 2, 3}
	if bshd {
		perm = [4]int{0, 2, 1, 3}
	}
	for i, p := range perm {
		shape[i], strides[i] = in.Shape[p], st[p]
		if shape[i] == 1 {
			strides[i] = 0 // any stride will do for a dimension of one
		}
	}
	return shape, strides, nil
}

// parseAttention reads an attention op's replay parameters from its
// signature; cases the kernel does not compute return ErrUnsupported.
func parseAttention(sig *signatures.Signature) (*attnParams, error) {
	spec, ok := attnSpecs[sig.Op]
	if !ok {
		return nil, unsupported("%s is not an attention op", sig.Op)
	}
	var shapes, strides [3][4]int64
	for i := 0; i < 3; i++ {
		var err error
		if shapes[i], strides[i], err = attnView(arg(sig, i), spec.bshd); err != nil {
			return nil, err
		}
	}
	p := &attnParams{BSHD: spec.bshd}
	p.DType = signatures.DType(arg(sig, 0).Type)
	for i := 1; i < 3; i++ {
		if dt := signatures.DType(arg(sig, i).Type); dt != p.DType {
			return nil, unsupported("q is %s but input %d is %s", p.DType, i, dt)
		}
	}
	if p.DType != "f16" && p.DType != "bf16" {
		return nil, unsupported("attention in %s (f16 and bf16 only)", p.DType)
	}
	q, k, v := shapes[0], shapes[1], shapes[2]
	p.B, p.Hq, p.Sq, p.D = q[0], q[1], q[2], q[3]
	p.Hk, p.Sk = k[1], k[2]
	switch {
	case k[0] != p.B || v[0] != p.B:
		return nil, unsupported("batch sizes differ: q %v, k %v, v %v", q, k, v)
	case v[1] != p.Hk || v[2] != p.Sk:
		return nil, unsupported("k %v and v %v differ", k, v)
	case k[3] != p.D || v[3] != p.D:
		return nil, unsupported("head dims differ: q %d, k %d, v %d", p.D, k[3], v[3])
	case p.D != 64 && p.D != 128:
		return nil, unsupported("head dim %d (64 and 128 only)", p.D)
	case p.Hk == 0 || p.Hq%p.Hk != 0:
		return nil, unsupported("%d query heads over %d key heads", p.Hq, p.Hk)
	case p.B*p.Hq*p.Sq*p.Sk == 0:
		return nil, unsupported("empty attention %v x %v", q, k)
	case p.Sq > math.MaxInt32/2 || p.Sk > math.MaxInt32/2 || p.B*p.Hq > math.MaxInt32/2:
		return nil, unsupported("sizes beyond 32-bit indexing: q %v, k %v", q, k)
	}
	for i, name := range []string{"q", "k", "v"} {
		st := strides[i]
		if st[3] != 1 {
			return nil, unsupported("%s has head-dim stride %d (1 only)", name, st[3])
		}
		for _, s := range st[:3] {
			if s < 0 || s%8 != 0 {
				return nil, unsupported("%s strides %v are not multiples of 8 elements (16 bytes)", name, st)
			}
		}
	}
	p.QStr = [3]int64(strides[0][:3])
	p.KStr = [3]int64(strides[1][:3])
	p.VStr = [3]int64(strides[2][:3])

	if spec.bias >= 0 && !isNone(arg(sig, spec.bias)) {
		if err := p.parseBias(arg(sig, spec.bias)); err != nil {
			return nil, err
		}
	}
	for _, i := range []int{spec.cumQ, spec.cumK} {
		if i >= 0 && !isNone(arg(sig, i)) {
			return nil, unsupported("variable-length (cumulative sequence) batches are not replayed")
		}
	}
	for _, i := range spec.absent {
		if !isNone(arg(sig, i)) {
			return nil, unsupported("argument %d (%q %q) is not replayed", i, arg(sig, i).Type, arg(sig, i).Value)
		}
	}
	if s := strings.TrimSpace(arg(sig, spec.dropout).Value); s != "" {
		d, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, unsupported("dropout_p %q", s)
		}
		if d != 0 {
			return nil, unsupported("dropout %g is not replayed", d)
		}
	}
	switch {
	case spec.causal >= 0:
		c, ok := parseBool(arg(sig, spec.causal).Value)
		if !ok {
			return nil, unsupported("the trace records no is_causal (%q)", arg(sig, spec.causal).Value)
		}
		p.Causal = c
		if c && spec.bottomRight {
			p.Offset = p.Sk - p.Sq
		}
	default:
		switch s := strings.TrimSpace(arg(sig, spec.maskType).Value); s {
		case "0":
		case "1":
			p.Causal = true
		case "2":
			p.Causal, p.Offset = true, p.Sk-p.Sq
		default:
			return nil, unsupported("custom_mask_type %q", s)
		}
	}
	p.Scale = 1 / math.Sqrt(float64(p.D))
	if s := strings.TrimSpace(arg(sig, spec.scale).Value); s != "" && s != "None" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			return nil, unsupported("scale %q (positive only)", s)
		}
		p.Scale = f
	}
	p.LSE = true
	if spec.lse >= 0 {
		if b, ok := parseBool(arg(sig, spec.lse).Value); ok {
			p.LSE = b
		}
	}
	if p.LSE {
		p.LSELen = p.Sq
		if spec.padLSE {
			p.LSELen = (p.Sq + 31) / 32 * 32
		}
	}
	return p, nil
}

// parseBias reads an attention bias: a 4-d tensor in the inputs' dtype
// or f32 whose shape broadcasts to [B, Hq, Sq, Sk] (each dim that size or
// 1), with any non-negative strides.
func (p *attnParams) parseBias(in signatures.Input) error {
	if !in.IsTensor() {
		return unsupported("attention bias of type %q %q is not a tensor", in.Type, in.Value)
	}
	if len(in.Shape) != 4 {
		return unsupported("attention bias of rank %d %v (4 only: [batch, heads, queries, keys])", len(in.Shape), in.Shape)
	}
	dt := signatures.DType(in.Type)
	if dt != p.DType && dt != "f32" {
		return unsupported("attention bias in %s with %s inputs (%s or f32 only)", dt, p.DType, p.DType)
	}
	st := in.Strides
	if len(st) != 4 {
		st = ContiguousStrides(in.Shape)
	}
	want := [4]int64{p.B, p.Hq, p.Sq, p.Sk}
	for i, n := range in.Shape {
		switch {
		case n != want[i] && n != 1:
			return unsupported("attention bias %v does not broadcast to [batch, heads, queries, keys] %v", in.Shape, want)
		case st[i] < 0:
			return unsupported("attention bias strides %v (non-negative only)", st)
		case n == 1:
			p.BiasStr[i] = 0 // broadcast
		default:
			p.BiasStr[i] = st[i]
		}
	}
	p.Bias, p.BiasDType = true, dt
	return nil
}

// attnPairs is the number of (query, key) pairs one head computes.
func attnPairs(p *attnParams) int64 {
	if !p.Causal {
		return p.Sq * p.Sk
	}
	var n int64
	for i := int64(0); i < p.Sq; i++ {
		n += min(max(i+p.Offset+1, 0), p.Sk)
	}
	return n
}

// attnFLOPs is the FLOP count of the op: two matrix products (Q K^T and
// P V) of 2 * D FLOPs per visible (query, key) pair, per batch and head;
// masked pairs (half of a square causal attention) are not counted. A
// bias masks nothing that is known: its pairs all count.
func attnFLOPs(p *attnParams) int64 { return 4 * p.D * attnPairs(p) * p.B * p.Hq }

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
	if p.biasSmem() {
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
		if p.biasPairs() {
			src.Defines["BIAS_PAIRS"] = "1"
		}
		if p.biasSmem() {
			src.Defines["BIAS_SMEM"] = "1" // the kernel reads the staged tile, not the pairs
		}
	}
	return src
}

// biasPairs reports whether the kernel may read the bias two keys at a
// time (one 4-byte load of 16-bit elements, 8 of f32): keys contiguous,
// every other stride and the key count even, so that each pair starting at
// an even key is aligned and inside the row.
func (p *attnParams) biasPairs() bool {
	st := p.BiasStr
	return p.Bias && st[3] == 1 && st[0]%2 == 0 && st[1]%2 == 0 && st[2]%2 == 0 && p.Sk%2 == 0
}

// biasSmem reports whether the kernel may stage the bias through shared
// memory with the K/V pipeline, 16-byte cp.async chunks of 8 keys: a
// 16-bit bias (an f32 one is read from global memory), keys contiguous,
// every other stride a multiple of 8 elements so that each row starts 16
// bytes aligned, and the key count a multiple of 8 so that a chunk is
// wholly inside a row or wholly past its end. It implies biasPairs.
func (p *attnParams) biasSmem() bool {
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
		bt, err := e.Input(arg(sig, attnSpecs[sig.Op].bias))
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
