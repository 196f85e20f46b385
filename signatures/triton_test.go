package signatures

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestTritonKind(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"triton_poi_fused_add_0", "poi"},
		{"triton_red_fused_mean_1", "red"},
		{"triton_per_fused_softmax_2", "per"},
		{"triton_tem_fused_mm_3", "tem"},
		{"triton_xyz_fused_add_0", ""},
		{"triton_poi", ""},
		{"aten::add", ""},
		{"", ""},
	} {
		if got := TritonKind(c.name); got != c.want {
			t.Errorf("TritonKind(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func half(shape ...int64) Input  { return Input{Type: "c10::Half", Shape: shape} }
func f32(shape ...int64) Input   { return Input{Type: "float", Shape: shape} }
func scalar(v string) Input      { return Input{Type: "Scalar", Value: v} }
func long(shape ...int64) Input  { return Input{Type: "long int", Shape: shape} }
func mib(n int64) int64          { return n << 20 }
func elems(shape ...int64) int64 { return numel(shape) }

func TestDeriveTriton(t *testing.T) {
	for _, c := range []struct {
		name, kind, op string
		ins            []Input
		numel, bytes   int64
		math           []string
		passes         int
		err            string
	}{
		{name: "pointwise in place", kind: "poi", op: "triton_poi_fused_mul_silu_9",
			ins:   []Input{half(4, 512, 8192), half(2048, 8192), scalar("16777216")},
			numel: 16777216, bytes: 2 * 2 * 16777216, math: []string{"exp"}},
		{name: "a gather reads no more than it indexes", kind: "red", op: "triton_red_fused_embedding_mean_pow_rsqrt_0",
			ins:   []Input{long(4, 512), half(128256, 2048), half(2048), half(4, 512, 2048), scalar("2048"), scalar("2048")},
			numel: 2048, bytes: 8*2048 + 2*2048*2048 + 2*2048 + 2*2048*2048, passes: 2},
		{name: "rotary kernel that reads the angles", kind: "poi", op: "triton_poi_fused_cat_cos_mul_sin_5",
			ins:   []Input{half(2048, 512), f32(32, 512), half(4, 32, 512, 64), scalar("4194304")},
			numel: 4194304, bytes: 2*2048*512 + 4*32*512 + 2*4194304, math: []string{"sin", "cos"}},
		{name: "same name, no angles read", kind: "poi", op: "triton_poi_fused_cat_cos_mul_sin_6",
			ins:   []Input{half(2048, 512), half(4, 32, 512, 64), scalar("4194304")},
			numel: 4194304, bytes: 2*2048*512 + 2*4194304},
		{name: "log_softmax", kind: "per", op: "triton_per_fused__log_softmax_3",
			ins:   []Input{f32(8, 1000), f32(8, 1000), scalar("8"), scalar("1000")},
			numel: 8, bytes: 2 * 4 * 8000, math: []string{"exp", "log"}}, // persistent: one pass
		{name: "plain looped reduction: one pass", kind: "red", op: "triton_red_fused_sum_2",
			ins:   []Input{half(4, 8192), f32(4, 1), scalar("4"), scalar("8192")},
			numel: 4, bytes: 2*4*8192 + 4*4},
		{name: "in-place RMSNorm, weight last (the compiled prefill's final norm)", kind: "red",
			op:    "triton_red_fused__to_copy__unsafe_view_add_mean_mul_pow_rsqrt_16",
			ins:   []Input{half(4, 512, 2048), half(2048, 2048), half(2048), scalar("2048"), scalar("2048")},
			numel: 2048, bytes: 2*2*2048*2048 + 2*2048, passes: 2},
		{name: "size variables before the numels", kind: "poi", op: "triton_poi_fused_add_1",
			ins:   []Input{half(4, 7), half(4, 7), scalar("7"), scalar("28")},
			numel: 28, bytes: 2 * 2 * 28},
		{name: "2-d tiled rotary kernel (a compiled Qwen2 prefill)", kind: "poi", op: "triton_poi_fused_cat_cos_sin_transpose_5",
			ins:   []Input{{Type: "c10::BFloat16", Shape: []int64{2048, 128}}, f32(32, 1024), {Type: "c10::BFloat16", Shape: []int64{2, 14, 1024, 64}}, scalar("28672"), scalar("64")},
			numel: 1835008, bytes: 2*2048*128 + 4*32*1024 + 2*1835008, math: []string{"sin", "cos"}},
		{name: "size variables before xnumel (a compiled decode)", kind: "poi", op: "triton_poi_fused_clone_6",
			ins:   []Input{half(2, 8, 78, 64), half(2, 32, 78, 64), scalar("4992"), scalar("159744"), scalar("77"), scalar("319488")},
			numel: 319488, bytes: 2*elems(2, 8, 78, 64) + 2*319488},
		{name: "no sizes", kind: "red", op: "triton_red_fused_sum_0",
			ins: []Input{half(4, 7), scalar("28")}, err: "want 2 integer size argument(s)"},
		{name: "no tensors", kind: "poi", op: "triton_poi_fused_add_0",
			ins: []Input{scalar("28")}, err: "no tensor arguments"},
		{name: "absurd iteration space", kind: "red", op: "triton_red_fused_sum_0",
			ins: []Input{half(4), scalar("1125899906842624"), scalar("1125899906842624")}, err: "absurd"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := deriveTriton(c.kind, c.op, c.ins)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), c.op) {
					t.Fatalf("err %v, want one naming %s and saying %q", err, c.op, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Numel != c.numel || p.Bytes != c.bytes || !slices.Equal(p.Math, c.math) || p.Passes != c.passes {
				t.Errorf("numel %d bytes %d math %v passes %d, want %d %d %v %d",
					p.Numel, p.Bytes, p.Math, p.Passes, c.numel, c.bytes, c.math, c.passes)
			}
		})
	}
}

func TestTritonMath(t *testing.T) {
	for _, c := range []struct {
		op     string
		angles bool
		want   []string
	}{
		{"triton_poi_fused_add_mul_0", true, nil},
		{"triton_poi_fused_expand_mul_0", true, nil},
		{"triton_poi_fused_gelu_2", false, []string{"erf"}},
		{"triton_poi_fused_sigmoid_tanh_2", false, []string{"exp", "tanh"}},
		{"triton_poi_fused_cos_sin_4", false, nil},
		{"triton_poi_fused_cos_sin_4", true, []string{"sin", "cos"}},
		{"triton_per_fused_softmax_1", false, []string{"exp"}},
		{"triton_poi_add_0", true, nil},
	} {
		if got := tritonMath(c.op, c.angles); !slices.Equal(got, c.want) {
			t.Errorf("tritonMath(%q, %v) = %v, want %v", c.op, c.angles, got, c.want)
		}
	}
}

// Without its binaries, every Triton kernel of a real compiled prefill
// (captured on an H100) gets a stand-in from its arguments: none is left
// unreplayable, each pointwise kernel iterates over as many elements as one
// of its tensors holds (the one it writes), and of the kernels named after
// the rotary embedding's cos and sin only the two that read the angles
// evaluate them. The Qwen2-shaped trace's rotary kernels are tiled in two
// dimensions (ynumel, xnumel).
func TestTritonPlainTrace(t *testing.T) {
	for _, c := range []struct {
		path     string
		silu     int64 // bytes of the pointwise SiLU's two arguments
		maxBytes int64
	}{
		{"../workload/testdata/l1b-compiled_prefill/trace.json.gz", 2 * 2 * elems(4, 512, 8192), mib(64)},
		{"testdata/qwen2-0.5b-bf16-compiled_prefill.trace.json.gz", 2 * 2 * elems(2, 1024, 4864), mib(48)},
	} {
		t.Run(c.path, func(t *testing.T) {
			f, err := os.Open(c.path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			set, err := Import(f, "plain", Options{})
			if err != nil {
				t.Fatal(err)
			}
			trig, twice, red := 0, 0, 0
			for _, s := range set.Signatures {
				kind := TritonKind(s.Op)
				if kind == "" {
					continue
				}
				trig += checkTritonStandIn(t, s, c.silu, c.maxBytes)
				if kind == "red" {
					red++
				}
				if s.Tensor.Passes == 2 {
					twice++
					if kind != "red" || !strings.Contains(s.Op, "rsqrt") {
						t.Errorf("%s: two passes, want them only for the RMSNorm reductions", s.Op)
					}
				}
			}
			if trig != 2 {
				t.Errorf("%d Triton signatures evaluate sin, want 2", trig)
			}
			// Every looped reduction of these models is an RMSNorm that
			// writes its normalized rows.
			if twice != red || red == 0 {
				t.Errorf("%d of %d looped reductions read their rows twice", twice, red)
			}
		})
	}
}

// checkTritonStandIn checks one plain-trace Inductor signature's stand-in
// parameters; it returns 1 when the stand-in evaluates sin.
func checkTritonStandIn(t *testing.T, s *Signature, silu, maxBytes int64) int {
	t.Helper()
	if s.Unreplayable != "" || s.Tensor == nil || s.Tensor.Bytes <= 0 {
		t.Errorf("%s %s: unreplayable %q, tensor %+v", s.ID, s.Op, s.Unreplayable, s.Tensor)
		return 0
	}
	if TritonStandIn(s) == "" {
		t.Errorf("%s: no stand-in note", s.Op)
	}
	if strings.HasSuffix(s.Op, "_mul_silu_9") && s.Tensor.Bytes != silu {
		t.Errorf("%s: %d bytes, want %d", s.Op, s.Tensor.Bytes, silu)
	}
	if s.Tensor.Bytes > maxBytes {
		t.Errorf("%s: %d bytes: more than the prefill's activations", s.Op, s.Tensor.Bytes)
	}
	if TritonKind(s.Op) == "poi" && !slices.ContainsFunc(s.Inputs, func(in Input) bool {
		return in.IsTensor() && in.Numel() == s.Tensor.Numel
	}) {
		t.Errorf("%s: iterates over %d elements, which no tensor argument holds", s.Op, s.Tensor.Numel)
	}
	if slices.Contains(s.Tensor.Math, "sin") {
		return 1
	}
	return 0
}
