package cudnn

import (
	"slices"
	"strings"
	"testing"
)

// opList is a graph's operations as "kind[ mode]" words.
func opList(g *Graph) string {
	var w []string
	for _, o := range g.Ops {
		switch o.Kind {
		case OpPointwise:
			w = append(w, o.Mode.String())
		case OpReduction:
			w = append(w, "reduce_"+o.Reduce.String())
		default:
			w = append(w, string(o.Kind))
		}
	}
	return strings.Join(w, " ")
}

// The lowering of traced shapes: the Qwen2-0.5B compiled prefill's
// _cudnn_attention_forward (bf16 [2,14,1024,64], q in BSHD storage, a
// [2,1,1024,1024] bf16 mask bias, no LSE), a causal prefill with LSE, and
// plain decode attention, composite before cuDNN 9.13.1 and unified from
// it on.
func TestSDPAGraph(t *testing.T) {
	bhsd := func(b, h, s, d int64) Shape {
		return Shape{Dims: [4]int64{b, h, s, d}, Strides: [4]int64{h * s * d, s * d, d, 1}}
	}
	qwenQ := Shape{Dims: [4]int64{2, 14, 1024, 64}, Strides: [4]int64{917504, 64, 896, 1}}
	qwenKV := bhsd(2, 14, 1024, 64)
	mask := &Shape{Dims: [4]int64{2, 1, 1024, 1024}, Strides: [4]int64{1048576, 1048576, 1024, 1}}
	softmax := "reduce_MAX SUB EXP reduce_ADD LOG ADD DIV"
	tests := []struct {
		name    string
		s       SDPA
		version int
		unified bool
		ops     string
		nonVirt []int64
	}{
		{"qwen2 bias", SDPA{DType: DataBFloat16, Q: qwenQ, K: qwenKV, V: qwenKV, O: qwenQ, Bias: mask, BiasType: DataBFloat16, Scale: 0.125},
			91900, false, "matmul MUL ADD " + softmax + " matmul", []int64{UIDQ, UIDScale, UIDK, UIDBias, UIDV, UIDO}},
		{"causal lse", SDPA{DType: DataHalf, Q: bhsd(1, 32, 512, 128), K: bhsd(1, 8, 512, 128), V: bhsd(1, 8, 512, 128),
			O: bhsd(1, 32, 512, 128), Causal: true, Stats: true, Scale: 0.088},
			91900, false, "matmul MUL GEN_INDEX GEN_INDEX CMP_GE BINARY_SELECT " + softmax + " matmul",
			[]int64{UIDQ, UIDScale, UIDK, UIDStats, UIDV, UIDO}},
		{"decode 9.19", SDPA{DType: DataHalf, Q: bhsd(4, 32, 1, 128), K: bhsd(4, 32, 300, 128), V: bhsd(4, 32, 300, 128),
			O: bhsd(4, 32, 1, 128), Scale: 0.088},
			91900, true, "sdpa_fwd", []int64{UIDQ, UIDScale, UIDK, UIDV, UIDO}},
		{"decode 9.10", SDPA{DType: DataHalf, Q: bhsd(4, 32, 1, 128), K: bhsd(4, 32, 300, 128), V: bhsd(4, 32, 300, 128),
			O: bhsd(4, 32, 1, 128), Scale: 0.088},
			91000, false, "matmul MUL " + softmax + " matmul", []int64{UIDQ, UIDScale, UIDK, UIDV, UIDO}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := tc.s.Graph(tc.version)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.check(); err != nil {
				t.Fatal(err)
			}
			if g.Unified != tc.unified {
				t.Errorf("unified %v, want %v", g.Unified, tc.unified)
			}
			if got := opList(g); got != tc.ops {
				t.Errorf("ops\n got %s\nwant %s\n%s", got, tc.ops, g)
			}
			var nv []int64
			for _, x := range g.Tensors {
				if !x.Virtual && !(x.ByValue && x.UID != UIDScale) {
					nv = append(nv, x.UID)
				}
			}
			if !slices.Equal(nv, tc.nonVirt) {
				t.Errorf("non-virtual tensors %v, want %v", nv, tc.nonVirt)
			}
			k := g.Tensor(UIDK)
			q := g.Tensor(UIDQ)
			if !slices.Equal(q.Strides, tc.s.Q.Strides[:]) || q.Type != tc.s.DType {
				t.Errorf("Q %+v", q)
			}
			wantK := tc.s.K
			if !tc.unified { // the backend reads K^T
				wantK.Dims[2], wantK.Dims[3] = wantK.Dims[3], wantK.Dims[2]
				wantK.Strides[2], wantK.Strides[3] = wantK.Strides[3], wantK.Strides[2]
			}
			if !slices.Equal(k.Dims, wantK.Dims[:]) || !slices.Equal(k.Strides, wantK.Strides[:]) {
				t.Errorf("K dims %v strides %v, want %v %v", k.Dims, k.Strides, wantK.Dims, wantK.Strides)
			}
			if sc := g.Tensor(UIDScale); !sc.ByValue || sc.Value != tc.s.Scale || sc.Type != DataFloat {
				t.Errorf("scale %+v", sc)
			}
			if st := g.Tensor(UIDStats); tc.s.Stats && (st == nil || st.Type != DataFloat || st.Dims[3] != 1) {
				t.Errorf("stats %+v", st)
			}
			if !tc.unified {
				// bmm2 reads the probabilities in the I/O type; the scores are float.
				last := g.Ops[len(g.Ops)-1]
				if p := g.Tensor(last.In[0]); p.Type != tc.s.DType || !p.Virtual {
					t.Errorf("bmm2 A %+v", p)
				}
				if s := g.Tensor(g.Ops[0].Out[0]); s.Type != DataFloat || s.Dims[3] != tc.s.K.Dims[2] {
					t.Errorf("bmm1 C %+v", s)
				}
			}
		})
	}
}

// The causal mask is PyTorch's is_causal (top left): row >= col on a
// GEN_INDEX of axis 2 (queries) and 3 (keys), compared in BOOLEAN math,
// selecting -inf elsewhere.
func TestSDPACausalMask(t *testing.T) {
	sh := Shape{Dims: [4]int64{1, 2, 64, 64}, Strides: [4]int64{8192, 4096, 64, 1}}
	g, err := (&SDPA{DType: DataHalf, Q: sh, K: sh, V: sh, O: sh, Causal: true, Scale: 0.125}).Graph(91900)
	if err != nil {
		t.Fatal(err)
	}
	var axes []int64
	for _, o := range g.Ops {
		switch o.Mode {
		case PointwiseGenIndex:
			axes = append(axes, o.Axis)
			if g.Tensor(o.Out[0]).Type != DataInt32 {
				t.Errorf("%s writes %v", o.Name, g.Tensor(o.Out[0]).Type)
			}
		case PointwiseCmpGE:
			if o.Comp != DataBoolean || g.Tensor(o.Out[0]).Type != DataBoolean {
				t.Errorf("%s: math %v, out %v", o.Name, o.Comp, g.Tensor(o.Out[0]).Type)
			}
		case PointwiseBinarySelect:
			if c := g.Tensor(o.In[1]); !c.ByValue || c.Value > -1e38 {
				t.Errorf("select's fill %+v, want -inf", c)
			}
		}
	}
	if !slices.Equal(axes, []int64{2, 3}) {
		t.Errorf("GEN_INDEX axes %v", axes)
	}
}

func TestSDPARejects(t *testing.T) {
	sh := Shape{Dims: [4]int64{1, 2, 64, 64}, Strides: [4]int64{8192, 4096, 64, 1}}
	bad := sh
	bad.Strides[3] = 2
	for _, tc := range []struct {
		name string
		s    SDPA
		want string
	}{
		{"f32", SDPA{DType: DataFloat, Q: sh, K: sh, V: sh, O: sh, Scale: 1}, "HALF and BFLOAT16"},
		{"stride", SDPA{DType: DataHalf, Q: bad, K: sh, V: sh, O: sh, Scale: 1}, "head-dim stride"},
		{"scale", SDPA{DType: DataHalf, Q: sh, K: sh, V: sh, O: sh}, "scale"},
		{"heads", SDPA{DType: DataHalf, Q: Shape{Dims: [4]int64{1, 3, 64, 64}, Strides: sh.Strides}, K: sh, V: sh,
			O: Shape{Dims: [4]int64{1, 3, 64, 64}, Strides: sh.Strides}, Scale: 1}, "query heads"},
	} {
		if _, err := tc.s.Graph(91900); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

// FixSizeOneStrides does what PyTorch's fixSizeOneDimStrideSDPA does,
// literally: the product of the (possibly still zero) strides after it.
func TestFixSizeOneStrides(t *testing.T) {
	for _, tc := range []struct{ dims, st, want [4]int64 }{
		{[4]int64{4, 32, 1, 128}, [4]int64{4096, 128, 0, 1}, [4]int64{4096, 128, 1, 1}},
		{[4]int64{4, 1, 1, 64}, [4]int64{64, 0, 0, 1}, [4]int64{64, 0, 1, 1}},
		{[4]int64{4, 1, 8, 64}, [4]int64{512, 512, 64, 1}, [4]int64{512, 512, 64, 1}},
	} {
		if got := FixSizeOneStrides(tc.dims, tc.st); got != tc.want {
			t.Errorf("FixSizeOneStrides(%v, %v) = %v, want %v", tc.dims, tc.st, got, tc.want)
		}
	}
}
