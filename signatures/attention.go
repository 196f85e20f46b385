package signatures

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrAttention is matched (errors.Is) by the errors ParseAttention returns
// for an attention op whose arguments no replay computes.
var ErrAttention = errors.New("attention arguments not replayed")

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

// CuDNNAttentionOps are the aten ops PyTorch computes with cuDNN's SDPA
// (aten/src/ATen/native/cudnn/MHA.cpp).
var CuDNNAttentionOps = []string{
	"aten::_cudnn_attention_forward",
	"aten::_scaled_dot_product_cudnn_attention",
}

// IsAttentionOp reports whether ParseAttention knows op's arguments.
func IsAttentionOp(op string) bool {
	_, ok := attnSpecs[op]
	return ok
}

// AttentionBiasInput returns the index of op's attn_bias input, or -1
// where the op takes none (or is not an attention op).
func AttentionBiasInput(op string) int {
	if s, ok := attnSpecs[op]; ok {
		return s.bias
	}
	return -1
}

// Attention is an attention op's parameters, with q, k and v seen as
// [batch, heads, seq, dim] whatever the op's own dimension order.
type Attention struct {
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
	// A dimension of one has stride 0.
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

func attnErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrAttention, fmt.Sprintf(format, a...))
}

// attnArg returns input i, or an empty (None) input past the recorded ones.
func attnArg(sig *Signature, i int) Input {
	if i < 0 || i >= len(sig.Inputs) {
		return Input{}
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
func isNone(in Input) bool {
	if in.IsTensor() || len(in.List) > 0 {
		return false
	}
	v := strings.TrimSpace(in.Value)
	return v == "" || v == "None" || v == "-1"
}

// RowMajor returns row-major strides for shape (a dimension of 0 counts
// as 1).
func RowMajor(shape []int64) []int64 {
	st := make([]int64, len(shape))
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= max(shape[i], 1)
	}
	return st
}

// attnView returns the logical [B, H, S, D] shape and (b, h, s, d) strides
// of a q, k or v input.
func attnView(in Input, bshd bool) (shape, strides [4]int64, err error) {
	if !in.IsTensor() || len(in.Shape) != 4 {
		return shape, strides, attnErr("q, k and v must be 4-d tensors, got %q %v", in.Type, in.Shape)
	}
	st := in.Strides
	if len(st) != 4 {
		st = RowMajor(in.Shape)
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

// ParseAttention reads an attention op's parameters from its signature.
// It checks what any replay needs (4-d f16 or bf16 q, k and v of one
// batch and head dim, grouped heads, contiguous head dims, no dropout, no
// variable-length batch); limits of one implementation (head dims, stride
// alignment) are its own to check. Other cases return errors wrapping
// ErrAttention.
func ParseAttention(sig *Signature) (*Attention, error) {
	spec, ok := attnSpecs[sig.Op]
	if !ok {
		return nil, attnErr("%s is not an attention op", sig.Op)
	}
	p, err := parseQKV(sig, spec.bshd)
	if err != nil {
		return nil, err
	}
	if spec.bias >= 0 && !isNone(attnArg(sig, spec.bias)) {
		if err := p.parseBias(attnArg(sig, spec.bias)); err != nil {
			return nil, err
		}
	}
	for _, i := range []int{spec.cumQ, spec.cumK} {
		if i >= 0 && !isNone(attnArg(sig, i)) {
			return nil, attnErr("variable-length (cumulative sequence) batches are not replayed")
		}
	}
	for _, i := range spec.absent {
		if !isNone(attnArg(sig, i)) {
			return nil, attnErr("argument %d (%q %q) is not replayed", i, attnArg(sig, i).Type, attnArg(sig, i).Value)
		}
	}
	if s := strings.TrimSpace(attnArg(sig, spec.dropout).Value); s != "" {
		d, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, attnErr("dropout_p %q", s)
		}
		if d != 0 {
			return nil, attnErr("dropout %g is not replayed", d)
		}
	}
	if err := p.parseMask(sig, spec); err != nil {
		return nil, err
	}
	p.Scale = 1 / math.Sqrt(float64(p.D))
	if s := strings.TrimSpace(attnArg(sig, spec.scale).Value); s != "" && s != "None" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			return nil, attnErr("scale %q (positive only)", s)
		}
		p.Scale = f
	}
	p.LSE = true
	if spec.lse >= 0 {
		if b, ok := parseBool(attnArg(sig, spec.lse).Value); ok {
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

// parseQKV reads the shapes, dtype and strides of q, k and v.
func parseQKV(sig *Signature, bshd bool) (*Attention, error) {
	var shapes, strides [3][4]int64
	for i := 0; i < 3; i++ {
		var err error
		if shapes[i], strides[i], err = attnView(attnArg(sig, i), bshd); err != nil {
			return nil, err
		}
	}
	p := &Attention{BSHD: bshd}
	p.DType = DType(attnArg(sig, 0).Type)
	for i := 1; i < 3; i++ {
		if dt := DType(attnArg(sig, i).Type); dt != p.DType {
			return nil, attnErr("q is %s but input %d is %s", p.DType, i, dt)
		}
	}
	if p.DType != "f16" && p.DType != "bf16" {
		return nil, attnErr("attention in %s (f16 and bf16 only)", p.DType)
	}
	q, k, v := shapes[0], shapes[1], shapes[2]
	p.B, p.Hq, p.Sq, p.D = q[0], q[1], q[2], q[3]
	p.Hk, p.Sk = k[1], k[2]
	switch {
	case k[0] != p.B || v[0] != p.B:
		return nil, attnErr("batch sizes differ: q %v, k %v, v %v", q, k, v)
	case v[1] != p.Hk || v[2] != p.Sk:
		return nil, attnErr("k %v and v %v differ", k, v)
	case k[3] != p.D || v[3] != p.D:
		return nil, attnErr("head dims differ: q %d, k %d, v %d", p.D, k[3], v[3])
	case min(p.B, p.Hq, p.Hk, p.Sq, p.Sk, p.D) < 1:
		return nil, attnErr("empty or negative attention %v x %v", q, k)
	case p.Hq%p.Hk != 0:
		return nil, attnErr("%d query heads over %d key heads", p.Hq, p.Hk)
	case !boundedProduct(p.B, p.Hq, p.Sq, p.Sk) || !boundedProduct(p.B, p.Hq, p.Sq, p.D) ||
		!boundedProduct(p.B, p.Hk, p.Sk, p.D):
		return nil, attnErr("attention %v x %v: %v", q, k, errAbsurd)
	}
	for i, name := range []string{"q", "k", "v"} {
		st := strides[i]
		if st[3] != 1 {
			return nil, attnErr("%s has head-dim stride %d (1 only)", name, st[3])
		}
		for _, s := range st[:3] {
			if s < 0 {
				return nil, attnErr("%s strides %v (non-negative only)", name, st)
			}
		}
	}
	p.QStr = [3]int64(strides[0][:3])
	p.KStr = [3]int64(strides[1][:3])
	p.VStr = [3]int64(strides[2][:3])
	return p, nil
}

// parseMask reads is_causal or custom_mask_type.
func (p *Attention) parseMask(sig *Signature, spec attnSpec) error {
	if spec.causal >= 0 {
		c, ok := parseBool(attnArg(sig, spec.causal).Value)
		if !ok {
			return attnErr("the trace records no is_causal (%q)", attnArg(sig, spec.causal).Value)
		}
		p.Causal = c
		if c && spec.bottomRight {
			p.Offset = p.Sk - p.Sq
		}
		return nil
	}
	switch s := strings.TrimSpace(attnArg(sig, spec.maskType).Value); s {
	case "0":
	case "1":
		p.Causal = true
	case "2":
		p.Causal, p.Offset = true, p.Sk-p.Sq
	default:
		return attnErr("custom_mask_type %q", s)
	}
	return nil
}

// parseBias reads an attention bias: a 4-d tensor in the inputs' dtype
// or f32 whose shape broadcasts to [B, Hq, Sq, Sk] (each dim that size or
// 1), with any non-negative strides.
func (p *Attention) parseBias(in Input) error {
	if !in.IsTensor() {
		return attnErr("attention bias of type %q %q is not a tensor", in.Type, in.Value)
	}
	if len(in.Shape) != 4 {
		return attnErr("attention bias of rank %d %v (4 only: [batch, heads, queries, keys])", len(in.Shape), in.Shape)
	}
	dt := DType(in.Type)
	if dt != p.DType && dt != "f32" {
		return attnErr("attention bias in %s with %s inputs (%s or f32 only)", dt, p.DType, p.DType)
	}
	st := in.Strides
	if len(st) != 4 {
		st = RowMajor(in.Shape)
	}
	want := [4]int64{p.B, p.Hq, p.Sq, p.Sk}
	for i, n := range in.Shape {
		switch {
		case n != want[i] && n != 1:
			return attnErr("attention bias %v does not broadcast to [batch, heads, queries, keys] %v", in.Shape, want)
		case st[i] < 0:
			return attnErr("attention bias strides %v (non-negative only)", st)
		case n == 1:
			p.BiasStr[i] = 0 // broadcast
		default:
			p.BiasStr[i] = st[i]
		}
	}
	p.Bias, p.BiasDType = true, dt
	return nil
}

// Pairs is the number of (query, key) pairs one head computes: all of
// them, or the visible ones of a causal mask.
func (p *Attention) Pairs() int64 {
	if !p.Causal {
		return p.Sq * p.Sk
	}
	// Query i sees min(max(i+Offset+1, 0), Sk) keys: none below lo, all
	// from hi on, i+Offset+1 in between.
	lo := min(max(-p.Offset, 0), p.Sq)
	hi := min(max(p.Sk-p.Offset-1, lo), p.Sq)
	n := hi - lo
	return n*(lo+p.Offset+1) + n*(n-1)/2 + (p.Sq-hi)*p.Sk
}

// boundedProduct reports whether the product of positive xs stays within
// maxNumel.
func boundedProduct(xs ...int64) bool {
	prod := int64(1)
	for _, x := range xs {
		if x > maxNumel/prod {
			return false
		}
		prod *= x
	}
	return true
}

// FLOPs is the FLOP count of the op: two matrix products (Q K^T and P V)
// of 2 * D FLOPs per visible (query, key) pair, per batch and head;
// masked pairs (half of a square causal attention) are not counted. A
// bias masks nothing that is known: its pairs all count.
func (p *Attention) FLOPs() int64 { return 4 * p.D * p.Pairs() * p.B * p.Hq }
