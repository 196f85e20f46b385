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

// FuzzParseAttention feeds ParseAttention the cuDNN SDPA op with fuzzed
// shapes, strides, flags and scale: it returns an error or parameters that
// hold together, never panics, and their pair count stays within the
// score matrix.
func FuzzParseAttention(f *testing.F) {
	f.Add(int64(2), int64(14), int64(14), int64(1024), int64(1024), int64(64), int64(0), "True", "0.125", true)
	f.Add(int64(1), int64(32), int64(8), int64(1), int64(71), int64(128), int64(5), "False", "", false)
	f.Add(int64(4), int64(3), int64(2), int64(7), int64(9), int64(80), int64(-3), "1", "-1", true)
	f.Fuzz(func(t *testing.T, b, h, hk, sq, sk, d, skew int64, causal, scale string, bias bool) {
		q := Input{Type: "c10::Half", Shape: []int64{b, h, sq, d}}
		k := Input{Type: "c10::Half", Shape: []int64{b, hk, sk, d}}
		v := Input{Type: "c10::Half", Shape: []int64{b, hk, sk, d}}
		for _, in := range []*Input{&q, &k, &v} {
			in.Strides = RowMajor(in.Shape)
			in.Strides[0] += skew // a padded or overlapping batch stride
		}
		mask := Input{Value: "None"}
		if bias {
			mask = Input{Type: "c10::Half", Shape: []int64{b, 1, sq, sk}}
			mask.Strides = RowMajor(mask.Shape)
		}
		sig := &Signature{Op: "aten::_scaled_dot_product_cudnn_attention", Inputs: []Input{
			q, k, v, mask, {Type: "Scalar", Value: "False"}, {Type: "Scalar", Value: "0.0"},
			{Type: "Scalar", Value: causal}, {Type: "Scalar", Value: "False"}, {Type: "Scalar", Value: scale}}}
		p, err := ParseAttention(sig)
		if err != nil {
			if !errors.Is(err, ErrAttention) {
				t.Fatalf("error %v does not wrap ErrAttention", err)
			}
			return
		}
		if p.B <= 0 || p.Hq <= 0 || p.Hk <= 0 || p.Sq <= 0 || p.Sk <= 0 || p.D <= 0 || p.Hq%p.Hk != 0 {
			t.Fatalf("accepted %+v", *p)
		}
		if !(p.Scale > 0) {
			t.Fatalf("scale %g", p.Scale)
		}
		if n := p.Pairs(); n < 0 || n > p.Sq*p.Sk {
			t.Fatalf("%d pairs of %d x %d", n, p.Sq, p.Sk)
		}
	})
}

// Pairs in closed form agrees with counting each query's visible keys.
func TestAttentionPairs(t *testing.T) {
	for _, c := range []struct{ sq, sk, off int64 }{
		{1, 1, 0}, {4, 4, 0}, {1, 71, 70}, {7, 9, 2}, {9, 7, -2}, {5, 5, -10}, {5, 5, 10}, {3, 8, -1}, {2048, 2048, 0},
	} {
		p := &Attention{Sq: c.sq, Sk: c.sk, Offset: c.off, Causal: true}
		var want int64
		for i := int64(0); i < c.sq; i++ {
			want += min(max(i+c.off+1, 0), c.sk)
		}
		if got := p.Pairs(); got != want {
			t.Errorf("Pairs(Sq %d, Sk %d, offset %d) = %d, want %d", c.sq, c.sk, c.off, got, want)
		}
	}
}
