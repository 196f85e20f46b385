package tier3

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/nvrtc"
	"github.com/kreplay/kreplay/signatures"
)

// attnArg is one profiler input of a synthetic attention op.
type attnArg struct {
	shape, strides []int64
	typ, val       string
}

func attnNone() attnArg           { return attnArg{} }
func attnScalar(v string) attnArg { return attnArg{typ: "Scalar", val: v} }
func attnBool(b bool) attnArg     { return attnScalar(map[bool]string{true: "True", false: "False"}[b]) }
func attnInt(v int64) attnArg     { return attnScalar(strconv.FormatInt(v, 10)) }
func attnTensor(shape, strides []int64, dtype string) attnArg {
	typ := map[string]string{"f16": "c10::Half", "bf16": "c10::BFloat16", "f32": "float", "i64": "long int",
		"bool": "bool"}[dtype]
	return attnArg{shape: shape, strides: strides, typ: typ}
}

// attnFields renders inputs as the profiler's Input Dims, Input Strides,
// Input type and Concrete Inputs.
func attnFields(args []attnArg) (dims, strides, types, concrete string) {
	var d, s [][]int64
	var ty, c []string
	for _, a := range args {
		d = append(d, append([]int64{}, a.shape...))
		s = append(s, append([]int64{}, a.strides...))
		ty = append(ty, a.typ)
		c = append(c, a.val)
	}
	j := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	return j(d), j(s), j(ty), j(c)
}

// attnCase describes a synthetic attention op. Shapes are logical
// [B, H, S, D]; layout "bhsd" stores q, k, v contiguous in that order,
// "bshd" as [B, S, H, D] (the transposed view of the traces).
type attnCase struct {
	op          string
	b, hq, hk   int64
	sq, sk, d   int64
	dtype       string
	layout      string
	causal, lse bool
	maskType    string // _efficient_attention_forward's custom_mask_type, overrides causal
	scale       string // "" is None
	extraAbsent bool   // add trailing None arguments (newer PyTorch)
	bias        bool   // pass an attention bias tensor
	// The bias's shape, strides and dtype: by default [b, hq, sq, sk],
	// contiguous, in dtype.
	biasShape, biasStrides []int64
	biasDType              string
	dropout                string // "" is 0.
	isCausalText           string // overrides the is_causal text
}

func (c attnCase) name() string {
	s := fmt.Sprintf("%s/b%d_h%d-%d_q%d_k%d_d%d_%s_%s_causal%v_lse%v",
		strings.TrimPrefix(c.op, "aten::"), c.b, c.hq, c.hk, c.sq, c.sk, c.d, c.dtype, c.layout, c.causal, c.lse)
	if c.maskType != "" {
		s += "_mask" + c.maskType
	}
	if c.scale != "" {
		s += "_scale" + c.scale
	}
	if c.bias {
		b := c.biasArg()
		s += fmt.Sprintf("_bias%s%v%v", signatures.DType(b.typ), b.shape, b.strides)
	}
	return s
}

// biasArg is the attention bias tensor of a case with bias set.
func (c attnCase) biasArg() attnArg {
	shape, st, dt := c.biasShape, c.biasStrides, c.biasDType
	if shape == nil {
		shape = []int64{c.b, c.hq, c.sq, c.sk}
	}
	if st == nil {
		st = ContiguousStrides(shape)
	}
	if dt == "" {
		dt = c.dtype
	}
	return attnTensor(shape, st, dt)
}

// tensor returns the profiler's view of q (heads h, sequence s) in the
// op's dimension order.
func (c attnCase) tensor(h, s int64) attnArg {
	bshdOp := c.op == "aten::_flash_attention_forward" || c.op == "aten::_efficient_attention_forward"
	// Storage strides of the logical dims (b, h, s, d).
	var st [4]int64
	if c.layout == "bshd" {
		st = [4]int64{s * h * c.d, c.d, h * c.d, 1}
	} else {
		st = [4]int64{h * s * c.d, s * c.d, c.d, 1}
	}
	if bshdOp {
		return attnTensor([]int64{c.b, s, h, c.d}, []int64{st[0], st[2], st[1], st[3]}, c.dtype)
	}
	return attnTensor([]int64{c.b, h, s, c.d}, st[:], c.dtype)
}

func (c attnCase) args() []attnArg {
	q, k, v := c.tensor(c.hq, c.sq), c.tensor(c.hk, c.sk), c.tensor(c.hk, c.sk)
	bias := attnNone()
	if c.bias {
		bias = c.biasArg()
	}
	drop := attnScalar("0.")
	if c.dropout != "" {
		drop = attnScalar(c.dropout)
	}
	causal := attnBool(c.causal)
	if c.isCausalText != "" {
		causal = attnScalar(c.isCausalText)
	}
	scale := attnScalar(c.scale)
	if c.scale == "" {
		scale = attnNone()
	}
	var a []attnArg
	switch c.op {
	case "aten::_cudnn_attention_forward":
		a = []attnArg{q, k, v, bias, attnNone(), attnNone(), attnInt(c.sq), attnInt(c.sk), attnBool(c.lse),
			drop, causal, attnBool(false), scale}
		if c.extraAbsent {
			a = append(a, attnNone(), attnNone())
		}
	case "aten::_scaled_dot_product_cudnn_attention":
		a = []attnArg{q, k, v, bias, attnBool(c.lse), drop, causal, attnBool(false), scale}
	case "aten::_scaled_dot_product_flash_attention":
		a = []attnArg{q, k, v, drop, causal, attnBool(false), scale}
	case "aten::_scaled_dot_product_efficient_attention":
		a = []attnArg{q, k, v, bias, attnBool(c.lse), drop, causal, scale}
	case "aten::_flash_attention_forward":
		a = []attnArg{q, k, v, attnNone(), attnNone(), attnInt(c.sq), attnInt(c.sk), drop, causal,
			attnBool(false), scale, attnNone(), attnNone(), attnNone(), attnNone()}
		if c.extraAbsent {
			a = append(a, attnNone())
		}
	case "aten::_efficient_attention_forward":
		mt := c.maskType
		if mt == "" {
			mt = map[bool]string{true: "1", false: "0"}[c.causal]
		}
		a = []attnArg{q, k, v, bias, attnNone(), attnNone(), attnInt(c.sq), attnInt(c.sk), drop,
			attnScalar(mt), attnBool(c.lse), scale, attnNone(), attnNone()}
	default:
		panic(c.op)
	}
	return a
}

func (c attnCase) sig(t *testing.T) *signatures.Signature {
	t.Helper()
	dims, strides, types, concrete := attnFields(c.args())
	return opSig(t, c.op, dims, strides, types, concrete)
}

func TestAttentionOpsRegistered(t *testing.T) {
	ops := Ops()
	for _, op := range AttentionOps {
		if !slices.Contains(ops, op) {
			t.Errorf("%s has no builder", op)
		}
		if !signatures.IsAttentionOp(op) {
			t.Errorf("%s has no argument spec", op)
		}
	}
}

func TestParseAttention(t *testing.T) {
	const traced = "0.088388347648318447"
	sd := func(d int64) float64 { return 1 / math.Sqrt(float64(d)) }
	tests := []struct {
		c      attnCase
		causal bool
		offset int64
		scale  float64
		lse    bool
		lseLen int64
		bshd   bool
	}{
		{attnCase{op: "aten::_cudnn_attention_forward", b: 4, hq: 32, hk: 32, sq: 512, sk: 512, d: 128, dtype: "f16",
			layout: "bshd", causal: true, scale: traced}, true, 0, 0.088388347648318447, false, 0, false},
		{attnCase{op: "aten::_cudnn_attention_forward", b: 1, hq: 2, hk: 2, sq: 64, sk: 64, d: 64, dtype: "f16",
			layout: "bhsd", lse: true, extraAbsent: true}, false, 0, sd(64), true, 64, false},
		{attnCase{op: "aten::_cudnn_attention_forward", b: 1, hq: 2, hk: 2, sq: 100, sk: 64, d: 128, dtype: "bf16",
			layout: "bhsd", causal: true}, true, 0, sd(128), false, 0, false},
		{attnCase{op: "aten::_scaled_dot_product_cudnn_attention", b: 2, hq: 8, hk: 2, sq: 64, sk: 64, d: 64,
			dtype: "f16", layout: "bshd", causal: true, lse: true, scale: "0.5"}, true, 0, 0.5, true, 64, false},
		{attnCase{op: "aten::_scaled_dot_product_flash_attention", b: 1, hq: 2, hk: 2, sq: 64, sk: 130, d: 128,
			dtype: "f16", layout: "bhsd", causal: true}, true, 66, sd(128), true, 64, false},
		{attnCase{op: "aten::_scaled_dot_product_flash_attention", b: 1, hq: 2, hk: 2, sq: 64, sk: 130, d: 128,
			dtype: "f16", layout: "bhsd"}, false, 0, sd(128), true, 64, false},
		{attnCase{op: "aten::_scaled_dot_product_efficient_attention", b: 1, hq: 2, hk: 2, sq: 130, sk: 130, d: 64,
			dtype: "f16", layout: "bhsd", causal: true, lse: true}, true, 0, sd(64), true, 160, false},
		{attnCase{op: "aten::_flash_attention_forward", b: 2, hq: 4, hk: 4, sq: 64, sk: 128, d: 64, dtype: "f16",
			layout: "bshd", causal: true, scale: "0.25", extraAbsent: true}, true, 64, 0.25, true, 64, true},
		{attnCase{op: "aten::_efficient_attention_forward", b: 2, hq: 4, hk: 4, sq: 64, sk: 128, d: 64, dtype: "f16",
			layout: "bshd", maskType: "2", lse: true}, true, 64, sd(64), true, 64, true},
		{attnCase{op: "aten::_efficient_attention_forward", b: 2, hq: 4, hk: 4, sq: 64, sk: 128, d: 64, dtype: "f16",
			layout: "bshd", maskType: "1"}, true, 0, sd(64), false, 0, true},
		{attnCase{op: "aten::_efficient_attention_forward", b: 2, hq: 4, hk: 4, sq: 64, sk: 128, d: 64, dtype: "f16",
			layout: "bshd", maskType: "0"}, false, 0, sd(64), false, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.c.name(), func(t *testing.T) {
			p, err := parseAttention(tt.c.sig(t))
			if err != nil {
				t.Fatal(err)
			}
			if p.B != tt.c.b || p.Hq != tt.c.hq || p.Hk != tt.c.hk || p.Sq != tt.c.sq || p.Sk != tt.c.sk || p.D != tt.c.d {
				t.Errorf("sizes B%d Hq%d Hk%d Sq%d Sk%d D%d, want %+v", p.B, p.Hq, p.Hk, p.Sq, p.Sk, p.D, tt.c)
			}
			if p.DType != tt.c.dtype || p.Causal != tt.causal || p.Offset != tt.offset || p.LSE != tt.lse ||
				p.LSELen != tt.lseLen || p.BSHD != tt.bshd {
				t.Errorf("got %+v, want causal %v offset %d lse %v/%d bshd %v", p, tt.causal, tt.offset, tt.lse, tt.lseLen, tt.bshd)
			}
			if math.Abs(p.Scale-tt.scale) > 1e-15 {
				t.Errorf("scale %v, want %v", p.Scale, tt.scale)
			}
			// Strides as (batch, head, seq), whatever the op's order.
			c := tt.c
			want := [3]int64{c.hq * c.sq * c.d, c.sq * c.d, c.d}
			if c.layout == "bshd" {
				want = [3]int64{c.sq * c.hq * c.d, c.d, c.hq * c.d}
			}
			if c.b == 1 {
				want[0] = 0 // a dimension of one has no stride
			}
			if p.QStr != want {
				t.Errorf("q strides %v, want %v", p.QStr, want)
			}
		})
	}
}

func TestParseAttentionUnsupported(t *testing.T) {
	base := attnCase{op: "aten::_cudnn_attention_forward", b: 1, hq: 2, hk: 2, sq: 64, sk: 64, d: 128,
		dtype: "f16", layout: "bhsd", causal: true}
	mod := func(f func(c *attnCase)) attnCase { c := base; f(&c); return c }
	tests := []struct {
		name string
		c    attnCase
		sig  func(*signatures.Signature)
	}{
		{"dropout", mod(func(c *attnCase) { c.dropout = "0.1" }), nil},
		{"head dim 96", mod(func(c *attnCase) { c.d = 96 }), nil},
		{"f32", mod(func(c *attnCase) { c.dtype = "f32" }), nil},
		{"no is_causal", mod(func(c *attnCase) { c.isCausalText = "" }), func(s *signatures.Signature) { s.Inputs[10].Value = "" }},
		{"negative scale", mod(func(c *attnCase) { c.scale = "-1" }), nil},
		{"heads 3 over 2", mod(func(c *attnCase) { c.hq = 3 }), nil},
		{"varlen", base, func(s *signatures.Signature) {
			s.Inputs[4] = signatures.Input{Type: "int", Shape: []int64{2}, Strides: []int64{1}}
		}},
		{"dim stride 2", base, func(s *signatures.Signature) {
			s.Inputs[0].Strides = []int64{2 * 2 * 64 * 128, 2 * 64 * 128, 2 * 128, 2}
		}},
		{"stride not 16 bytes", base, func(s *signatures.Signature) {
			s.Inputs[1].Strides = []int64{2 * 64 * 132, 64 * 132, 132, 1}
		}},
		{"seqused_k", mod(func(c *attnCase) { c.extraAbsent = true }), func(s *signatures.Signature) {
			s.Inputs[13] = signatures.Input{Type: "int", Shape: []int64{1}, Strides: []int64{1}}
		}},
		{"window", mod(func(c *attnCase) { c.op = "aten::_flash_attention_forward"; c.layout = "bshd" }),
			func(s *signatures.Signature) { s.Inputs[11] = signatures.Input{Type: "Scalar", Value: "128"} }},
		{"mask type 3", mod(func(c *attnCase) { c.op = "aten::_efficient_attention_forward"; c.maskType = "3" }), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sig := tt.c.sig(t)
			if tt.sig != nil {
				tt.sig(sig)
			}
			p, err := parseAttention(sig)
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("got %+v, %v; want ErrUnsupported", p, err)
			}
			t.Log(err)
		})
	}
}

// tracedAttention returns the first signature of op in an embedded trace.
func tracedAttention(tb testing.TB, trace, op string) *signatures.Signature {
	tb.Helper()
	for _, set := range tracedSetList(tb) {
		if set.Source.File != trace {
			continue
		}
		for _, s := range set.Signatures {
			if s.Op == op && s.Activity == signatures.ActivityKernel {
				return s
			}
		}
	}
	tb.Fatalf("%s: no %s kernel", trace, op)
	return nil
}

func TestAttentionTracedSignatures(t *testing.T) {
	for _, tc := range []struct {
		trace string
		heads int64
	}{
		{"h100_llama-7b_prefill.trace.json.gz", 32},
		{"2xh200_llama-7b-tp2_prefill.rank0.trace.json.gz", 16},
	} {
		t.Run(tc.trace, func(t *testing.T) {
			sig := tracedAttention(t, tc.trace, "aten::_cudnn_attention_forward")
			if sig.Tier != signatures.TierKernel {
				t.Fatalf("tier %d", sig.Tier)
			}
			p, err := parseAttention(sig)
			if err != nil {
				t.Fatal(err)
			}
			want := attnParams{B: 4, Hq: tc.heads, Hk: tc.heads, Sq: 512, Sk: 512, D: 128, DType: "f16", Causal: true,
				Scale: 0.088388347648318447, QStr: [3]int64{512 * tc.heads * 128, 128, tc.heads * 128}}
			want.KStr, want.VStr = want.QStr, want.QStr
			if *p != want {
				t.Errorf("got %+v\nwant %+v", *p, want)
			}
			// 4 D FLOPs for each of the 512*513/2 visible pairs of each head.
			if got, w := attnFLOPs(p), int64(4*128*(512*513/2)*4)*tc.heads; got != w {
				t.Errorf("FLOPs %d, want %d", got, w)
			}
			t.Logf("%s: %.2f GFLOP, traced median %d ns (%.0f TFLOP/s)", sig.Label, float64(attnFLOPs(p))/1e9,
				sig.TracedNS.Median, float64(attnFLOPs(p))/float64(sig.TracedNS.Median)/1e3)
		})
	}
}

func TestAttentionPairs(t *testing.T) {
	for _, tt := range []struct {
		sq, sk, off int64
		causal      bool
		want        int64
	}{
		{4, 4, 0, false, 16},
		{4, 4, 0, true, 10},
		{2, 5, 3, true, 9},  // bottom right: 4 + 5
		{5, 2, 0, true, 9},  // top left: 1 + 2 + 2 + 2 + 2
		{5, 2, -3, true, 3}, // bottom right, three rows see nothing: 1 + 2
		{512, 512, 0, true, 512 * 513 / 2},
	} {
		p := &attnParams{Sq: tt.sq, Sk: tt.sk, Offset: tt.off, Causal: tt.causal}
		if got := attnPairs(p); got != tt.want {
			t.Errorf("%+v: %d pairs, want %d", tt, got, tt.want)
		}
	}
}

func TestAttentionLaunchConfig(t *testing.T) {
	p := &attnParams{B: 4, Hq: 32, Hk: 32, Sq: 512, Sk: 512, D: 128, DType: "f16", Causal: true,
		QStr: [3]int64{2097152, 128, 4096}}
	c := attnDefault(p, 90)
	if err := c.valid(p, 90); err != nil {
		t.Fatal(err)
	}
	if c.threads() != c.BlockM*2 || c.mblocks(p) != 512/int64(c.BlockM) || c.grid(p) != 4*32*c.mblocks(p) {
		t.Errorf("%v: %d threads, %d query tiles, %d blocks", c, c.threads(), c.mblocks(p), c.grid(p))
	}
	if got, want := c.smem(p), (c.BlockM+2*c.Stages*c.BlockN)*128*2; got != want {
		t.Errorf("smem %d, want %d", got, want)
	}
	src := c.source(p)
	for k, v := range map[string]string{"HEAD_DIM": "128", "IS_BF16": "0", "BLOCK_M": strconv.Itoa(c.BlockM),
		"BLOCK_N": strconv.Itoa(c.BlockN), "STAGES": strconv.Itoa(c.Stages)} {
		if src.Defines[k] != v {
			t.Errorf("define %s=%q, want %q", k, src.Defines[k], v)
		}
	}
	// Ragged: 130 rows need two query tiles of 128, three of 64.
	r := &attnParams{B: 1, Hq: 2, Hk: 2, Sq: 130, Sk: 130, D: 64, DType: "bf16"}
	if got := (attnConfig{BlockM: 128}).mblocks(r); got != 2 {
		t.Errorf("130 rows in %d tiles of 128", got)
	}
	if got := (attnConfig{BlockM: 64}).mblocks(r); got != 3 {
		t.Errorf("130 rows in %d tiles of 64", got)
	}
	if (attnDefault(r, 80)).source(r).Defines["IS_BF16"] != "1" {
		t.Error("bf16 not defined")
	}
	// Every default fits the architecture's shared memory.
	for _, arch := range []int{80, 86, 89, 90, 100, 120} {
		for _, d := range []int64{64, 128} {
			q := &attnParams{D: d}
			if err := attnDefault(q, arch).valid(q, arch); err != nil {
				t.Errorf("sm_%d D=%d: %v", arch, d, err)
			}
		}
	}
	for _, bad := range []attnConfig{{BlockM: 32, BlockN: 64, Stages: 2}, {BlockM: 128, BlockN: 48, Stages: 2},
		{BlockM: 128, BlockN: 64, Stages: 1}, {BlockM: 128, BlockN: 128, Stages: 4}} {
		if bad.valid(p, 90) == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	// The output follows q's dimension order.
	if got := outputLayout(p); got != [4]int{0, 2, 1, 3} {
		t.Errorf("output order %v for q strides %v", got, p.QStr)
	}
	p.QStr = [3]int64{32 * 512 * 128, 512 * 128, 128}
	if got := outputLayout(p); got != [4]int{0, 1, 2, 3} {
		t.Errorf("output order %v for q strides %v", got, p.QStr)
	}
}

// TestAttentionKernelCompiles compiles the kernel's default tilings (all
// of attnSweep with KREPLAY_ATTN_SWEEP set), without a bias and with one
// in the inputs' dtype (read element by element, and staged in shared
// memory, biasSmem) and in f32, with NVRTC where the library is
// installed, no GPU needed, and logs the register use ptxas reports.
func TestAttentionKernelCompiles(t *testing.T) {
	gputest.Require(t, nvrtc.Init)
	archs, err := nvrtc.SupportedArchs()
	if err != nil {
		gputest.Skipf(t, "NVRTC architectures: %v", err)
	}
	for _, arch := range []int{80, 90} {
		if !slices.Contains(archs, arch) {
			t.Logf("NVRTC does not support sm_%d", arch)
			continue
		}
		for _, d := range []int64{64, 128} {
			for _, dt := range []string{"f16", "bf16"} {
				if arch != 90 && dt != "f16" {
					continue // a second architecture in one dtype is enough
				}
				// Without a bias, with one in the inputs' dtype, in f32, and
				// in the inputs' dtype staged in shared memory ("smem").
				for _, bias := range []string{"", dt, "f32", "smem"} {
					p := &attnParams{D: d, DType: dt, Bias: bias != "", BiasDType: bias, Sk: 64}
					if bias == "smem" {
						p.BiasDType, p.BiasStr = dt, [4]int64{0, 0, 64, 1}
						if !biasSmem(p) {
							t.Fatalf("%+v: not staged in shared memory", p)
						}
					}
					cfgs := []attnConfig{attnDefault(p, arch)}
					if os.Getenv("KREPLAY_ATTN_SWEEP") != "" {
						cfgs = attnSweep(p, arch) // every tiling the benchmark tries
					}
					for _, c := range cfgs {
						src := c.source(p)
						opts := append(src.options(arch), "--ptxas-options=-v")
						res, err := nvrtc.Compile(src.Code, src.Name, opts)
						if err != nil {
							t.Errorf("sm_%d D=%d %s bias %q %v: %v", arch, d, dt, bias, c, err)
							continue
						}
						var info []string
						for _, l := range strings.Split(res.Log, "\n") {
							if strings.Contains(l, "registers") || strings.Contains(l, "spill") {
								info = append(info, strings.TrimSpace(l))
							}
						}
						t.Logf("sm_%d D=%d %s bias %q %v: %s", arch, d, dt, bias, c, strings.Join(info, "; "))
					}
				}
			}
		}
	}
}

// attnSweep lists the tilings the benchmark compares.
func attnSweep(p *attnParams, arch int) []attnConfig {
	def := attnDefault(p, arch)
	list := []attnConfig{def}
	for _, c := range []attnConfig{
		{BlockM: 128, BlockN: 64, Stages: 2}, {BlockM: 128, BlockN: 64, Stages: 3},
		{BlockM: 128, BlockN: 32, Stages: 3}, {BlockM: 64, BlockN: 64, Stages: 2},
		{BlockM: 64, BlockN: 64, Stages: 3}, {BlockM: 64, BlockN: 32, Stages: 3},
		{BlockM: 128, BlockN: 64, Stages: 2, Order: 1}, {BlockM: 64, BlockN: 64, Stages: 2, Order: 1},
		{BlockM: 128, BlockN: 128, Stages: 2}, {BlockM: 64, BlockN: 128, Stages: 2},
	} {
		c.MinBlocks = 1
		if c.valid(p, arch) == nil && !slices.Contains(list, c) {
			list = append(list, c)
		}
	}
	return list
}
