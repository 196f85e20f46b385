package signatures

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// The Qwen2-0.5B compiled prefill's cuDNN attention parses as traced:
// q stored [batch, seq, heads, dim], a bf16 mask bias broadcast over
// heads, the traced scale, no logsumexp.
func TestParseAttentionTraced(t *testing.T) {
	f, err := os.Open("testdata/qwen2-0.5b-bf16-compiled_prefill.trace.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set, err := Import(f, "qwen2", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sig *Signature
	for _, s := range set.Signatures {
		if s.ID == "7672b700241a" {
			sig = s
		}
	}
	if sig == nil {
		t.Fatal("no signature 7672b700241a")
	}
	p, err := ParseAttention(sig)
	if err != nil {
		t.Fatal(err)
	}
	want := Attention{B: 2, Hq: 14, Hk: 14, Sq: 1024, Sk: 1024, D: 64, DType: "bf16", Scale: 0.125,
		QStr: [3]int64{917504, 64, 896}, KStr: [3]int64{917504, 65536, 64}, VStr: [3]int64{917504, 65536, 64},
		Bias: true, BiasDType: "bf16", BiasStr: [4]int64{1048576, 0, 1024, 1}}
	if *p != want {
		t.Errorf("got  %+v\nwant %+v", *p, want)
	}
	if got := p.FLOPs(); got != 4*64*1024*1024*2*14 {
		t.Errorf("FLOPs %d", got)
	}
	if AttentionBiasInput(sig.Op) != 3 || !IsAttentionOp(sig.Op) {
		t.Error("the bias is input 3 of _cudnn_attention_forward")
	}
}

func TestParseAttentionRefuses(t *testing.T) {
	tensor := func(dt string, shape ...int64) Input { return Input{Type: dt, Shape: shape} }
	sdpa := func(dt, dropout, causal string, d int64) *Signature {
		return &Signature{Op: "aten::_scaled_dot_product_cudnn_attention", Inputs: []Input{
			tensor(dt, 1, 2, 16, d), tensor(dt, 1, 2, 16, d), tensor(dt, 1, 2, 16, d), {},
			{Type: "Scalar", Value: "False"}, {Type: "Scalar", Value: dropout}, {Type: "Scalar", Value: causal}}}
	}
	for _, tc := range []struct {
		name string
		sig  *Signature
		want string
	}{
		{"not attention", &Signature{Op: "aten::mm"}, "not an attention op"},
		{"f32", sdpa("float", "0.", "True", 64), "f16 and bf16 only"},
		{"dropout", sdpa("c10::Half", "0.1", "True", 64), "dropout"},
		{"no is_causal", sdpa("c10::Half", "0.", "", 64), "is_causal"},
		{"3-d", &Signature{Op: "aten::_scaled_dot_product_cudnn_attention", Inputs: []Input{tensor("c10::Half", 2, 16, 64)}}, "4-d"},
	} {
		_, err := ParseAttention(tc.sig)
		if !errors.Is(err, ErrAttention) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrAttention saying %q", tc.name, err, tc.want)
		}
	}
	// Head dims other than tier 3's 64 and 128 parse: limits of one
	// replay are its own.
	if p, err := ParseAttention(sdpa("c10::Half", "0.", "True", 96)); err != nil || p.D != 96 || !p.Causal {
		t.Errorf("head dim 96: %+v, %v", p, err)
	}
}
