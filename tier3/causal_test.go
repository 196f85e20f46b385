package tier3

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kreplay/kreplay/internal/cuda"
)

func TestCausalScores(t *testing.T) {
	for _, c := range []struct {
		name  string
		shape []int64
		dim   int
		want  bool
	}{
		{"prefill scores", []int64{4, 16, 512, 512}, 3, true},
		{"bmm scores", []int64{64, 512, 512}, 2, true},
		{"negative dim resolved", []int64{1, 16, 32, 32}, 3, true},
		{"decode scores", []int64{4, 16, 1, 512}, 3, false},
		{"chunked prefill", []int64{4, 16, 128, 512}, 3, false},
		{"not the last dim", []int64{4, 16, 512, 512}, 2, false},
		{"matrix", []int64{512, 512}, 1, false},
		{"one key", []int64{4, 16, 1, 1}, 3, false},
		{"logits", []int64{4, 250880}, 1, false},
		{"rank 9", []int64{1, 1, 1, 1, 1, 1, 1, 8, 8}, 8, false},
	} {
		if got := (Config{}).causalScores(c.shape, c.dim); got != c.want {
			t.Errorf("%s: (Config{}).causalScores(%v, %d) = %v, want %v", c.name, c.shape, c.dim, got, c.want)
		}
	}
	if (Config{UniformScores: true}).causalScores([]int64{4, 16, 512, 512}, 3) {
		t.Error("causalScores is true with UniformScores")
	}
}

func TestLowestBits(t *testing.T) {
	for _, c := range []struct {
		dtype string
		want  float64
	}{
		{"f16", -65504},
		{"bf16", -3.3895313892515355e38},
		{"f32", -math.MaxFloat32},
		{"f64", -math.MaxFloat64},
	} {
		bits, size, ok := lowestBits(c.dtype)
		if !ok {
			t.Fatalf("%s: not floating-point", c.dtype)
		}
		raw := binary.LittleEndian.AppendUint64(nil, bits)
		if got := elem(raw[:size], 0, c.dtype); got != c.want {
			t.Errorf("%s: lowest %g, want %g", c.dtype, got, c.want)
		}
	}
	for _, d := range []string{"i64", "bool", "u8"} {
		if _, _, ok := lowestBits(d); ok {
			t.Errorf("%s: lowestBits ok", d)
		}
	}
}

func TestMaskShapeLayout(t *testing.T) {
	b := maskShape([]int64{2, 3, 5}, []int64{15, 1, 3})
	if len(b) != 8*(1+2*krMaskMaxDims) {
		t.Fatalf("%d bytes, want %d", len(b), 8*(1+2*krMaskMaxDims))
	}
	got := make([]int64, len(b)/8)
	for i := range got {
		got[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	want := []int64{3, 2, 3, 5, 1, 1, 1, 1, 1, 15, 1, 3, 0, 0, 0, 0, 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("KrMaskShape (-want +got):\n%s", diff)
	}
}

// MaskCausal writes the lowest value exactly where a key is past its
// query, over strided and square or wide layouts, and leaves the rest.
func TestGPUMaskCausal(t *testing.T) {
	for _, c := range []struct {
		name           string
		shape, strides []int64
		dtype          string
	}{
		{"f16 square", []int64{2, 3, 9, 9}, nil, "f16"},
		{"bf16 wide", []int64{2, 5, 12}, nil, "bf16"},
		{"f32 transposed", []int64{3, 7, 7}, []int64{49, 1, 7}, "f32"},
		{"f64 padded rows", []int64{2, 4, 4}, []int64{40, 10, 1}, "f64"},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			gpuEnv(t, func(dev Device, s *cuda.Stream) {
				e := &Env{Compiler: dev.Compiler, Stream: s, SMs: dev.SMs, seed: 77}
				defer e.free()
				st := stridesOr(c.shape, c.strides)
				x, err := e.NewTensor(c.shape, st, c.dtype)
				if err != nil {
					t.Fatal(err)
				}
				if err := e.MaskCausal(x); err != nil {
					t.Fatal(err)
				}
				if checkCausal(t, download(t, x, s), c.shape, c.dtype) == 0 {
					t.Fatal("nothing masked")
				}
			})
		})
	}
}

// checkCausal fails t unless vals, a [..., Q, K] tensor in row-major order,
// holds dtype's lowest value exactly where the key is past the query and
// values in [-1, 1] elsewhere; it returns how many are masked.
func checkCausal(t *testing.T, vals []float64, shape []int64, dtype string) int {
	t.Helper()
	bits, size, _ := lowestBits(dtype)
	lowest := elem(binary.LittleEndian.AppendUint64(nil, bits)[:size], 0, dtype)
	n := len(shape)
	Q, K := shape[n-2], shape[n-1]
	masked := 0
	for i, v := range vals {
		k, q := int64(i)%K, int64(i)/K%Q
		if k-q > K-Q {
			masked++
			if v != lowest {
				t.Fatalf("element %d (q %d, k %d) = %g, want %g", i, q, k, v, lowest)
			}
		} else if v < -1 || v > 1 { // [-1, 1) rounds up to 1 in f16 and bf16
			t.Fatalf("element %d (q %d, k %d) = %g, want it left uniform in [-1, 1]", i, q, k, v)
		}
	}
	return masked
}
