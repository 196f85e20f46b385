package tier3

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

// attnBiasOps are the attention ops that take an attn_bias.
var attnBiasOps = []string{
	"aten::_cudnn_attention_forward",
	"aten::_scaled_dot_product_cudnn_attention",
	"aten::_scaled_dot_product_efficient_attention",
	"aten::_efficient_attention_forward",
}

func TestParseAttentionBias(t *testing.T) {
	const b, h, sq, sk = 2, 4, 64, 130
	for _, op := range attnBiasOps {
		for _, tt := range []struct {
			name          string
			shape, stride []int64 // nil stride: contiguous
			dtype         string  // "": the inputs'
			causal        bool
			want          [4]int64 // BiasStr
		}{
			{"full", []int64{b, h, sq, sk}, nil, "", false, [4]int64{h * sq * sk, sq * sk, sk, 1}},
			// The traced l1b form: [B, 1, Sq, Sk] with the head stride of the
			// batch (size 1: stride 0).
			{"heads broadcast", []int64{b, 1, sq, sk}, []int64{sq * sk, sq * sk, sk, 1}, "", false,
				[4]int64{sq * sk, 0, sk, 1}},
			{"batch and heads broadcast", []int64{1, 1, sq, sk}, nil, "", false, [4]int64{0, 0, sk, 1}},
			// Expanded: stride 0 over the heads at full size.
			{"expanded", []int64{b, h, sq, sk}, []int64{sq * sk, 0, sk, 1}, "", false, [4]int64{sq * sk, 0, sk, 1}},
			// Memory-efficient attention pads the key dim to a multiple of 16.
			{"padded keys", []int64{b, h, sq, sk}, []int64{h * sq * 144, sq * 144, 144, 1}, "", false,
				[4]int64{h * sq * 144, sq * 144, 144, 1}},
			// A padding mask, one row for every query.
			{"one query row", []int64{b, 1, 1, sk}, nil, "", false, [4]int64{sk, 0, 0, 1}},
			{"f32", []int64{b, 1, sq, sk}, nil, "f32", false, [4]int64{sq * sk, 0, sk, 1}},
			{"causal", []int64{b, 1, sq, sk}, nil, "", true, [4]int64{sq * sk, 0, sk, 1}},
		} {
			c := attnCase{op: op, b: b, hq: h, hk: 2, sq: sq, sk: sk, d: 64, dtype: "f16", layout: "bshd",
				causal: tt.causal, bias: true, biasShape: tt.shape, biasStrides: tt.stride, biasDType: tt.dtype}
			if tt.causal && op == "aten::_efficient_attention_forward" {
				c.maskType = "1"
			}
			t.Run(strings.TrimPrefix(op, "aten::")+"/"+tt.name, func(t *testing.T) {
				sig := c.sig(t)
				p, err := parseAttention(sig)
				if err != nil {
					t.Fatal(err)
				}
				wantDT := "f16"
				if tt.dtype != "" {
					wantDT = tt.dtype
				}
				if !p.Bias || p.BiasDType != wantDT || p.BiasStr != tt.want {
					t.Errorf("bias %v %s strides %v, want %s %v", p.Bias, p.BiasDType, p.BiasStr, wantDT, tt.want)
				}
				if p.Causal != tt.causal || p.Sq != sq || p.Sk != sk || p.Hq != h || p.Hk != 2 {
					t.Errorf("got %+v", p)
				}
				// Every pair counts without a causal mask, whatever the bias.
				if !tt.causal && attnPairs(p) != sq*sk {
					t.Errorf("%d pairs, want %d", attnPairs(p), sq*sk)
				}
				src := attnDefault(p, 90).source(p)
				wantF32 := map[bool]string{true: "1", false: "0"}[wantDT == "f32"]
				if src.Defines["HAS_BIAS"] != "1" || src.Defines["BIAS_F32"] != wantF32 {
					t.Errorf("defines %v", src.Defines)
				}
				if h := Heuristics(sig, Config{}); !slices.Equal(h, []string{HeuristicAttnBias}) {
					t.Errorf("heuristics %q", h)
				}
			})
		}
	}
}

func TestParseAttentionBiasUnsupported(t *testing.T) {
	const b, h, sq, sk = 2, 4, 64, 130
	for _, op := range attnBiasOps {
		for _, tt := range []struct {
			name, want    string // want: in the error
			shape, stride []int64
			dtype         string
		}{
			{"rank 3", "rank 3", []int64{h, sq, sk}, nil, ""},
			{"rank 2", "rank 2", []int64{sq, sk}, nil, ""},
			{"bf16 with f16 inputs", "bias in bf16", []int64{b, 1, sq, sk}, nil, "bf16"},
			{"bool", "bias in bool", []int64{b, 1, sq, sk}, nil, "bool"},
			{"i64", "bias in i64", []int64{b, 1, sq, sk}, nil, "i64"},
			{"two heads of four", "does not broadcast", []int64{b, 2, sq, sk}, nil, ""},
			{"batch 3 of 2", "does not broadcast", []int64{3, 1, sq, sk}, nil, ""},
			{"keys past sk", "does not broadcast", []int64{b, 1, sq, sk + 1}, nil, ""},
			{"queries and keys swapped", "does not broadcast", []int64{b, 1, sk, sq}, nil, ""},
		} {
			t.Run(strings.TrimPrefix(op, "aten::")+"/"+tt.name, func(t *testing.T) {
				c := attnCase{op: op, b: b, hq: h, hk: h, sq: sq, sk: sk, d: 64, dtype: "f16", layout: "bhsd",
					bias: true, biasShape: tt.shape, biasStrides: tt.stride, biasDType: tt.dtype}
				sig := c.sig(t)
				p, err := parseAttention(sig)
				if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("got %+v, %v; want ErrUnsupported with %q", p, err, tt.want)
				}
				if h := Heuristics(sig, Config{}); h != nil {
					t.Errorf("heuristics %q for an unsupported signature", h)
				}
				t.Log(err)
			})
		}
	}
	// A bias that is not a tensor.
	c := attnCase{op: "aten::_cudnn_attention_forward", b: b, hq: h, hk: h, sq: sq, sk: sk, d: 64, dtype: "f16",
		layout: "bhsd"}
	sig := c.sig(t)
	sig.Inputs[3] = signatures.Input{Type: "Scalar", Value: "1."}
	if p, err := parseAttention(sig); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "not a tensor") {
		t.Errorf("scalar bias: got %+v, %v", p, err)
	}
	// Negative strides (the importer refuses them; a signature built
	// otherwise may have them).
	sig = c.sig(t)
	sig.Inputs[3] = signatures.Input{Type: "c10::Half", Shape: []int64{b, 1, sq, sk}, Strides: []int64{sq * sk, 0, -sk, 1}}
	if p, err := parseAttention(sig); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "non-negative") {
		t.Errorf("negative bias stride: got %+v, %v", p, err)
	}
	// No bias: no bias parameters, no bias defines, no heuristic.
	sig = c.sig(t)
	p, err := parseAttention(sig)
	if err != nil {
		t.Fatal(err)
	}
	if p.Bias || p.BiasDType != "" || p.BiasStr != [4]int64{} || Heuristics(sig, Config{}) != nil {
		t.Errorf("no bias: got %+v, heuristics %q", p, Heuristics(sig, Config{}))
	}
	for k := range attnDefault(p, 90).source(p).Defines {
		if strings.Contains(k, "BIAS") {
			t.Errorf("define %s without a bias", k)
		}
	}
}

// l1bAttentionID is the l1b compiled prefill's attention with an additive
// bias f16[4,1,512,512] (cuDNN traced at 45.3 µs on an H100), imported
// without the workload's captured binaries.
const l1bAttentionID = "81ea02cfcc54"

// l1bAttention returns that signature from the workload's test trace
// (gputest.OpenRepoFile).
func l1bAttention(tb testing.TB) *signatures.Signature {
	tb.Helper()
	f := gputest.OpenRepoFile(tb, "workload/testdata/l1b-compiled_prefill/trace.json.gz")
	defer f.Close()
	set, err := signatures.Import(f, "l1b-compiled_prefill", signatures.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	for _, s := range set.Signatures {
		if s.ID == l1bAttentionID {
			return s
		}
	}
	tb.Fatalf("no signature %s", l1bAttentionID)
	return nil
}

// TestAttentionBiasTraced: the l1b attention with a bias replays with
// kreplay's kernel (parseAttention accepts it, so the build does not fall
// back to the stand-in), all pairs counted.
func TestAttentionBiasTraced(t *testing.T) {
	sig := l1bAttention(t)
	if sig.Op != "aten::_cudnn_attention_forward" || sig.Tier != signatures.TierKernel || sig.Unreplayable != "" ||
		!Has(sig.Op) {
		t.Fatalf("%s: op %s tier %d unreplayable %q", sig.ID, sig.Op, sig.Tier, sig.Unreplayable)
	}
	p, err := parseAttention(sig)
	if err != nil {
		t.Fatalf("%s falls back to the stand-in: %v", sig.Label, err)
	}
	want := attnParams{B: 4, Hq: 32, Hk: 32, Sq: 512, Sk: 512, D: 64, DType: "f16", Scale: 0.125,
		QStr: [3]int64{1048576, 64, 2048}, KStr: [3]int64{1048576, 32768, 64}, VStr: [3]int64{1048576, 32768, 64},
		Bias: true, BiasDType: "f16", BiasStr: [4]int64{262144, 0, 512, 1}}
	if *p != want {
		t.Errorf("got  %+v\nwant %+v", *p, want)
	}
	if got, w := attnFLOPs(p), int64(4*64*512*512*4*32); got != w {
		t.Errorf("FLOPs %d, want %d (every pair)", got, w)
	}
	c := attnDefault(p, 90)
	if err := c.valid(p, 90); err != nil {
		t.Error(err)
	}
	if src := c.source(p); src.Defines["HAS_BIAS"] != "1" || src.Defines["BIAS_F32"] != "0" ||
		src.Defines["BIAS_SMEM"] != "1" {
		t.Errorf("defines %v", src.Defines)
	}
	if h := Heuristics(sig, Config{}); !slices.Equal(h, []string{HeuristicAttnBias}) {
		t.Errorf("heuristics %q", h)
	}
	// The signature's bytes (q, k, v, out and the bias) are what the
	// replay's buffers hold: 4 x 8 MiB and 2 MiB.
	if sig.Tensor == nil || sig.Tensor.Bytes != 4*(4*32*512*64*2)+4*512*512*2 {
		t.Errorf("signature bytes %+v", sig.Tensor)
	}
	t.Logf("%s: %.2f GFLOP, traced median %d ns (%.0f TFLOP/s)", sig.Label, float64(attnFLOPs(p))/1e9,
		sig.TracedNS.Median, float64(attnFLOPs(p))/float64(sig.TracedNS.Median)/1e3)
}

// attnBiasGPUCases are the GPU correctness cases with a bias.
func attnBiasGPUCases() []attnCase {
	return []attnCase{
		// The traced form, [B, 1, Sq, Sk], with a ragged key tile.
		{op: "aten::_cudnn_attention_forward", b: 2, hq: 4, hk: 4, sq: 130, sk: 130, d: 64, dtype: "f16",
			layout: "bhsd", lse: true, scale: "0.125", bias: true, biasShape: []int64{2, 1, 130, 130}},
		// [1, 1, Sq, Sk], more keys than queries.
		{op: "aten::_scaled_dot_product_cudnn_attention", b: 2, hq: 2, hk: 2, sq: 64, sk: 200, d: 128, dtype: "f16",
			layout: "bshd", lse: true, bias: true, biasShape: []int64{1, 1, 64, 200}},
		// [B, Hq, Sq, Sk] with grouped query heads: the bias follows q's heads.
		{op: "aten::_efficient_attention_forward", b: 2, hq: 2, hk: 1, sq: 100, sk: 130, d: 64, dtype: "f16",
			layout: "bhsd", maskType: "0", lse: true, bias: true},
		// Bias and causal mask together; the key dim padded to 144 as
		// memory-efficient attention pads it.
		{op: "aten::_scaled_dot_product_efficient_attention", b: 2, hq: 2, hk: 2, sq: 130, sk: 130, d: 64,
			dtype: "f16", layout: "bhsd", causal: true, lse: true, bias: true, biasShape: []int64{2, 2, 130, 130},
			biasStrides: []int64{2 * 130 * 144, 130 * 144, 144, 1}},
		// bf16, a bias per head shared by the batch.
		{op: "aten::_cudnn_attention_forward", b: 2, hq: 2, hk: 2, sq: 130, sk: 130, d: 128, dtype: "bf16",
			layout: "bshd", lse: true, scale: "0.5", bias: true, biasShape: []int64{1, 2, 130, 130}},
		// bf16 with a bottom-right causal mask and a bias.
		{op: "aten::_efficient_attention_forward", b: 1, hq: 2, hk: 2, sq: 64, sk: 130, d: 128, dtype: "bf16",
			layout: "bhsd", maskType: "2", lse: true, bias: true, biasShape: []int64{1, 1, 64, 130}},
		// f32 bias expanded over the heads (stride 0 at full size).
		{op: "aten::_cudnn_attention_forward", b: 2, hq: 2, hk: 2, sq: 96, sk: 96, d: 64, dtype: "f16",
			layout: "bhsd", bias: true, biasShape: []int64{2, 2, 96, 96}, biasStrides: []int64{96 * 96, 0, 96, 1},
			biasDType: "f32"},
		// A padding mask: one bias row for every query.
		{op: "aten::_cudnn_attention_forward", b: 2, hq: 2, hk: 2, sq: 130, sk: 130, d: 64, dtype: "f16",
			layout: "bshd", lse: true, bias: true, biasShape: []int64{2, 1, 1, 130}},
		// An odd key count: the bias is read one element at a time (the
		// cases above read pairs, biasPairs).
		{op: "aten::_cudnn_attention_forward", b: 2, hq: 2, hk: 2, sq: 129, sk: 129, d: 64, dtype: "f16",
			layout: "bhsd", lse: true, bias: true, biasShape: []int64{2, 1, 129, 129}},
		// An f32 bias read in pairs.
		{op: "aten::_cudnn_attention_forward", b: 1, hq: 2, hk: 2, sq: 64, sk: 130, d: 64, dtype: "bf16",
			layout: "bhsd", bias: true, biasShape: []int64{1, 2, 64, 130}, biasDType: "f32"},

		// Staged through shared memory (biasSmem: key counts and strides
		// multiples of 8; the [1, 1, 64, 200] case above is one too). The
		// traced form with ragged query and key tiles: 136 keys are two
		// tiles of 64 and one of 8.
		{op: "aten::_cudnn_attention_forward", b: 2, hq: 4, hk: 4, sq: 130, sk: 136, d: 64, dtype: "f16",
			layout: "bhsd", lse: true, scale: "0.125", bias: true, biasShape: []int64{2, 1, 130, 136}},
		// Causal, the key dim padded to 144.
		{op: "aten::_scaled_dot_product_efficient_attention", b: 2, hq: 2, hk: 2, sq: 130, sk: 136, d: 64,
			dtype: "f16", layout: "bhsd", causal: true, lse: true, bias: true, biasShape: []int64{2, 2, 130, 136},
			biasStrides: []int64{2 * 130 * 144, 130 * 144, 144, 1}},
		// bf16, head dim 128, bottom-right causal with more keys than queries.
		{op: "aten::_efficient_attention_forward", b: 1, hq: 2, hk: 2, sq: 72, sk: 136, d: 128, dtype: "bf16",
			layout: "bhsd", maskType: "2", lse: true, bias: true, biasShape: []int64{1, 2, 72, 136}},
		// A padding mask (query stride 0: every row reads the same bias row)
		// with grouped query heads.
		{op: "aten::_cudnn_attention_forward", b: 2, hq: 4, hk: 2, sq: 130, sk: 136, d: 128, dtype: "f16",
			layout: "bshd", lse: true, bias: true, biasShape: []int64{2, 1, 1, 136}},
	}
}

// TestAttentionBiasGPUPaths: the GPU cases cover each way the kernel reads
// a 16-bit bias (staged in shared memory, in pairs, one element at a
// time) and an f32 one.
func TestAttentionBiasGPUPaths(t *testing.T) {
	paths := map[string]int{}
	for _, c := range attnBiasGPUCases() {
		p, err := parseAttention(c.sig(t))
		if err != nil {
			t.Fatal(err)
		}
		path := "scalar"
		switch {
		case biasSmem(p):
			path = "smem"
		case biasPairs(p):
			path = "pairs"
		}
		if p.BiasDType == "f32" {
			path = "f32 " + path
		}
		paths[path]++
		if biasSmem(p) && p.Sk%64 != 0 {
			paths["smem ragged keys"]++
		}
		t.Logf("%s: %s", c.name(), path)
	}
	for _, want := range []string{"smem", "smem ragged keys", "pairs", "scalar", "f32 pairs"} {
		if paths[want] == 0 {
			t.Errorf("no GPU case reads the bias by %q: %v", want, paths)
		}
	}
}

// The bias is read two keys at a time only where every pair is aligned and
// inside its row.
func TestAttentionBiasPairs(t *testing.T) {
	for _, c := range []struct {
		st   [4]int64
		sk   int64
		want bool
	}{
		{[4]int64{262144, 0, 512, 1}, 512, true},
		{[4]int64{0, 0, 0, 1}, 130, true},
		{[4]int64{262144, 0, 512, 1}, 511, false},
		{[4]int64{129 * 129, 0, 129, 1}, 128, false},
		{[4]int64{262144, 0, 1, 512}, 512, false},
	} {
		p := &attnParams{Bias: true, BiasStr: c.st, Sk: c.sk}
		if got := biasPairs(p); got != c.want {
			t.Errorf("strides %v, %d keys: pairs %v, want %v", c.st, c.sk, got, c.want)
		}
	}
	if biasPairs(&attnParams{BiasStr: [4]int64{0, 0, 0, 1}, Sk: 2}) {
		t.Error("pairs without a bias")
	}
}

// The bias is staged through shared memory only where it is 16-bit, its
// keys contiguous, every row 16-byte aligned and every 8-key chunk inside
// its row or past it; the staged tiles count in the shared memory.
func TestAttentionBiasSmem(t *testing.T) {
	for _, c := range []struct {
		dt   string
		st   [4]int64
		sk   int64
		want bool
	}{
		{"f16", [4]int64{262144, 0, 512, 1}, 512, true}, // the traced l1b bias
		{"bf16", [4]int64{262144, 0, 512, 1}, 512, true},
		{"f32", [4]int64{262144, 0, 512, 1}, 512, false}, // f32: global memory
		{"f16", [4]int64{136, 0, 0, 1}, 136, true},       // a padding mask, one row
		{"f16", [4]int64{0, 0, 0, 1}, 8, true},
		{"f16", [4]int64{2 * 130 * 144, 130 * 144, 144, 1}, 136, true},  // padded rows
		{"f16", [4]int64{2 * 130 * 144, 130 * 144, 144, 1}, 130, false}, // a chunk past Sk
		{"f16", [4]int64{130 * 130, 0, 130, 1}, 130, false},             // pairs only
		{"f16", [4]int64{136 * 136, 0, 130, 1}, 136, false},             // rows unaligned
		{"f16", [4]int64{132, 0, 136, 1}, 136, false},                   // batches unaligned
		{"f16", [4]int64{0, 132, 136, 1}, 136, false},                   // heads unaligned
		{"f16", [4]int64{262144, 0, 1, 512}, 512, false},                // keys strided
		{"f16", [4]int64{262144, 0, 512, 2}, 512, false},
	} {
		p := &attnParams{D: 64, DType: "f16", Bias: true, BiasDType: c.dt, BiasStr: c.st, Sk: c.sk}
		if got := biasSmem(p); got != c.want {
			t.Errorf("%s strides %v, %d keys: smem %v, want %v", c.dt, c.st, c.sk, got, c.want)
		}
		if c.want && !biasPairs(p) {
			t.Errorf("%s strides %v, %d keys: smem but not pairs", c.dt, c.st, c.sk)
		}
		src := attnDefault(p, 90).source(p)
		if got := src.Defines["BIAS_SMEM"] == "1"; got != c.want {
			t.Errorf("%s strides %v, %d keys: defines %v", c.dt, c.st, c.sk, src.Defines)
		}
	}
	if biasSmem(&attnParams{BiasDType: "f16", BiasStr: [4]int64{0, 0, 0, 1}, Sk: 8}) {
		t.Error("smem without a bias")
	}

	// Shared memory: Q, K and V tiles, plus one bias tile per stage with
	// rows of 64 keys padded to 144 bytes.
	p := &attnParams{D: 64, DType: "f16", Bias: true, BiasDType: "f16", BiasStr: [4]int64{262144, 0, 512, 1}, Sk: 512}
	plain := &attnParams{D: 64, DType: "f16"}
	c := attnConfig{BlockM: 64, BlockN: 64, Stages: 3, MinBlocks: 1}
	if got, want := c.smem(plain), (64+2*3*64)*64*2; got != want {
		t.Errorf("no bias: smem %d, want %d", got, want)
	}
	if got, want := c.smem(p), (64+2*3*64)*64*2+3*64*144; got != want {
		t.Errorf("bias: smem %d, want %d", got, want)
	}
	// The default tiling fits every architecture the kernel runs on, and
	// a tiling that fits without the staged bias but not with it is
	// refused.
	for _, d := range []int64{64, 128} {
		for _, arch := range []int{80, 86, 89, 90} {
			q := *p
			q.D = d
			if c := attnDefault(&q, arch); c.valid(&q, arch) != nil {
				t.Errorf("D=%d sm_%d: default %v: %v", d, arch, c, c.valid(&q, arch))
			}
		}
	}
	q, big := *p, attnConfig{BlockM: 128, BlockN: 128, Stages: 2, MinBlocks: 1}
	q.D = 128
	plain.D = 128
	if big.valid(plain, 90) != nil || big.valid(&q, 90) == nil {
		t.Errorf("%v: %d bytes without the bias (%v), %d with it (%v); sm_90 allows %d", big,
			big.smem(plain), big.valid(plain, 90), big.smem(&q), big.valid(&q, 90), smemLimit(90))
	}
}

// TestGPUAttentionBias checks the kernel with a bias against the float64
// reference (the bias's values are uniform in [-1, 1), larger than most
// scaled scores, so a bias read wrongly or not at all fails).
func TestGPUAttentionBias(t *testing.T) {
	sub := gputest.NewSubtests(t)
	for i, c := range attnBiasGPUCases() {
		sub.Run(c.name(), func(t *testing.T) {
			sig := c.sig(t)
			p, err := parseAttention(sig)
			if err != nil {
				t.Fatal(err)
			}
			if !p.Bias {
				t.Fatal("no bias parsed")
			}
			gpuEnv(t, func(dev Device, s *cuda.Stream) {
				k := launchExact(t, sig, dev, s, uint64(i+101))
				defer k.Close()
				checkAttention(t, p, k.Instance(0), s, nil)
			})
		})
	}
}

// TestGPUAttentionBiasTraced replays the l1b attention with its bias
// f16[4,1,512,512] and checks sampled heads; its buffers hold the
// signature's bytes, the bias's included.
func TestGPUAttentionBiasTraced(t *testing.T) {
	sig := l1bAttention(t)
	p, err := parseAttention(sig)
	if err != nil {
		t.Fatal(err)
	}
	gpuEnv(t, func(dev Device, s *cuda.Stream) {
		k, err := New(sig, dev, launch.Options{Sets: 1, Seed: 5}, s)
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		if a := k.Approximate(); a != "" {
			t.Fatalf("approximate: %s", a)
		}
		if got := k.Work().Bytes; got != sig.Tensor.Bytes {
			t.Errorf("work %d bytes, want the signature's %d", got, sig.Tensor.Bytes)
		}
		if got, want := k.Work().FLOPs, attnFLOPs(p); got != want {
			t.Errorf("work %d FLOPs, want %d", got, want)
		}
		for i := 0; i < 2; i++ {
			if err := k.Launch(s, 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		checkAttention(t, p, k.Instance(0), s, [][2]int64{{0, 0}, {1, 5}, {2, 17}, {3, 31}})
	})
}

// BenchmarkGPUAttentionBias times the l1b attention with its bias against
// the traced cuDNN time.
func BenchmarkGPUAttentionBias(b *testing.B) {
	sig := l1bAttention(b)
	// Each tiling of attnSweep (the default first), with the traced bias
	// and without it (the same op with its bias argument dropped), so that
	// the bias's own cost shows.
	plain := *sig
	plain.Inputs = slices.Clone(sig.Inputs)
	plain.Inputs[3] = signatures.Input{}
	for _, v := range []struct {
		name string
		sig  *signatures.Signature
	}{{"bias", sig}, {"nobias", &plain}} {
		vp, err := parseAttention(v.sig)
		if err != nil {
			b.Fatal(err)
		}
		for _, cfg := range attnSweep(vp, 90) {
			b.Run(v.name+"/"+cfg.String(), func(b *testing.B) {
				gpuEnv(b, func(dev Device, s *cuda.Stream) {
					if cfg.valid(vp, dev.Compiler.Arch()) != nil {
						b.Skipf("%v does not fit sm_%d", cfg, dev.Compiler.Arch())
					}
					benchAttention(b, dev, s, v.sig, vp, cfg)
				})
			})
		}
	}
}
